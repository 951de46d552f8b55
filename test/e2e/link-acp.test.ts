import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as acp from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import WebSocket from "ws";
import { spawnCcb } from "../helpers/cli.ts";
import { type FakeAnthropic, startFakeAnthropic } from "../helpers/fake-anthropic.ts";
import { stopProcess, waitForOutput } from "../helpers/process.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

const TOKEN = "link-acp-token-0123456789abcdef";

// The ACP SDK's own WebSocket client, through `ccb link`, to `ccb acp` (the default agent),
// against the scripted fake Messages API: the whole chain with real sockets and processes.
describe("ccb link -> ccb acp", () => {
  let api: FakeAnthropic;
  const home = tmpdirFixture({ prefix: "ccb-link-acp-home-" });
  const project = tmpdirFixture({ git: true, prefix: "ccb-link-acp-proj-" });
  let link: ReturnType<typeof spawnCcb>;
  let url = "";

  before(async () => {
    api = await startFakeAnthropic({
      // Side requests (no tools) get a title; the first turn edits; once a tool result is back, text.
      script: ({ body }) => {
        if (!Array.isArray(body.tools) || body.tools.length === 0) return { text: "Title" };
        const last = body.messages.at(-1);
        const hasResult =
          Array.isArray(last?.content) && last.content.some((c: { type: string }) => c.type === "tool_result");
        if (hasResult) return { text: "Edited." };
        return { toolUses: [{ name: "edit", input: { path: "notes.txt", old_string: "old", new_string: "new" } }] };
      },
    });
    link = spawnCcb(["link", "--port", "0", "--host", "127.0.0.1"], {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: home.path,
        XDG_CONFIG_HOME: join(home.path, "config"),
        XDG_STATE_HOME: join(home.path, "state"),
        CCB_DATA_DIR: join(home.path, "data"),
        ACP_AUTH_TOKEN: TOKEN,
        ANTHROPIC_BASE_URL: api.url,
        ANTHROPIC_API_KEY: "sk-ant-test-key-0123456789",
      },
    });
    url = (await waitForOutput(link, /listening on (ws:\/\/\S+)/))[1] as string;
  });
  after(async () => {
    await stopProcess(link);
    await api.close();
    home.cleanup();
    project.cleanup();
  });

  async function runEdit(meta?: Record<string, unknown>) {
    const permissions: acp.RequestPermissionRequest[] = [];
    const chunks: string[] = [];
    const stream = createWebSocketStream(url, {
      WebSocket: WebSocket as never,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const result = await acp
      .client({ name: "link-acp-test" })
      .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
        permissions.push(params);
        const allow = params.options.find((o) => o.kind === "allow_once");
        assert.ok(allow);
        return { outcome: { outcome: "selected", optionId: allow.optionId } };
      })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        if (params.update.sessionUpdate === "agent_message_chunk" && params.update.content.type === "text")
          chunks.push(params.update.content.text);
      })
      .connectWith(stream, async (ctx) => {
        const init = await ctx.request(acp.methods.agent.initialize, {
          protocolVersion: acp.PROTOCOL_VERSION,
          clientCapabilities: {},
        });
        assert.equal(init.protocolVersion, acp.PROTOCOL_VERSION);
        const session = await ctx.request(acp.methods.agent.session.new, {
          cwd: project.path,
          mcpServers: [],
          ...(meta ? { _meta: meta } : {}),
        });
        const currentMode = session.modes?.currentModeId;
        const r = await ctx.request(acp.methods.agent.session.prompt, {
          sessionId: session.sessionId,
          prompt: [{ type: "text", text: "edit the notes" }],
        });
        return { ...r, currentMode };
      });
    return { result, permissions, chunks };
  }

  it("runs a prompt with an edit that asks for permission", async () => {
    writeFileSync(join(project.path, "notes.txt"), "old text\n");
    const { result, permissions, chunks } = await runEdit();
    assert.equal(result.stopReason, "end_turn");
    assert.equal(result.currentMode, "default");
    assert.equal(permissions.length, 1);
    assert.equal(readFileSync(join(project.path, "notes.txt"), "utf8"), "new text\n");
    assert.match(chunks.join(""), /Edited\./);
  });

  it("the client's permission mode reaches the agent through the link (acceptEdits: no prompt)", async () => {
    writeFileSync(join(project.path, "notes.txt"), "old text\n");
    const { result, permissions } = await runEdit({ permissionMode: "acceptEdits" });
    assert.equal(result.currentMode, "acceptEdits");
    assert.equal(permissions.length, 0);
    assert.equal(readFileSync(join(project.path, "notes.txt"), "utf8"), "new text\n");
  });

  it("a client cannot escalate to bypassPermissions through the link", async () => {
    writeFileSync(join(project.path, "notes.txt"), "old text\n");
    const { result, permissions } = await runEdit({ permissionMode: "bypassPermissions" });
    assert.equal(result.currentMode, "default");
    assert.equal(permissions.length, 1);
  });
});
