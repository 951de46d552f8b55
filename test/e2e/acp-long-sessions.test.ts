import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import * as acp from "@agentclientprotocol/sdk";
import { AgentHarness, tempDataDir } from "../helpers/acp-harness.ts";
import { lastToolResults, lastUserText } from "../helpers/acp-scripts.ts";
import { type FakeAnthropic, isSideRequest, type Reply, startFakeAnthropic } from "../helpers/fake-anthropic.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

const allowOnce = () => ({ outcome: { outcome: "selected" as const, optionId: "allow_once" } });
const texts = (body: any): string => JSON.stringify(body.messages);

describe("ccb acp: long sessions (/compact, /context, /cost), session options, richer tool calls, usage", () => {
  let api: FakeAnthropic;
  const data = tempDataDir();
  const project = tmpdirFixture({ git: true });
  const extra = tmpdirFixture();
  const outside = tmpdirFixture();
  before(async () => {
    writeFileSync(join(project.path, "notes.txt"), "alpha\nbeta\ngamma needle\ndelta\n");
    writeFileSync(join(extra.path, "shared.txt"), "from the extra root\n");
    writeFileSync(join(outside.path, "secret.txt"), "not yours\n");
    api = await startFakeAnthropic({
      script: ({ body }): Reply => {
        if (isSideRequest(body))
          return /Summarize the conversation/.test(lastUserText(body))
            ? { text: "SUMMARY: the user said first-words; nothing else." }
            : { text: "Title" };
        const results = lastToolResults(body);
        if (results.length > 0)
          return {
            text: `result: ${JSON.stringify(results.map((r) => r.content))}`,
            usage: { input_tokens: 1000, output_tokens: 100 },
          };
        const p = lastUserText(body);
        if (p === "read notes") return { toolUses: [{ name: "read", input: { path: "notes.txt", offset: 2 } }] };
        if (p === "edit notes")
          return {
            toolUses: [{ name: "edit", input: { path: "notes.txt", old_string: "delta", new_string: "DELTA" } }],
          };
        if (p === "grep notes") return { toolUses: [{ name: "grep", input: { pattern: "needle" } }] };
        if (p.startsWith("read ")) return { toolUses: [{ name: "read", input: { path: p.slice(5) } }] };
        if (p === "loop") return { toolUses: [{ name: "glob", input: { pattern: "*.none" } }] };
        return { text: `answer to ${p}`, usage: { input_tokens: 1000, output_tokens: 100 } };
      },
    });
  });
  after(async () => {
    await api.close();
    for (const d of [data, project, extra, outside]) d.cleanup();
  });

  test("/compact summarizes and continues; the file stays append-only and load replays everything", async () => {
    let h = AgentHarness.start({ apiUrl: api.url, dataDir: data.path });
    let sessionId: string;
    const file = () => readFileSync(join(data.path, "sessions", `${sessionId}.jsonl`), "utf8");
    try {
      await h.initialize();
      ({ sessionId } = await h.newSession(project.path));
      const cmds = (
        await h.waitForUpdate(
          (u) => u.sessionId === sessionId && u.update.sessionUpdate === "available_commands_update",
        )
      ).update as acp.AvailableCommandsUpdate;
      for (const name of ["compact", "context", "cost", "clear", "init", "review", "security-review"])
        assert.ok(
          cmds.availableCommands.some((c) => c.name === name),
          name,
        );

      await h.prompt(sessionId, "first-words");
      const beforeCompact = file();
      const r = await h.prompt(sessionId, "/compact");
      assert.equal(r.stopReason, "end_turn");
      const summaryRequest = api.requests.at(-1)!.body;
      assert.ok(isSideRequest(summaryRequest), "the summary request offers no tools");
      assert.match(texts(summaryRequest), /first-words/, "the summary request carries the conversation");
      assert.match(h.textOf(sessionId), /Compacted \d+ messages .*SUMMARY: the user said first-words/s);
      assert.ok(file().startsWith(beforeCompact), "compacting only appended to the session file");

      await h.prompt(sessionId, "second-words");
      const next = api.requests.at(-1)!.body;
      assert.match(texts(next), /SUMMARY: the user said first-words/);
      assert.doesNotMatch(
        texts(next),
        /answer to first-words/,
        "the model continues from the summary, not the old turns",
      );
    } finally {
      await h.close();
    }

    h = AgentHarness.start({ apiUrl: api.url, dataDir: data.path });
    try {
      await h.initialize();
      await h.agent.request(acp.methods.agent.session.load, { sessionId, cwd: project.path, mcpServers: [] });
      const users = h
        .updatesOf(sessionId, "user_message_chunk")
        .map((u) => (u as { content: { text: string } }).content.text);
      assert.deepEqual(
        users,
        ["first-words", "/compact", "second-words"],
        "load replays every turn, before and after the compaction",
      );
      assert.match(h.textOf(sessionId), /answer to first-words.*Compacted.*answer to second-words/s);
      await h.prompt(sessionId, "third-words");
      const after = api.requests.at(-1)!.body;
      assert.match(texts(after), /SUMMARY: the user said first-words/, "a loaded session continues from the summary");
      assert.match(texts(after), /second-words/);
      assert.doesNotMatch(texts(after), /answer to first-words/);

      await h.prompt(sessionId, "/clear");
      await h.prompt(sessionId, "fresh start");
      assert.equal(api.requests.at(-1)!.body.messages.length, 1, "after /clear the model sees only the new prompt");
    } finally {
      await h.close();
    }
  });

  test("/context and /cost report the window and the spend; usage_update has cost for a priced model; PromptResponse has usage", async () => {
    const h = AgentHarness.start({
      apiUrl: api.url,
      dataDir: data.path,
      env: { ANTHROPIC_MODEL: "claude-sonnet-4-5" },
    });
    try {
      await h.initialize();
      const { sessionId } = await h.newSession(project.path);
      const r = await h.prompt(sessionId, "hello");
      assert.deepEqual((r as { usage?: unknown }).usage, {
        totalTokens: 1100,
        inputTokens: 1000,
        outputTokens: 100,
        cachedReadTokens: 0,
        cachedWriteTokens: 0,
      });
      const usage = h.updatesOf(sessionId, "usage_update").at(-1) as acp.UsageUpdate;
      assert.equal(usage.size, 200_000);
      assert.equal(usage.used, 1100);
      assert.deepEqual(usage.cost, { amount: 0.0045, currency: "USD" }, "1000 input at $3/M + 100 output at $15/M");
      await h.prompt(sessionId, "again");
      assert.deepEqual(
        (h.updatesOf(sessionId, "usage_update").at(-1) as acp.UsageUpdate).cost,
        { amount: 0.009, currency: "USD" },
        "the session's total",
      );

      const requests = api.requests.length;
      await h.prompt(sessionId, "/context");
      await h.prompt(sessionId, "/cost");
      assert.equal(api.requests.length, requests, "/context and /cost ask no model");
      const text = h.textOf(sessionId);
      assert.match(text, /Context window of claude-sonnet-4-5: 200000 tokens/);
      assert.match(text, /\| System prompt \| \d+ \|/);
      assert.match(text, /\| Tool definitions \(\d+\) \| \d+ \|/);
      assert.match(text, /The last model request used 1100 tokens/);
      assert.match(text, /Session tokens: 2000 input, 200 output.*Cost: \$0\.0090/);
    } finally {
      await h.close();
    }
    // a model without a known price: no cost, never a made-up one
    const u = AgentHarness.start({
      apiUrl: api.url,
      dataDir: data.path,
      env: { ANTHROPIC_MODEL: "claude-unpriced-9" },
    });
    try {
      await u.initialize();
      const { sessionId } = await u.newSession(project.path);
      await u.prompt(sessionId, "hello");
      assert.equal((u.updatesOf(sessionId, "usage_update").at(-1) as acp.UsageUpdate).cost, undefined);
    } finally {
      await u.close();
    }
  });

  test("tool calls carry lines: read (content shown), edit (first changed line), grep hits", async () => {
    const h = AgentHarness.start({ apiUrl: api.url, dataDir: data.path, onPermission: allowOnce });
    try {
      await h.initialize();
      const { sessionId } = await h.newSession(project.path);
      const notes = join(project.path, "notes.txt");
      const finalOf = () => h.updatesOf(sessionId, "tool_call_update").at(-1) as acp.ToolCallUpdate;

      await h.prompt(sessionId, "read notes");
      const start = h.updatesOf(sessionId, "tool_call").at(-1) as acp.ToolCall;
      assert.deepEqual(start.locations, [{ path: notes, line: 2 }]);
      const read = finalOf();
      assert.equal(read.status, "completed");
      assert.deepEqual(read.content, [
        { type: "content", content: { type: "text", text: "```\nbeta\ngamma needle\ndelta\n\n```" } },
      ]);

      await h.prompt(sessionId, "edit notes");
      const editCall = h.permissionRequests.at(-1)!.toolCall;
      assert.deepEqual(editCall.locations, [{ path: notes, line: 4 }], "the permission request already names the line");
      assert.deepEqual(finalOf().locations, [{ path: notes, line: 4 }]);

      await h.prompt(sessionId, "grep notes");
      assert.deepEqual(finalOf().locations, [{ path: notes, line: 3 }]);
    } finally {
      await h.close();
    }
  });

  test("session options: _meta system prompt (replace, append), max turns, additionalDirectories; kept across resume", async () => {
    const h = AgentHarness.start({ apiUrl: api.url, dataDir: data.path, onPermission: allowOnce });
    try {
      await h.initialize();
      const replaced = await h.agent.request(acp.methods.agent.session.new, {
        cwd: project.path,
        mcpServers: [],
        _meta: { systemPrompt: "You are a pirate." },
      });
      await h.prompt(replaced.sessionId, "hello");
      assert.equal(api.requests.at(-1)!.body.system, "You are a pirate.");

      const appended = await h.agent.request(acp.methods.agent.session.new, {
        cwd: project.path,
        mcpServers: [],
        _meta: { systemPrompt: { append: "Answer in French." } },
      });
      await h.prompt(appended.sessionId, "hello");
      const sys = api.requests.at(-1)!.body.system as string;
      assert.match(sys, /^You are ccb/);
      assert.match(sys, /\n\nAnswer in French\.$/);

      // acpx sends --max-turns as _meta.claudeCode.options.maxTurns
      const capped = await h.agent.request(acp.methods.agent.session.new, {
        cwd: project.path,
        mcpServers: [],
        _meta: { claudeCode: { options: { maxTurns: 1 } } },
      });
      const n = api.requests.length;
      const r = await h.prompt(capped.sessionId, "loop");
      assert.equal(r.stopReason, "max_turn_requests");
      assert.equal(api.requests.length - n, 1, "exactly one model request");

      const wide = await h.agent.request(acp.methods.agent.session.new, {
        cwd: project.path,
        mcpServers: [],
        additionalDirectories: [extra.path],
      });
      await h.prompt(wide.sessionId, `read ${join(extra.path, "shared.txt")}`);
      assert.match(JSON.stringify(lastToolResults(api.requests.at(-1)!.body)), /from the extra root/);
      assert.match(api.requests.at(-2)!.body.system, new RegExp(`Also in the workspace: ${extra.path}`));
      // attack: a directory that was not added stays outside
      await h.prompt(wide.sessionId, `read ${join(outside.path, "secret.txt")}`);
      const denied = lastToolResults(api.requests.at(-1)!.body)[0]!;
      assert.equal(denied.is_error, true);
      assert.doesNotMatch(JSON.stringify(denied), /not yours/);
      await assert.rejects(
        h.agent.request(acp.methods.agent.session.new, {
          cwd: project.path,
          mcpServers: [],
          additionalDirectories: ["relative/dir"],
        }),
        (e: acp.RequestError) => e.code === -32602,
      );
      await assert.rejects(
        h.agent.request(acp.methods.agent.session.new, {
          cwd: project.path,
          mcpServers: [],
          additionalDirectories: [join(extra.path, "missing")],
        }),
        (e: acp.RequestError) => e.code === -32602,
      );

      // a resumed session keeps its options (no _meta this time)
      await h.agent.request(acp.methods.agent.session.close, { sessionId: replaced.sessionId });
      await h.agent.request(acp.methods.agent.session.resume, { sessionId: replaced.sessionId, cwd: project.path });
      await h.prompt(replaced.sessionId, "hello again");
      assert.equal(api.requests.at(-1)!.body.system, "You are a pirate.");
      const resumedWide = await h.agent
        .request(acp.methods.agent.session.close, { sessionId: wide.sessionId })
        .then(() =>
          h.agent.request(acp.methods.agent.session.resume, { sessionId: wide.sessionId, cwd: project.path }),
        );
      assert.ok(resumedWide);
      await h.prompt(wide.sessionId, `read ${join(extra.path, "shared.txt")}`);
      assert.match(JSON.stringify(lastToolResults(api.requests.at(-1)!.body)), /from the extra root/);
    } finally {
      await h.close();
    }
  });

  test("command files added during a session are announced with available_commands_update", async () => {
    const h = AgentHarness.start({ apiUrl: api.url, dataDir: data.path });
    try {
      await h.initialize();
      const { sessionId } = await h.newSession(project.path);
      await h.waitForUpdate((u) => u.sessionId === sessionId && u.update.sessionUpdate === "available_commands_update");
      mkdirSync(join(project.path, ".ccb", "commands"), { recursive: true });
      writeFileSync(
        join(project.path, ".ccb", "commands", "ship.md"),
        "---\ndescription: Ship it\n---\nShip $ARGUMENTS\n",
      );
      await h.prompt(sessionId, "hello");
      const updates = h.updatesOf(sessionId, "available_commands_update") as acp.AvailableCommandsUpdate[];
      assert.equal(updates.length, 2);
      assert.ok(updates[1]!.availableCommands.some((c) => c.name === "ship" && c.description === "Ship it"));
    } finally {
      await h.close();
    }
  });
});
