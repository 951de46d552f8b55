import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as acp from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import WebSocket from "ws";
import { spawnCcb } from "../helpers/cli.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../helpers/fake-anthropic.ts";
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
        const hasResult = Array.isArray(last?.content) && last.content.some((c: { type: string }) => c.type === "tool_result");
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

  it("runs a prompt with an edit that asks for permission", async () => {
    writeFileSync(join(project.path, "notes.txt"), "old text\n");
    const permissions: acp.RequestPermissionRequest[] = [];
    const chunks: string[] = [];
    const stream = createWebSocketStream(url, { WebSocket: WebSocket as never, headers: { authorization: `Bearer ${TOKEN}` } });
    const result = await acp
      .client({ name: "link-acp-test" })
      .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
        permissions.push(params);
        const allow = params.options.find((o) => o.kind === "allow_once");
        assert.ok(allow);
        return { outcome: { outcome: "selected", optionId: allow.optionId } };
      })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        if (params.update.sessionUpdate === "agent_message_chunk" && params.update.content.type === "text") chunks.push(params.update.content.text);
      })
      .connectWith(stream, async (ctx) => {
        const init = await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
        assert.equal(init.protocolVersion, acp.PROTOCOL_VERSION);
        const session = await ctx.request(acp.methods.agent.session.new, { cwd: project.path, mcpServers: [] });
        return ctx.request(acp.methods.agent.session.prompt, { sessionId: session.sessionId, prompt: [{ type: "text", text: "edit the notes" }] });
      });
    assert.equal(result.stopReason, "end_turn");
    assert.equal(permissions.length, 1);
    assert.equal(readFileSync(join(project.path, "notes.txt"), "utf8"), "new text\n");
    assert.match(chunks.join(""), /Edited\./);
  });
});
