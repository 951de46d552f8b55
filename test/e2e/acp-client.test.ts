import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { AgentHarness } from "../helpers/acp-harness.ts";
import { byPrompt, lastToolResults, lastUserText } from "../helpers/acp-scripts.ts";
import { ccbCommand } from "../helpers/cli.ts";
import { e2e } from "../helpers/fixture.ts";

const allowOnce = () => ({ outcome: { outcome: "selected" as const, optionId: "allow_once" } });

describe("ccb acp: client fs/* and terminal/*, MCP servers, config options, slash commands", () => {
  const f = e2e({
    git: true,
    dirs: ["data"],
    model: {
      script: byPrompt(
        (results) => ({ text: `result: ${JSON.stringify(results.map((r) => r.content))}` }),
        (p) => {
          if (p === "read buf") return { toolUses: [{ name: "read", input: { path: "buf.txt" } }] };
          if (p === "edit buf")
            return {
              toolUses: [{ name: "edit", input: { path: "buf.txt", old_string: "unsaved", new_string: "saved" } }],
            };
          if (p.startsWith("run ")) return { toolUses: [{ name: "bash", input: { command: p.slice(4) } }] };
          if (p === "mcp read") return { toolUses: [{ name: "mcp__ccb__fs_read", input: { path: "served.txt" } }] };
          if (p === "shout") return { toolUses: [{ name: "mcp__shout__shout", input: { text: "quiet words" } }] };
          if (p === "think") return { thinking: "pondering the question", text: "thought it through" };
          return { text: `echo: ${p}` };
        },
      ),
    },
  });
  const dataDir = f.dir("data");

  test("reads and writes go through the client's fs/* (unsaved buffers); bash through terminal/*", async () => {
    const disk = join(f.ws, "buf.txt");
    writeFileSync(disk, "disk content\n");
    const buffers = new Map<string, string>([[disk, "unsaved content\n"]]);
    const writes: acp.WriteTextFileRequest[] = [];
    const terms = new Map<
      string,
      { child: ChildProcess; out: string; exit: Promise<{ exitCode: number | null; signal: string | null }> }
    >();
    const created: acp.CreateTerminalRequest[] = [];
    const h = AgentHarness.start({
      apiUrl: f.api.url,
      dataDir: dataDir,
      onPermission: allowOnce,
      configure: (app) =>
        app
          .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => ({
            content: buffers.get(params.path) ?? readFileSync(params.path, "utf8"),
          }))
          .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
            writes.push(params);
            buffers.set(params.path, params.content);
            return {};
          })
          .onRequest(acp.methods.client.terminal.create, ({ params }) => {
            created.push(params);
            const child = spawn(params.command, params.args ?? [], {
              cwd: params.cwd ?? undefined,
              stdio: ["ignore", "pipe", "pipe"],
            });
            const t = {
              child,
              out: "",
              exit: new Promise<{ exitCode: number | null; signal: string | null }>((r) =>
                child.on("close", (exitCode, signal) => r({ exitCode, signal })),
              ),
            };
            child.stdout!.on("data", (d: Buffer) => (t.out += d.toString()));
            child.stderr!.on("data", (d: Buffer) => (t.out += d.toString()));
            const id = `term-${terms.size + 1}`;
            terms.set(id, t);
            return { terminalId: id };
          })
          .onRequest(acp.methods.client.terminal.output, ({ params }) => ({
            output: terms.get(params.terminalId)!.out,
            truncated: false,
          }))
          .onRequest(acp.methods.client.terminal.waitForExit, ({ params }) => terms.get(params.terminalId)!.exit)
          .onRequest(acp.methods.client.terminal.kill, ({ params }) => {
            terms.get(params.terminalId)!.child.kill("SIGKILL");
            return {};
          })
          .onRequest(acp.methods.client.terminal.release, ({ params }) => {
            terms.get(params.terminalId)?.child.kill("SIGKILL");
            return {};
          }),
    });
    try {
      await h.initialize({ fs: { readTextFile: true, writeTextFile: true }, terminal: true });
      const { sessionId } = await h.newSession(f.ws);
      await h.prompt(sessionId, "read buf");
      assert.match(JSON.stringify(lastToolResults(f.api.requests.at(-1)!.body)[0]!.content), /unsaved content/);

      await h.prompt(sessionId, "edit buf");
      assert.deepEqual(writes, [{ sessionId, path: disk, content: "saved content\n" }]);
      assert.equal(readFileSync(disk, "utf8"), "disk content\n", "the agent wrote through the client, not the disk");

      await h.prompt(sessionId, "run echo from-terminal");
      assert.equal(created.length, 1);
      assert.deepEqual(created[0]!.args, ["-c", "echo from-terminal"]);
      assert.equal(created[0]!.cwd, f.ws);
      const call = h.updatesOf(sessionId, "tool_call").at(-1) as acp.ToolCall;
      assert.equal(call.title, "echo from-terminal");
      const embedded = h
        .updatesOf(sessionId, "tool_call_update")
        .some((u) =>
          ((u as acp.ToolCallUpdate).content ?? []).some((c) => c.type === "terminal" && c.terminalId === "term-1"),
        );
      assert.ok(embedded, "the terminal is embedded in the tool call");
      assert.match(JSON.stringify(lastToolResults(f.api.requests.at(-1)!.body)[0]!.content), /from-terminal/);
      assert.deepEqual(h.strayStdout, []);
    } finally {
      await h.close();
      for (const t of terms.values()) t.child.kill("SIGKILL");
    }
  });

  test("a stdio MCP server from session/new is connected and its tools offered to the model", async () => {
    const server = fileURLToPath(new URL("../fixtures/mcp-shout-server.mjs", import.meta.url));
    const h = AgentHarness.start({ apiUrl: f.api.url, dataDir: dataDir, onPermission: allowOnce });
    try {
      await h.initialize();
      const { sessionId } = await h.newSession(f.ws, [
        { name: "shout", command: process.execPath, args: [server], env: [] },
      ]);
      await h.prompt(sessionId, "shout");
      const tools = (f.api.requests.at(-2)!.body.tools as { name: string }[]).map((t) => t.name);
      assert.ok(tools.includes("mcp__shout__shout"), `offered: ${tools.join(", ")}`);
      assert.match(JSON.stringify(lastToolResults(f.api.requests.at(-1)!.body)[0]!.content), /QUIET WORDS/);
      assert.equal(h.permissionRequests.length, 1);
    } finally {
      await h.close();
    }
  });

  test("`ccb serve --stdio` as the MCP server of a session: its read-only tools run without asking", async () => {
    writeFileSync(join(f.ws, "served.txt"), "served through MCP\n");
    const { command, args } = ccbCommand(["serve", "--stdio", "--no-workbench", "--workspace", f.ws]);
    const h = AgentHarness.start({ apiUrl: f.api.url, dataDir: dataDir, onPermission: allowOnce });
    try {
      await h.initialize();
      const { sessionId } = await h.newSession(f.ws, [
        { name: "ccb", command, args, env: [{ name: "CCB_LOG_LEVEL", value: "error" }] },
      ]);
      await h.prompt(sessionId, "mcp read");
      const tools = (f.api.requests.at(-2)!.body.tools as { name: string }[]).map((t) => t.name);
      assert.ok(tools.includes("mcp__ccb__fs_read"), `offered: ${tools.join(", ")}`);
      assert.match(JSON.stringify(lastToolResults(f.api.requests.at(-1)!.body)[0]!.content), /served through MCP/);
      assert.equal(h.permissionRequests.length, 0, "read-only MCP tools need no permission");
      assert.deepEqual(h.strayStdout, []);
    } finally {
      await h.close();
    }
  });

  test("an http MCP server from session/new (with headers) is connected too", async () => {
    const { createServer } = await import("node:http");
    const { McpServer } = await import("@modelcontextprotocol/sdk/server/mcp.js");
    const { StreamableHTTPServerTransport } = await import("@modelcontextprotocol/sdk/server/streamableHttp.js");
    const { z } = await import("zod");
    const http = createServer(async (req, res) => {
      if (req.headers["x-test-token"] !== "secret-1") {
        res.writeHead(401).end();
        return;
      }
      const server = new McpServer({ name: "web", version: "1.0.0" });
      server.registerTool(
        "shout",
        { description: "Upper-case a text", inputSchema: { text: z.string() } },
        async ({ text }) => ({ content: [{ type: "text", text: `HTTP ${text.toUpperCase()}` }] }),
      );
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on("close", () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res);
    });
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", () => r()));
    const port = (http.address() as { port: number }).port;
    const h = AgentHarness.start({ apiUrl: f.api.url, dataDir: dataDir, onPermission: allowOnce });
    try {
      await h.initialize();
      const { sessionId } = await h.newSession(f.ws, [
        {
          type: "http",
          name: "shout",
          url: `http://127.0.0.1:${port}/mcp`,
          headers: [{ name: "x-test-token", value: "secret-1" }],
        },
      ]);
      await h.prompt(sessionId, "shout");
      assert.match(JSON.stringify(lastToolResults(f.api.requests.at(-1)!.body)[0]!.content), /HTTP QUIET WORDS/);
    } finally {
      await h.close();
      http.closeAllConnections();
      await new Promise((r) => http.close(r));
    }
  });

  test("config options (model, thought_level), legacy set_model, modes, slash commands and project instructions", async () => {
    mkdirSync(join(f.ws, ".ccb", "commands"), { recursive: true });
    writeFileSync(
      join(f.ws, ".ccb", "commands", "greet.md"),
      "---\ndescription: Greet someone\nargument-hint: name\n---\nSay hello to $ARGUMENTS politely.\n",
    );
    writeFileSync(join(f.ws, "AGENTS.md"), "Always answer in haiku.\n");
    const h = AgentHarness.start({ apiUrl: f.api.url, dataDir: dataDir });
    try {
      await h.initialize();
      const { sessionId } = await h.newSession(f.ws);
      const cmds = (
        await h.waitForUpdate(
          (u) => u.sessionId === sessionId && u.update.sessionUpdate === "available_commands_update",
        )
      ).update as acp.AvailableCommandsUpdate;
      const greet = cmds.availableCommands.find((c) => c.name === "greet");
      assert.equal(greet?.description, "Greet someone");
      assert.deepEqual(greet?.input, { hint: "name" });

      const set = await h.agent.request(acp.methods.agent.session.setConfigOption, {
        sessionId,
        configId: "model",
        value: "claude-haiku-5-5",
      });
      assert.deepEqual(
        set.configOptions.map((o) => o.id),
        ["mode", "model", "thought_level"],
      );
      assert.equal(set.configOptions.find((o) => o.id === "model")?.currentValue, "claude-haiku-5-5");
      await h.waitForUpdate((u) => u.sessionId === sessionId && u.update.sessionUpdate === "config_option_update");
      await h.prompt(sessionId, "/greet Ada");
      const req = f.api.requests.at(-1)!.body;
      assert.equal(req.model, "claude-haiku-5-5");
      assert.equal(lastUserText(req), "Say hello to Ada politely.");
      assert.match(req.system, /Always answer in haiku/);

      await h.agent.request("session/set_model", { sessionId, modelId: "claude-opus-5-5" });
      await h.agent.request(acp.methods.agent.session.setConfigOption, {
        sessionId,
        configId: "thought_level",
        value: "high",
      });
      await h.prompt(sessionId, "think");
      const req2 = f.api.requests.at(-1)!.body;
      assert.equal(req2.model, "claude-opus-5-5");
      assert.deepEqual(req2.thinking, { type: "enabled", budget_tokens: 32000 });
      const thought = h
        .updatesOf(sessionId, "agent_thought_chunk")
        .map((u) => (u as { content: { text: string } }).content.text)
        .join("");
      assert.equal(thought, "pondering the question");

      await assert.rejects(
        h.agent.request(acp.methods.agent.session.setConfigOption, {
          sessionId,
          configId: "thought_level",
          value: "extreme",
        }),
        (e: acp.RequestError) => e.code === -32602,
      );
      await assert.rejects(
        h.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "yolo" }),
        (e: acp.RequestError) => e.code === -32602,
      );
      await h.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "mode", value: "plan" });
      const mode = await h.waitForUpdate(
        (u) => u.sessionId === sessionId && u.update.sessionUpdate === "current_mode_update",
      );
      assert.equal((mode.update as { currentModeId: string }).currentModeId, "plan");
    } finally {
      await h.close();
    }
  });
});
