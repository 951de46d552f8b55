import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as acp from "@agentclientprotocol/sdk";
import { AgentHarness, tempDataDir } from "../helpers/acp-harness.ts";
import { lastToolResults, lastUserText } from "../helpers/acp-scripts.ts";
import { type FakeAnthropic, isSideRequest, type Reply, startFakeAnthropic } from "../helpers/fake-anthropic.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

type Kinds = string[];
const kinds = (h: AgentHarness, sessionId: string): Kinds => h.updatesOf(sessionId).map((u) => u.sessionUpdate);

describe("ccb acp: session store (load, resume, fork, list, close, delete, kill -9)", () => {
  let api: FakeAnthropic;
  const data = tempDataDir();
  const project = tmpdirFixture({ git: true });
  const other = tmpdirFixture();
  before(async () => {
    api = await startFakeAnthropic({
      script: ({ body }): Reply => {
        if (isSideRequest(body)) return { text: "Title" };
        if (lastToolResults(body).length > 0) return { text: "listed the files" };
        const p = lastUserText(body);
        if (p.startsWith("hang")) return { text: "partial answer that never finishes", hangAfterFirstChunk: true };
        if (p.startsWith("find")) return { toolUses: [{ name: "glob", input: { pattern: "*.md" } }] };
        return { text: `answer to ${p}` };
      },
    });
  });
  after(async () => {
    await api.close();
    data.cleanup();
    project.cleanup();
    other.cleanup();
  });

  test("kill -9 mid-turn, then load replays every earlier turn and marks the interrupted one", async () => {
    let h = AgentHarness.start({ apiUrl: api.url, dataDir: data.path });
    let sessionId: string;
    try {
      await h.initialize();
      ({ sessionId } = await h.newSession(project.path));
      assert.equal((await h.prompt(sessionId, "first question")).stopReason, "end_turn");
      assert.equal((await h.prompt(sessionId, "find markdown")).stopReason, "end_turn");
      void h.prompt(sessionId, "hang now").catch(() => undefined);
      await h.waitForUpdate(
        (u) =>
          u.sessionId === sessionId &&
          u.update.sessionUpdate === "agent_message_chunk" &&
          JSON.stringify(u.update).includes("partial"),
      );
    } finally {
      await h.kill9();
    }

    h = AgentHarness.start({ apiUrl: api.url, dataDir: data.path });
    try {
      await h.initialize();
      let updatesAtResponse = -1;
      const loaded = await h.agent
        .request(acp.methods.agent.session.load, { sessionId: sessionId!, cwd: project.path, mcpServers: [] })
        .then((r) => {
          updatesAtResponse = h.updatesOf(sessionId).length;
          return r;
        });
      assert.equal(loaded.modes?.currentModeId, "default");
      assert.ok(loaded.configOptions?.some((o) => o.category === "model"));
      const replay = h.updatesOf(sessionId).slice(0, updatesAtResponse);
      const users = replay
        .filter((u) => u.sessionUpdate === "user_message_chunk")
        .map((u) => (u as { content: { text: string } }).content.text);
      assert.deepEqual(users, ["first question", "find markdown", "hang now"]);
      const texts = replay
        .filter((u) => u.sessionUpdate === "agent_message_chunk")
        .map((u) => (u as { content: { text: string } }).content.text);
      assert.equal(texts[0], "answer to first question");
      assert.equal(texts[1], "listed the files");
      assert.match(texts.at(-1)!, /interrupted/);
      const tool = replay.find((u) => u.sessionUpdate === "tool_call") as acp.ToolCall;
      assert.equal(tool.status, "completed", "tool calls replay with their final state");
      assert.equal(tool.kind, "search");
      // the conversation continues with the earlier turns as context
      assert.equal((await h.prompt(sessionId!, "and now?")).stopReason, "end_turn");
      const msgs = api.requests.at(-1)!.body.messages as { role: string }[];
      assert.ok(msgs.length >= 5);
      assert.equal(msgs[0]!.role, "user");
    } finally {
      await h.close();
    }
  });

  test("resume does not replay; fork copies the history; list by cwd with paging; close; delete", async () => {
    let h = AgentHarness.start({ apiUrl: api.url, dataDir: data.path });
    let sessionId: string;
    try {
      await h.initialize();
      ({ sessionId } = await h.newSession(project.path));
      await h.prompt(sessionId, "remember this");
      await h.newSession(other.path);
    } finally {
      await h.close();
    }
    h = AgentHarness.start({ apiUrl: api.url, dataDir: data.path });
    try {
      await h.initialize();
      const resumed = await h.agent.request(acp.methods.agent.session.resume, {
        sessionId: sessionId!,
        cwd: project.path,
      });
      assert.ok(resumed.configOptions?.length);
      assert.deepEqual(
        kinds(h, sessionId!).filter((k) => k !== "available_commands_update"),
        [],
        "resume replays nothing",
      );
      await h.prompt(sessionId!, "what did I say?");
      const msgs = api.requests.at(-1)!.body.messages as { role: string; content: { text?: string }[] }[];
      assert.match(JSON.stringify(msgs), /remember this/, "resumed history reaches the model");

      const forked = await h.agent.request<acp.NewSessionResponse>("session/fork", {
        sessionId: sessionId!,
        cwd: project.path,
        mcpServers: [],
      });
      assert.notEqual(forked.sessionId, sessionId);
      await h.agent.request(acp.methods.agent.session.load, {
        sessionId: forked.sessionId,
        cwd: project.path,
        mcpServers: [],
      });
      const forkUsers = h
        .updatesOf(forked.sessionId, "user_message_chunk")
        .map((u) => (u as { content: { text: string } }).content.text);
      assert.deepEqual(forkUsers, ["remember this", "what did I say?"]);

      const listed = await h.agent.request(acp.methods.agent.session.list, { cwd: project.path });
      const ids = listed.sessions.map((s) => s.sessionId);
      assert.ok(ids.includes(sessionId!) && ids.includes(forked.sessionId));
      assert.ok(listed.sessions.every((s) => s.cwd === project.path));
      assert.equal(listed.sessions.find((s) => s.sessionId === sessionId)?.title, "remember this");
      const otherList = await h.agent.request(acp.methods.agent.session.list, { cwd: other.path });
      assert.equal(otherList.sessions.length, 1);

      await h.agent.request(acp.methods.agent.session.close, { sessionId: forked.sessionId });
      await assert.rejects(h.prompt(forked.sessionId, "x"), (e: acp.RequestError) => e.code === -32002);
      await h.agent.request(acp.methods.agent.session.delete, { sessionId: forked.sessionId });
      const after = await h.agent.request(acp.methods.agent.session.list, { cwd: project.path });
      assert.ok(!after.sessions.some((s) => s.sessionId === forked.sessionId));
      await assert.rejects(
        h.agent.request(acp.methods.agent.session.load, {
          sessionId: "ccb-does-not-exist",
          cwd: project.path,
          mcpServers: [],
        }),
        (e: acp.RequestError) => e.code === -32002,
      );
    } finally {
      await h.close();
    }
  });

  test("session/list pages with nextCursor", async () => {
    const many = tmpdirFixture();
    const h = AgentHarness.start({ apiUrl: api.url, dataDir: data.path });
    try {
      await h.initialize();
      for (let i = 0; i < 53; i++) await h.newSession(many.path);
      const p1 = await h.agent.request(acp.methods.agent.session.list, { cwd: many.path });
      assert.equal(p1.sessions.length, 50);
      assert.ok(p1.nextCursor);
      const p2 = await h.agent.request(acp.methods.agent.session.list, { cwd: many.path, cursor: p1.nextCursor });
      assert.equal(p2.sessions.length, 3);
      assert.equal(p2.nextCursor ?? undefined, undefined);
      assert.equal(new Set([...p1.sessions, ...p2.sessions].map((s) => s.sessionId)).size, 53);
    } finally {
      await h.close();
      many.cleanup();
    }
  });
});
