import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as acp from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import WebSocket from "ws";
import { spawnCcb } from "../helpers/cli.ts";
import { type FakeAnthropic, startFakeAnthropic } from "../helpers/fake-anthropic.ts";
import { stopProcess, waitForOutput } from "../helpers/process.ts";
import { cleanEnv, connectStdio } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

/**
 * Secrets, attacked from a terminal and from a model prompt: values planted in ccb's environment
 * (ccb's token, the ACP link and RCS tokens, the model's key) must reach no child — a terminal, the
 * ACP bash tool, a link agent (except its own model key) — and no model-visible output, even when
 * the child reads ccb's own initial environment from /proc/$PPID/environ.
 */
const planted = {
  CCB_AUTH_TOKEN: `ccb-planted-${randomBytes(12).toString("hex")}`,
  ACP_AUTH_TOKEN: `acp-planted-${randomBytes(12).toString("hex")}`,
  ACP_RCS_TOKEN: `rcs-planted-${randomBytes(12).toString("hex")}`,
  ANTHROPIC_API_KEY: `sk-ant-planted-${randomBytes(12).toString("hex")}`,
};
const values = Object.values(planted);
const found = (text: string) => values.filter((v) => text.includes(v));
const environ = (pid: number | string) => readFileSync(`/proc/${pid}/environ`, "latin1");

/** A shell line that copies its own and its parent's initial environment to files, and prints both. */
const probe = (dir: string, tag: string) =>
  `tr '\\0' '\\n' < /proc/self/environ > ${dir}/${tag}-self.env; tr '\\0' '\\n' < /proc/$PPID/environ > ${dir}/${tag}-parent.env; cat ${dir}/${tag}-self.env ${dir}/${tag}-parent.env`;

