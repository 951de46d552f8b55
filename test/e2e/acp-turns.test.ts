import assert from "node:assert/strict";
import { describe, test } from "node:test";
import * as acp from "@agentclientprotocol/sdk";
import { AgentHarness } from "../helpers/acp-harness.ts";
import { byPrompt, lastToolResults, lastUserText } from "../helpers/acp-scripts.ts";
import { isSideRequest, startFakeAnthropic } from "../helpers/fake-anthropic.ts";
import { e2e } from "../helpers/fixture.ts";

/** Updates of one session that arrive after `count` (checked after a full request round trip). */
async function noUpdatesAfter(h: AgentHarness, sessionId: string, count: number): Promise<void> {
  await h.agent.request(acp.methods.agent.session.list, {});
  assert.equal(
    h.updates.filter((u) => u.sessionId === sessionId).length,
    count,
    "no session/update after the prompt response",
  );
}

describe("ccb acp: turns, cancellation, queueing, limits, model errors", () => {
  const f = e2e({
    git: true,
    dirs: ["data"],
    model: {
      script: byPrompt(
        (results) => ({ text: `tool said: ${JSON.stringify(results[0]!.content)}` }),
        (p) => {
          if (p.startsWith("hang"))
            return { text: "first words and then nothing more for a long while", hangAfterFirstChunk: true };
          if (p.startsWith("run ")) return { toolUses: [{ name: "bash", input: { command: p.slice(4) } }] };
          if (p.startsWith("loop"))
            return {
              toolUses: [{ name: "todo_write", input: { todos: [{ content: "step", status: "in_progress" }] } }],
              stopReason: "tool_use",
            };
          if (p.startsWith("slow")) return { text: `reply to ${p} `.repeat(8), chunkDelayMs: 5 };
          return { text: `reply to ${p.length > 40 ? `${p.length} chars` : p}` };
        },
      ),
    },
  });
  const dataDir = f.dir("data");

  test("cancel mid-stream: cancelled exactly once, no update after it; queued prompts cancelled too", async () => {
    const h = AgentHarness.start({ apiUrl: f.api.url, dataDir: dataDir });
    try {
      await h.initialize();
      const { sessionId } = await h.newSession(f.ws);
      const running = h.prompt(sessionId, "hang please");
      const queued = h.prompt(sessionId, "queued after the hang");
      await h.waitForUpdate((u) => u.sessionId === sessionId && u.update.sessionUpdate === "agent_message_chunk");
      await h.agent.notify(acp.methods.agent.session.cancel, { sessionId });
      const r = await running;
      const count = h.updates.filter((u) => u.sessionId === sessionId).length;
      assert.equal(r.stopReason, "cancelled");
      assert.equal((await queued).stopReason, "cancelled");
      await noUpdatesAfter(h, sessionId, count);
      // the session still works afterwards
      assert.equal((await h.prompt(sessionId, "after cancel")).stopReason, "end_turn");
      assert.match(h.textOf(sessionId), /reply to after cancel$/);
    } finally {
      await h.close();
    }
  });

  test("cancel mid-permission: the pending request is answered cancelled, the tool never runs", async () => {
    let sawAbort!: () => void;
    const aborted = new Promise<void>((r) => (sawAbort = r));
    const h = AgentHarness.start({
      apiUrl: f.api.url,
      dataDir: dataDir,
      onPermission: (_p, signal) =>
        new Promise((resolve) => {
          signal.addEventListener("abort", () => {
            sawAbort();
            resolve({ outcome: { outcome: "cancelled" } });
          });
        }),
    });
    try {
      await h.initialize();
      const { sessionId } = await h.newSession(f.ws);
      const marker = `${f.ws}/never-created`;
      const running = h.prompt(sessionId, `run touch ${marker}`);
      await h.waitForPermission();
      await h.agent.notify(acp.methods.agent.session.cancel, { sessionId });
      const r = await running;
      assert.equal(r.stopReason, "cancelled");
      const last = h.updatesOf(sessionId, "tool_call_update").at(-1) as acp.ToolCallUpdate;
      assert.equal(last.status, "failed");
      const { existsSync } = await import("node:fs");
      assert.equal(existsSync(marker), false);
      await aborted; // the agent withdrew its permission request ($/cancel_request)
    } finally {
      await h.close();
    }
  });

  test("cancel while a command runs kills its process", async () => {
    const h = AgentHarness.start({
      apiUrl: f.api.url,
      dataDir: dataDir,
      onPermission: () => ({ outcome: { outcome: "selected", optionId: "allow_once" } }),
    });
    const pidFile = `${f.ws}/sleep.pid`;
    try {
      await h.initialize();
      const { sessionId } = await h.newSession(f.ws);
      const running = h.prompt(sessionId, `run echo $$ > ${pidFile}; exec sleep 300`);
      await h.waitForUpdate(
        (u) =>
          u.sessionId === sessionId &&
          u.update.sessionUpdate === "tool_call_update" &&
          (u.update as acp.ToolCallUpdate).status === "in_progress",
      );
      const { existsSync, readFileSync } = await import("node:fs");
      while (!existsSync(pidFile) || !readFileSync(pidFile, "utf8").trim()) await new Promise((r) => setTimeout(r, 20));
      const pid = Number(readFileSync(pidFile, "utf8").trim());
      await h.agent.notify(acp.methods.agent.session.cancel, { sessionId });
      assert.equal((await running).stopReason, "cancelled");
      const alive = () => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      for (let i = 0; i < 500 && alive(); i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(alive(), false, "the command's process is gone");
    } finally {
      await h.close();
    }
  });

  test("two queued prompts run in order (FIFO)", async () => {
    const h = AgentHarness.start({ apiUrl: f.api.url, dataDir: dataDir });
    try {
      await h.initialize();
      const { sessionId } = await h.newSession(f.ws);
      const before = f.api.requests.length;
      const first = h.prompt(sessionId, "slow one");
      const second = h.prompt(sessionId, "slow two");
      const [a, b] = await Promise.all([first, second]);
      assert.equal(a.stopReason, "end_turn");
      assert.equal(b.stopReason, "end_turn");
      const texts = f.api.requests
        .slice(before)
        .filter((r) => !isSideRequest(r.body))
        .map((r) => lastUserText(r.body));
      assert.deepEqual(texts, ["slow one", "slow two"]);
      const text = h.textOf(sessionId);
      assert.ok(text.indexOf("reply to slow one") < text.indexOf("reply to slow two"));
      assert.ok(
        text.lastIndexOf("reply to slow one") < text.indexOf("reply to slow two"),
        "the second reply starts after the first ends",
      );
    } finally {
      await h.close();
    }
  });

  test("a command printing to stdout does not corrupt the stream; a 5 MB prompt goes through", async () => {
    const h = AgentHarness.start({
      apiUrl: f.api.url,
      dataDir: dataDir,
      onPermission: () => ({ outcome: { outcome: "selected", optionId: "allow_once" } }),
    });
    try {
      await h.initialize();
      const { sessionId } = await h.newSession(f.ws);
      const r = await h.prompt(
        sessionId,
        `run echo NOISE-ON-STDOUT; printf '{"jsonrpc":"2.0","method":"fake"}\\n'; echo err-text >&2`,
      );
      assert.equal(r.stopReason, "end_turn");
      assert.deepEqual(h.strayStdout, []);
      const results = lastToolResults(f.api.requests.at(-1)!.body);
      assert.match(JSON.stringify(results[0]!.content), /NOISE-ON-STDOUT/);
      const call = h.updatesOf(sessionId, "tool_call").at(-1) as acp.ToolCall;
      assert.equal(call.kind, "execute");
      assert.match(call.title, /echo NOISE-ON-STDOUT/);

      const big = "x".repeat(5 * 1024 * 1024);
      const r2 = await h.prompt(sessionId, big);
      assert.equal(r2.stopReason, "end_turn");
      assert.match(h.textOf(sessionId), new RegExp(`reply to ${big.length} chars`));
      assert.equal(lastUserText(f.api.requests.at(-1)!.body).length, big.length);
    } finally {
      await h.close();
    }
  });

  test("the turn limit ends with max_turn_requests; todo_write drives plan updates", async () => {
    const h = AgentHarness.start({ apiUrl: f.api.url, dataDir: dataDir, env: { CCB_MAX_TURNS: "3" } });
    try {
      await h.initialize();
      const { sessionId } = await h.newSession(f.ws);
      const r = await h.prompt(sessionId, "loop forever");
      assert.equal(r.stopReason, "end_turn");
      const plan = h.updatesOf(sessionId, "plan")[0] as {
        entries: { content: string; status: string; priority: string }[];
      };
      assert.deepEqual(plan.entries, [{ content: "step", status: "in_progress", priority: "medium" }]);
    } finally {
      await h.close();
    }
    const looping = await startFakeAnthropic({
      script: () => ({ toolUses: [{ name: "glob", input: { pattern: "*.none" } }] }),
    });
    const h2 = AgentHarness.start({ apiUrl: looping.url, dataDir: dataDir, env: { CCB_MAX_TURNS: "3" } });
    try {
      await h2.initialize();
      const { sessionId } = await h2.newSession(f.ws);
      const r = await h2.prompt(sessionId, "go");
      assert.equal(r.stopReason, "max_turn_requests");
      assert.equal(looping.requests.length, 3);
    } finally {
      await h2.close();
      await looping.close();
    }
  });

  test("retries 529/429 with backoff; a missing key or an unreachable API is a clear message, not a hang", async () => {
    let n = 0;
    const flaky = await startFakeAnthropic({
      script: () => {
        n++;
        if (n === 1) return { status: 529, error: { type: "overloaded_error", message: "Overloaded" } };
        if (n === 2) return { status: 429, error: { type: "rate_limit_error", message: "slow down" } };
        return { text: "finally" };
      },
    });
    const h = AgentHarness.start({ apiUrl: flaky.url, dataDir: dataDir });
    try {
      await h.initialize();
      const { sessionId } = await h.newSession(f.ws);
      assert.equal((await h.prompt(sessionId, "hi")).stopReason, "end_turn");
      assert.equal(h.textOf(sessionId), "finally");
      assert.equal(flaky.requests.length, 3);
    } finally {
      await h.close();
    }
    const closedPort = flaky.url;
    await flaky.close();

    const noKey = AgentHarness.start({ dataDir: dataDir, env: { ANTHROPIC_BASE_URL: closedPort } });
    try {
      const init = await noKey.initialize();
      assert.deepEqual(
        init.authMethods?.map((m) => m.id),
        ["anthropic-api-key"],
      );
      // the env_var fields as written on the wire (the SDK 2.4 client does not model them yet)
      const wire = noKey.frames.find((f) => f.result?.authMethods)!.result.authMethods[0];
      assert.equal(wire.type, "env_var");
      assert.deepEqual(
        wire.vars.map((v: { name: string }) => v.name),
        ["ANTHROPIC_API_KEY"],
      );
      await assert.rejects(
        noKey.newSession(f.ws),
        (e: acp.RequestError) => e.code === -32000 && /No Anthropic API key.*ANTHROPIC_API_KEY/s.test(e.message),
      );
      await assert.rejects(
        noKey.agent.request(acp.methods.agent.authenticate, { methodId: "anthropic-api-key" }),
        (e: acp.RequestError) => e.code === -32000,
      );
      await assert.rejects(
        noKey.agent.request(acp.methods.agent.authenticate, { methodId: "oauth-please" }),
        (e: acp.RequestError) => e.code === -32602 && /Unknown auth method/.test(e.message),
      );
    } finally {
      await noKey.close();
    }
    const down = AgentHarness.start({
      dataDir: dataDir,
      env: { ANTHROPIC_BASE_URL: closedPort, ANTHROPIC_API_KEY: "sk-ant-test", CCB_MAX_RETRIES: "2" },
    });
    try {
      await down.initialize();
      assert.deepEqual(await down.agent.request(acp.methods.agent.authenticate, { methodId: "anthropic-api-key" }), {});
      const { sessionId } = await down.newSession(f.ws);
      await assert.rejects(
        down.prompt(sessionId, "hi"),
        (e: acp.RequestError) =>
          e.code === -32603 &&
          /Cannot reach the Anthropic API at http:\/\/127\.0\.0\.1:\d+.*gave up after 3 attempts/.test(e.message) &&
          (e.data as { code: string }).code === "MODEL_UNAVAILABLE",
      );
      assert.match(down.textOf(sessionId), /Cannot reach the Anthropic API/, "the chat shows the reason too");
      // the session lives on: the next prompt is answered (with the same failure)
      await assert.rejects(down.prompt(sessionId, "again"), (e: acp.RequestError) => e.code === -32603);
    } finally {
      await down.close();
    }
    const refusing = await startFakeAnthropic({
      script: () => ({ status: 401, error: { type: "authentication_error", message: "invalid x-api-key" } }),
    });
    const denied = AgentHarness.start({ apiUrl: refusing.url, dataDir: dataDir });
    try {
      await denied.initialize();
      const { sessionId } = await denied.newSession(f.ws);
      await assert.rejects(
        denied.prompt(sessionId, "hi"),
        (e: acp.RequestError) =>
          e.code === -32000 && /refused the credentials \(401\).*invalid x-api-key/.test(e.message),
      );
      assert.equal(refusing.requests.length, 1, "a 401 is not retried");
    } finally {
      await denied.close();
      await refusing.close();
    }
  });
});
