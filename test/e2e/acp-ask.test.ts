import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import * as acp from "@agentclientprotocol/sdk";
import { AgentHarness, tempDataDir } from "../helpers/acp-harness.ts";
import { type FakeAnthropic, type RecordedRequest, startFakeAnthropic } from "../helpers/fake-anthropic.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

type Behaviour = (
  params: acp.CreateElicitationRequest,
  signal: AbortSignal,
) => acp.CreateElicitationResponse | Promise<acp.CreateElicitationResponse>;

const toolNames = (r: RecordedRequest): string[] => (r.body.tools ?? []).map((t: { name: string }) => t.name);
const lastToolResult = (r: RecordedRequest): string =>
  JSON.stringify((r.body.messages.at(-1)?.content ?? []).filter((c: { type: string }) => c.type === "tool_result"));

describe("ccb acp: asking the person (ask_person -> elicitation/create)", () => {
  let api: FakeAnthropic;
  const data = tempDataDir();
  const project = tmpdirFixture({ git: true });
  before(async () => {
    api = await startFakeAnthropic({
      script: ({ body }) => {
        const last = body.messages?.at(-1);
        const hasResult = Array.isArray(last?.content) && last.content.some((c: any) => c.type === "tool_result");
        if (!body.tools) return { text: "Title" };
        if (hasResult) return { text: "Thanks." };
        if (!body.tools.some((t: { name: string }) => t.name === "ask_person")) return { text: "No way to ask." };
        const free = JSON.stringify(last).includes("free text");
        return {
          toolUses: [
            {
              name: "ask_person",
              input: free
                ? { question: "What is the ticket number?" }
                : { question: "Which colour?", choices: ["red", "blue"] },
            },
          ],
        };
      },
    });
  });
  after(async () => {
    await api.close();
    data.cleanup();
    project.cleanup();
  });

  test("with the form capability: accepted, declined, cancelled by the person, and withdrawn when the turn is cancelled", async () => {
    const behaviours: Behaviour[] = [];
    const asked: acp.CreateElicitationRequest[] = [];
    const withdrawn: boolean[] = [];
    let onAsked: (() => void) | undefined;
    const h = AgentHarness.start({
      apiUrl: api.url,
      dataDir: data.path,
      configure: (app) =>
        app.onRequest(acp.methods.client.elicitation.create, async ({ params, signal }) => {
          asked.push(params);
          onAsked?.();
          const b = behaviours.shift();
          assert.ok(b, "an elicitation was expected");
          const r = await b(params, signal);
          withdrawn.push(signal.aborted);
          return r;
        }),
    });
    try {
      await h.initialize({ elicitation: { form: {} } });
      const { sessionId } = await h.newSession(project.path);

      // accepted (a choice)
      behaviours.push(() => ({ action: "accept", content: { answer: "blue" } }));
      let before = api.requests.length;
      assert.equal((await h.prompt(sessionId, "pick a colour")).stopReason, "end_turn");
      let mine = api.requests.slice(before).filter((r) => r.body.tools);
      assert.ok(toolNames(mine[0]!).includes("ask_person"), "offered with the capability");
      const q = asked.at(-1)! as any;
      assert.equal(q.sessionId, sessionId);
      assert.equal(q.mode, "form");
      assert.equal(q.message, "Which colour?");
      assert.ok(q.toolCallId, "tied to the tool call");
      assert.deepEqual(
        q.requestedSchema.properties.answer.oneOf.map((o: { const: string }) => o.const),
        ["red", "blue"],
      );
      assert.deepEqual(q.requestedSchema.required, ["answer"]);
      assert.match(lastToolResult(mine.at(-1)!), /The person answered: blue/);

      // accepted (free text)
      behaviours.push((p) => {
        assert.equal((p as any).requestedSchema.properties.answer.oneOf, undefined);
        return { action: "accept", content: { answer: "CCB-42" } };
      });
      before = api.requests.length;
      await h.prompt(sessionId, "ask me in free text");
      mine = api.requests.slice(before).filter((r) => r.body.tools);
      assert.match(lastToolResult(mine.at(-1)!), /The person answered: CCB-42/);

      // declined
      behaviours.push(() => ({ action: "decline" }));
      before = api.requests.length;
      assert.equal((await h.prompt(sessionId, "pick again")).stopReason, "end_turn");
      mine = api.requests.slice(before).filter((r) => r.body.tools);
      assert.match(lastToolResult(mine.at(-1)!), /declined to answer/);

      // cancelled by the person
      behaviours.push(() => ({ action: "cancel" }));
      before = api.requests.length;
      await h.prompt(sessionId, "pick once more");
      mine = api.requests.slice(before).filter((r) => r.body.tools);
      assert.match(lastToolResult(mine.at(-1)!), /dismissed the question without answering \(cancelled\)/);
      assert.deepEqual(withdrawn, [false, false, false, false]);

      // the turn is cancelled while the question is open: the agent withdraws it ($/cancel_request)
      behaviours.push(
        (_p, signal) =>
          new Promise((resolve) =>
            signal.addEventListener("abort", () => resolve({ action: "cancel" }), { once: true }),
          ),
      );
      const open = new Promise<void>((r) => (onAsked = r));
      const running = h.prompt(sessionId, "pick, then be cancelled");
      await open;
      await h.agent.notify(acp.methods.agent.session.cancel, { sessionId });
      assert.equal((await running).stopReason, "cancelled");
      // the client's handler saw its request cancelled
      while (withdrawn.length < 5) await new Promise((r) => setTimeout(r, 20));
      assert.equal(withdrawn[4], true, "$/cancel_request reached the client");
      const call = h
        .updatesOf(sessionId, "tool_call_update")
        .filter((u: any) => u.toolCallId === (asked.at(-1) as any).toolCallId)
        .at(-1) as any;
      assert.equal(call.status, "failed");
    } finally {
      await h.close();
    }
  });

  test("without the capability the tool is not offered and nothing is asked", async () => {
    let asked = 0;
    const h = AgentHarness.start({
      apiUrl: api.url,
      dataDir: data.path,
      configure: (app) =>
        app.onRequest(acp.methods.client.elicitation.create, () => {
          asked++;
          return { action: "decline" };
        }),
    });
    try {
      await h.initialize({ fs: { readTextFile: true, writeTextFile: true }, terminal: true });
      const { sessionId } = await h.newSession(project.path);
      const before = api.requests.length;
      assert.equal((await h.prompt(sessionId, "pick a colour")).stopReason, "end_turn");
      const mine = api.requests.slice(before).filter((r) => r.body.tools);
      assert.ok(mine.length > 0);
      for (const r of mine) assert.ok(!toolNames(r).includes("ask_person"), "not offered");
      assert.ok(toolNames(mine[0]!).includes("read"), "positive control: the other tools are offered");
      assert.match(h.textOf(sessionId), /No way to ask/);
      assert.equal(asked, 0);
    } finally {
      await h.close();
    }
  });

  test("an MCP server of the session that asks (MCP elicitation) reaches the person the same way", async () => {
    const asked: acp.CreateElicitationRequest[] = [];
    const answers: acp.CreateElicitationResponse[] = [
      { action: "accept", content: { confirm: true } },
      { action: "decline" },
    ];
    const mcpApi = await startFakeAnthropic({
      script: ({ body }) => {
        const last = body.messages?.at(-1);
        const hasResult = Array.isArray(last?.content) && last.content.some((c: any) => c.type === "tool_result");
        if (!body.tools) return { text: "Title" };
        if (hasResult) return { text: "Deployed or not." };
        return { toolUses: [{ name: "mcp__asker__deploy", input: { target: "staging" } }] };
      },
    });
    const h = AgentHarness.start({
      apiUrl: mcpApi.url,
      dataDir: data.path,
      // the MCP tool changes things: the person allows the call, then the server asks its question
      onPermission: () => ({ outcome: { outcome: "selected" as const, optionId: "allow_once" } }),
      configure: (app) =>
        app.onRequest(acp.methods.client.elicitation.create, ({ params }) => {
          asked.push(params);
          const a = answers.shift();
          assert.ok(a, "an elicitation was expected");
          return a;
        }),
    });
    try {
      await h.initialize({ elicitation: { form: {} } });
      const server = {
        name: "asker",
        command: process.execPath,
        args: [join(import.meta.dirname, "../fixtures/mcp-asking-server.mjs")],
        env: [],
      };
      const { sessionId } = await h.newSession(project.path, [server]);
      for (const expected of [/elicitation accept \{\\"confirm\\":true\}/, /elicitation decline/]) {
        const before = mcpApi.requests.length;
        assert.equal((await h.prompt(sessionId, "deploy it")).stopReason, "end_turn");
        const mine = mcpApi.requests.slice(before).filter((r) => r.body.tools);
        assert.match(lastToolResult(mine.at(-1)!), expected);
      }
      assert.equal(asked.length, 2);
      const q = asked[0] as any;
      assert.equal(q.sessionId, sessionId);
      assert.equal(q.message, "Deploy to staging?");
      assert.ok(q.toolCallId, "tied to the tool call that runs on the MCP server");
      assert.deepEqual(q.requestedSchema.required, ["confirm"]);
    } finally {
      await h.close();
      await mcpApi.close();
    }
  });
});
