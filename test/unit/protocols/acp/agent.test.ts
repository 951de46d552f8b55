import assert from "node:assert/strict";
import { test } from "node:test";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { silentLogger } from "../../../../src/core/log.ts";
import { createAcpAgent } from "../../../../src/protocols/acp/v1.ts";
import { tmpdirFixture } from "../../../helpers/tmp.ts";

// session/new needs credentials; these tests make no model request
process.env.ANTHROPIC_API_KEY = "sk-ant-unit-test";

// In-process: the SDK's client connected straight to the agent app (no process, no sockets).
test("in-process: bypassPermissions is refused as root outside a sandbox, with the reason, over the protocol", async () => {
  const dir = tmpdirFixture();
  const data = tmpdirFixture();
  try {
    const agent = createAcpAgent({
      env: { home: data.path, dataDir: data.path, configDir: undefined },
      log: silentLogger,
      facts: { uid: 0, env: {}, containerMarker: false },
    });
    const updates: acp.SessionNotification[] = [];
    const client = acp
      .client({ name: "t" })
      .onNotification(acp.methods.client.session.update, ({ params }) => void updates.push(params));
    await client.connectWith(agent, async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      });
      const s = await ctx.request(acp.methods.agent.session.new, { cwd: dir.path, mcpServers: [] });
      assert.ok(!s.modes?.availableModes.some((m) => m.id === "bypassPermissions"), "not offered");
      await assert.rejects(
        ctx.request(acp.methods.agent.session.setMode, { sessionId: s.sessionId, modeId: "bypassPermissions" }),
        (e: acp.RequestError) => /root outside a sandbox/.test(e.message),
      );
      await ctx.request(acp.methods.agent.session.setMode, { sessionId: s.sessionId, modeId: "dontAsk" });
      const list = await ctx.request(acp.methods.agent.session.list, { cwd: dir.path });
      assert.deepEqual(
        list.sessions.map((x) => x.sessionId),
        [s.sessionId],
      );
      await assert.rejects(
        ctx.request(acp.methods.agent.session.prompt, { sessionId: "ccb-nope-nope", prompt: [] }),
        (e: acp.RequestError) => e.code === -32002,
      );
    });
    assert.ok(
      updates.some((u) => u.update.sessionUpdate === "current_mode_update" && u.update.currentModeId === "dontAsk"),
    );
  } finally {
    dir.cleanup();
    data.cleanup();
  }
});

test("in-process: a root user inside a sandbox may bypass permissions", async () => {
  const dir = tmpdirFixture();
  try {
    const agent = createAcpAgent({
      env: { home: dir.path, dataDir: dir.path, configDir: undefined },
      log: silentLogger,
      facts: { uid: 0, env: { CCB_SANDBOX: "1" }, containerMarker: false },
    });
    await acp.client({ name: "t" }).connectWith(agent, async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      });
      const s = await ctx.request(acp.methods.agent.session.new, { cwd: dir.path, mcpServers: [] });
      assert.ok(s.modes?.availableModes.some((m) => m.id === "bypassPermissions"));
      await ctx.request(acp.methods.agent.session.setMode, { sessionId: s.sessionId, modeId: "bypassPermissions" });
      const r = await ctx.request(acp.methods.agent.session.setConfigOption, {
        sessionId: s.sessionId,
        configId: "mode",
        value: "default",
      });
      assert.equal(r.configOptions.find((o) => o.id === "mode")?.currentValue, "default");
    });
  } finally {
    dir.cleanup();
  }
});