describe("secrets never reach children or the model", { timeout: 300_000 }, () => {
  const home = tmpdirFixture({ prefix: "ccb-secrets-home-" });
  const out = tmpdirFixture({ prefix: "ccb-secrets-out-" });
  const project = tmpdirFixture({ git: true, prefix: "ccb-secrets-proj-" });

  it("a terminal of ccb serve: its environment has none; the model-visible output has none, though /proc/$PPID/environ has them", async () => {
    const peer = await connectStdio(project.path, [], { HOME: home.path, ...planted });
    try {
      const pid = peer.transport.pid as number;
      // Positive control: the values really are in ccb's (initial) environment.
      assert.deepEqual(found(environ(pid)).sort(), [...values].sort());
      const created = (await peer.client.callTool({
        name: "terminal_create",
        arguments: { command: "sh", args: ["-c", `${probe(out.path, "term")}; sleep 30`] },
      })) as unknown as { structuredContent: { terminal: { id: string } } };
      const id = created.structuredContent.terminal.id;
      let text = "";
      // The output arrives in chunks (two environments, a few KiB): read until the parent's part, which
      // holds the planted values, is there (masked) or 100 reads have passed (a leak then fails below).
      for (let i = 0; i < 100 && !/secret removed by ccb/.test(text); i++) {
        const r = (await peer.client.callTool({ name: "terminal_read", arguments: { id, waitMs: 200 } })) as {
          content: Array<{ text?: string }>;
          structuredContent?: unknown;
        };
        text = JSON.stringify(r);
      }
      assert.deepEqual(found(readFileSync(join(out.path, "term-self.env"), "utf8")), [], "the terminal's environment");
      assert.deepEqual(
        found(readFileSync(join(out.path, "term-parent.env"), "utf8")).length,
        values.length,
        "control: the parent's initial environment has them",
      );
      assert.deepEqual(found(text), [], "the model-visible terminal output");
      assert.match(text, /secret removed by ccb/, "masked, not dropped");
    } finally {
      await peer.close();
    }
  });

  it("a token on the command line gets a warning and is hidden from ps", async () => {
    const { startHttpServe } = await import("../helpers/serve.ts");
    const value = `flag-planted-${randomBytes(12).toString("hex")}`;
    const serve = await startHttpServe(project.path, ["--auth-token", value], { HOME: home.path });
    try {
      assert.match(serve.stderr(), /--auth-token puts the token on the command line.*CCB_AUTH_TOKEN_FILE/);
      const cmdline = readFileSync(`/proc/${serve.child.pid}/cmdline`, "latin1");
      assert.ok(!cmdline.includes(value), `ps shows ${cmdline}`);
      const r = await fetch(`${serve.base}/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${value}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: "{}",
      });
      assert.notEqual(r.status, 401, "the token still works");
    } finally {
      await serve.stop();
    }
  });

  describe("ccb link -> ccb acp, model asks bash for the environment", () => {
    let api: FakeAnthropic;
    let link: ReturnType<typeof spawnCcb>;
    let url = "";
    before(async () => {
      api = await startFakeAnthropic({
        script: ({ body }) => {
          if (!Array.isArray(body.tools) || body.tools.length === 0) return { text: "Title" };
          const last = body.messages.at(-1);
          const hasResult =
            Array.isArray(last?.content) && last.content.some((c: { type: string }) => c.type === "tool_result");
          if (hasResult) return { text: "Done." };
          return { toolUses: [{ name: "bash", input: { command: `env; ${probe(out.path, "bash")}` } }] };
        },
      });
      link = spawnCcb(["link", "--port", "0", "--host", "127.0.0.1"], {
        env: cleanEnv({
          HOME: home.path,
          XDG_CONFIG_HOME: join(home.path, "config"),
          XDG_STATE_HOME: join(home.path, "state"),
          CCB_DATA_DIR: join(home.path, "data"),
          ANTHROPIC_BASE_URL: api.url,
          ...planted,
        }),
      });
      url = (await waitForOutput(link, /listening on (ws:\/\/\S+)/))[1] as string;
    });
    after(async () => {
      await stopProcess(link);
      await api.close();
    });

    it("the agent has its own model key only; its bash tool none; the model and the client see none", async () => {
      assert.deepEqual(
        found(environ(link.pid as number)).sort(),
        [...values].sort(),
        "control: planted in ccb link's environment",
      );
      const updates: string[] = [];
      const stream = createWebSocketStream(url, {
        WebSocket: WebSocket as never,
        headers: { authorization: `Bearer ${planted.ACP_AUTH_TOKEN}` },
      });
      await acp
        .client({ name: "secrets-test" })
        .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
          const allow = params.options.find((o) => o.kind === "allow_once");
          return { outcome: { outcome: "selected", optionId: allow?.optionId ?? "" } };
        })
        .onNotification(acp.methods.client.session.update, ({ params }) => void updates.push(JSON.stringify(params)))
        .connectWith(stream, async (ctx) => {
          await ctx.request(acp.methods.agent.initialize, {
            protocolVersion: acp.PROTOCOL_VERSION,
            clientCapabilities: {},
          });
          const session = await ctx.request(acp.methods.agent.session.new, { cwd: project.path, mcpServers: [] });
          await ctx.request(acp.methods.agent.session.prompt, {
            sessionId: session.sessionId,
            prompt: [{ type: "text", text: "print the environment" }],
          });
        });
      assert.ok(existsSync(join(out.path, "bash-self.env")), "the bash tool ran");
      const agentEnv = readFileSync(join(out.path, "bash-parent.env"), "utf8");
      assert.deepEqual(
        found(agentEnv),
        [planted.ANTHROPIC_API_KEY],
        "the link agent got its own model key and nothing else",
      );
      assert.deepEqual(found(readFileSync(join(out.path, "bash-self.env"), "utf8")), [], "the bash tool's environment");
      const toModel = api.requests.map((r) => JSON.stringify(r.body)).join("\n");
      assert.match(toModel, /tool_result/);
      assert.deepEqual(found(toModel), [], "what the model received");
      assert.deepEqual(found(updates.join("\n")), [], "what the ACP client was shown");
      assert.match(toModel, /secret removed by ccb/, "masked (the agent's key was in /proc/$PPID/environ)");
    });
  });
});
