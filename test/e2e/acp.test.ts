import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type * as acp from "@agentclientprotocol/sdk";
import { AgentHarness, tempDataDir } from "../helpers/acp-harness.ts";
import { runCcb } from "../helpers/cli.ts";
import { type FakeAnthropic, sequence, startFakeAnthropic } from "../helpers/fake-anthropic.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

describe("ccb acp: transport, initialize, sessions, streaming", () => {
  let api: FakeAnthropic;
  const data = tempDataDir();
  const project = tmpdirFixture({ git: true });
  before(async () => {
    api = await startFakeAnthropic({
      script: sequence([{ text: "Hello from the model, streamed in several chunks of text." }]),
    });
  });
  after(async () => {
    await api.close();
    data.cleanup();
    project.cleanup();
  });

  test("initialize and session/new have the shapes editors depend on (started as `ccb --acp`, like Zed)", async () => {
    const h = AgentHarness.start({ apiUrl: api.url, dataDir: data.path, argv: ["--acp"] });
    try {
      const init = await h.initialize({ fs: { readTextFile: true, writeTextFile: true }, terminal: true });
      assert.equal(init.protocolVersion, 1);
      assert.equal(init.agentCapabilities?.loadSession, true);
      assert.equal(init.agentCapabilities?.mcpCapabilities?.http, true);
      assert.ok(init.agentCapabilities?.sessionCapabilities?.list);
      assert.ok(init.agentCapabilities?.sessionCapabilities?.resume);
      assert.ok(init.agentCapabilities?.sessionCapabilities?.close);
      assert.ok((init.authMethods ?? []).length > 0, "non-empty authMethods");
      assert.equal(init.agentInfo?.name, "ccb");
      const s = await h.newSession(project.path);
      assert.match(s.sessionId, /^ccb-/);
      assert.equal(s.modes?.currentModeId, "default");
      assert.deepEqual(
        s.modes?.availableModes.map((m) => m.id).filter((id) => id !== "bypassPermissions"),
        ["default", "acceptEdits", "plan", "dontAsk", "auto"],
      );
      const model = s.configOptions?.find((o) => o.category === "model");
      assert.ok(model && model.type === "select" && model.options.length > 0);
      assert.ok(s.configOptions?.find((o) => o.category === "thought_level"));
      const cmds = await h.waitForUpdate((u) => u.update.sessionUpdate === "available_commands_update");
      assert.ok(
        (cmds.update as { availableCommands: { name: string }[] }).availableCommands.some((c) => c.name === "review"),
      );
      await assert.rejects(h.newSession("relative/path"), (e: acp.RequestError) => e.code === -32602);
      assert.deepEqual(h.strayStdout, []);
    } finally {
      await h.close();
    }
  });

  test("a prompt streams agent_message_chunk updates and ends with end_turn", async () => {
    const h = AgentHarness.start({ apiUrl: api.url, dataDir: data.path });
    try {
      await h.initialize();
      const { sessionId } = await h.newSession(project.path);
      const r = await h.prompt(sessionId, "Say hello");
      assert.equal(r.stopReason, "end_turn");
      const chunks = h.updatesOf(sessionId, "agent_message_chunk");
      assert.ok(chunks.length > 1, "several chunks");
      assert.equal(h.textOf(sessionId), "Hello from the model, streamed in several chunks of text.");
      assert.ok(h.updatesOf(sessionId, "usage_update").length > 0);
      const title = h.updatesOf(sessionId, "session_info_update")[0] as { title?: string };
      assert.equal(title.title, "Say hello");
      const req = api.requests.at(-1)!;
      assert.equal(req.body.stream, true);
      assert.match(req.body.system, new RegExp(project.path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
      assert.deepEqual(h.strayStdout, []);
    } finally {
      await h.close();
    }
  });

  test("an empty PATH or HOME ends with a clear message instead of hanging", async () => {
    const noPath = await runCcb(["acp"], { env: { HOME: data.path }, timeoutMs: 20_000 });
    assert.notEqual(noPath.code, 0);
    assert.equal(noPath.stdout, "");
    assert.match(noPath.stderr, /PATH is empty/);
    const noHome = await runCcb(["acp"], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, timeoutMs: 20_000 });
    assert.notEqual(noHome.code, 0);
    assert.equal(noHome.stdout, "");
    assert.match(noHome.stderr, /HOME is not set/);
  });
});
