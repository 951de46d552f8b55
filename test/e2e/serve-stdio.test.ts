import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { workspaceTools } from "../../src/tools/catalog.ts";
import { spawnCcb } from "../helpers/cli.ts";
import { cleanEnv, connectStdio, type StdioPeer, waitExit, waitForOutput } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

describe("ccb serve --stdio with the MCP SDK client", { timeout: 120_000 }, () => {
  const dir = tmpdirFixture({ git: true });
  let peer: StdioPeer;

  before(async () => {
    writeFileSync(join(dir.path, "README.md"), "# sample\n");
    peer = await connectStdio(dir.path);
  });
  after(async () => {
    await peer.close();
    dir.cleanup();
  });

  it("initializes as ccb and lists every registry tool with schema, title and annotations", async () => {
    assert.equal(peer.client.getServerVersion()?.name, "ccb");
    const { tools } = await peer.client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), workspaceTools.map((t) => t.name).sort());
    for (const t of tools) {
      assert.equal(t.inputSchema.type, "object", t.name);
      assert.ok(t.title, t.name);
      assert.ok(t.description && t.description.length > 0, t.name);
      for (const k of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const) {
        assert.equal(typeof t.annotations?.[k], "boolean", `${t.name}.${k}`);
      }
    }
  });

  it("answers an unknown tool with a JSON-RPC InvalidParams error", async () => {
    await assert.rejects(peer.client.callTool({ name: "definitely_not_a_tool", arguments: {} }), (err: unknown) => {
      assert.ok(err instanceof McpError, String(err));
      assert.equal(err.code, -32602);
      assert.match(err.message, /Unknown tool "definitely_not_a_tool"/);
      return true;
    });
  });

  it("workspace_status returns text and structuredContent (roots, bridge not connected)", async () => {
    const r = await peer.client.callTool({ name: "workspace_status", arguments: {} });
    assert.equal(r.isError, undefined);
    const content = r.content as Array<{ type: string; text: string }>;
    assert.equal(content[0]?.type, "text");
    assert.ok(content[0]?.text.includes(dir.path));
    const sc = r.structuredContent as { roots: Array<{ path: string }>; bridge: { connected: boolean } };
    assert.equal(sc.roots[0]?.path, dir.path);
    assert.equal(sc.bridge.connected, false);
  });

  it("fs_write then fs_read round trip through MCP, with versions", async () => {
    const w = await peer.client.callTool({
      name: "fs_write",
      arguments: { path: "notes/a.txt", content: "hello\nworld\n", createParents: true },
    });
    assert.equal(w.isError, undefined, JSON.stringify(w));
    const r = await peer.client.callTool({ name: "fs_read", arguments: { path: "notes/a.txt" } });
    assert.equal(r.isError, undefined, JSON.stringify(r));
    const sc = r.structuredContent as { content: string; version: string };
    assert.equal(sc.content, "hello\nworld\n");
    assert.match(sc.version, /^[0-9a-f]{64}$/);
  });

  it("invalid arguments to a real tool -> InvalidParams naming the field", async () => {
    await assert.rejects(peer.client.callTool({ name: "fs_read", arguments: { path: 42 } }), (err: unknown) => {
      assert.ok(err instanceof McpError);
      assert.equal(err.code, -32602);
      assert.match(err.message, /Invalid arguments for tool fs_read: path: /);
      return true;
    });
  });

  it("a core error is an isError result with code, message and hint", async () => {
    const r = await peer.client.callTool({ name: "fs_read", arguments: { path: "../../etc/passwd" } });
    assert.equal(r.isError, true);
    const err = (r.structuredContent as { error: { code: string; message: string; hint?: string } }).error;
    assert.equal(err.code, "PATH_OUTSIDE_WORKSPACE");
    assert.ok(err.hint);
    const text = (r.content as Array<{ text: string }>)[0]?.text ?? "";
    assert.match(text, /^PATH_OUTSIDE_WORKSPACE: /);
    assert.doesNotMatch(text, /root:x:0:0/);
  });

  it("every editor-backed tool answers BRIDGE_UNAVAILABLE (never a fake success) without a workbench", async () => {
    const bridged = workspaceTools.filter((t) => t.needsBridge);
    assert.ok(bridged.length >= 11, "the editor tools of seed 004 are registered");
    const { tools } = await peer.client.listTools();
    for (const def of bridged) {
      const listed = tools.find((t) => t.name === def.name);
      assert.ok(listed, def.name);
      // extensions_install needs exactly one of two optional fields (checked in the tool, not the schema)
      const args = (
        def.name === "extensions_install" ? { id: "ccb-test.sample" } : sampleArgs(listed.inputSchema as JsonSchema)
      ) as Record<string, unknown>;
      assert.ok(
        def.input.safeParse(args).success,
        `sample arguments for ${def.name} must be valid: ${JSON.stringify(args)}`,
      );
      const r = await peer.client.callTool({ name: def.name, arguments: args });
      assert.equal(r.isError, true, `${def.name}: ${JSON.stringify(r)}`);
      const err = (r.structuredContent as { error: { code: string; hint?: string } }).error;
      assert.equal(err.code, "BRIDGE_UNAVAILABLE", `${def.name}: ${JSON.stringify(r)}`);
      assert.match((r.content as Array<{ text: string }>)[0]?.text ?? "", /^BRIDGE_UNAVAILABLE: /);
    }
  });

  it("announces the workspace on stderr", async () => {
    assert.match(peer.stderr(), new RegExp(`workspace ${dir.path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
  });
});

/** Pids of live `sleep <marker>` processes (from /proc). */
function sleepers(marker: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      const state = /^State:\s+(\w)/m.exec(readFileSync(`/proc/${name}/status`, "utf8"))?.[1];
      if (cmd[0]?.endsWith("sleep") && cmd[1] === marker && state !== "Z") out.push(Number(name));
    } catch {
      // the process went away while we looked
    }
  }
  return out;
}

interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  minimum?: number;
  minItems?: number;
}

/** Minimal valid arguments from a tool's JSON schema: required fields only, plausible values by name. */
function sampleArgs(schema: JsonSchema, key = ""): unknown {
  if (schema.enum) return schema.enum[0];
  switch (schema.type) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const k of schema.required ?? []) out[k] = sampleArgs(schema.properties?.[k] ?? {}, k);
      return out;
    }
    case "array":
      return Array.from({ length: schema.minItems ?? 0 }, () => sampleArgs(schema.items ?? {}, key));
    case "integer":
    case "number":
      return schema.minimum ?? 1;
    case "boolean":
      return false;
    case "string":
      if (key === "id") return "ccb-test.sample";
      if (key === "command") return "workbench.action.files.save";
      if (key === "query") return "main";
      if (key === "text" || key === "newText") return "x";
      return "README.md";
    default:
      return "README.md";
  }
}

describe("ccb serve --stdio process behaviour", { timeout: 120_000 }, () => {
  const dir = tmpdirFixture();
  after(() => dir.cleanup());

  it("writes only JSON-RPC frames to stdout, answers bad frames and keeps serving", async () => {
    const child = spawnCcb(["serve", "--no-workbench", "--workspace", dir.path, "--log-level", "debug"], {
      env: cleanEnv(),
    });
    let out = "";
    let err = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
    const lines = [
      JSON.stringify(INIT),
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      "this is not json",
      JSON.stringify({ jsonrpc: "2.0", id: 7, method: 42 }),
      JSON.stringify({ jsonrpc: "2.0", id: 8, method: "no/such/method" }),
      JSON.stringify({ jsonrpc: "2.0", id: 10, method: "tools/call", params: { name: 5 } }),
      JSON.stringify({ jsonrpc: "2.0", id: 11, method: "logging/setLevel", params: { level: "loud" } }),
      JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }),
    ];
    child.stdin!.write(`${lines.join("\n")}\n`);
    await waitForOutput(child.stdout!, () => out, /"id":9[,}]/);
    child.stdin!.end();
    const exit = await waitExit(child);
    assert.deepEqual(exit, { code: 0, signal: null });
    const frames = out
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { jsonrpc: string; id: unknown; error?: { code: number; message: string } });
    for (const f of frames) assert.equal(f.jsonrpc, "2.0");
    const byId = new Map(frames.map((f) => [f.id, f]));
    assert.equal(byId.get(null)?.error?.code, -32700);
    assert.equal(byId.get(7)?.error?.code, -32600);
    assert.equal(byId.get(8)?.error?.code, -32601);
    // bad params of a known method: InvalidParams naming the field, validated at the edge
    assert.equal(byId.get(10)?.error?.code, -32602);
    assert.match(byId.get(10)?.error?.message ?? "", /^Invalid params for tools\/call: name: /);
    assert.equal(byId.get(11)?.error?.code, -32602);
    assert.ok(byId.get(9) && !byId.get(9)?.error);
    // logs went to stderr, none to stdout
    assert.match(err, /MCP over stdio ready/);
  });

  it("defaults to the current directory and says so", async () => {
    const child = spawnCcb(["serve", "--no-workbench"], { env: cleanEnv(), cwd: dir.path });
    let err = "";
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
    await waitForOutput(child.stderr!, () => err, /ready/);
    assert.match(err, /workspace .*\(the current directory; pass --workspace to choose\)/);
    assert.ok(err.includes(dir.path));
    child.stdin!.end();
    assert.deepEqual(await waitExit(child), { code: 0, signal: null });
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`exits 0 on ${signal}`, async () => {
      const child = spawnCcb(["serve", "--no-workbench", "--stdio", "--workspace", dir.path], { env: cleanEnv() });
      let err = "";
      child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
      await waitForOutput(child.stderr!, () => err, /ready/);
      child.kill(signal);
      assert.deepEqual(await waitExit(child), { code: 0, signal: null });
    });
  }

  it("kills the terminals it started when it shuts down (no orphans)", async () => {
    const marker = `${4000 + Math.floor(Math.random() * 4000)}.${process.pid}`;
    const peer = await connectStdio(dir.path);
    const r = await peer.client.callTool({ name: "terminal_create", arguments: { command: "sleep", args: [marker] } });
    assert.equal(r.isError, undefined, JSON.stringify(r));
    assert.ok(sleepers(marker).length > 0, "the terminal's process runs");
    const child = peer.transport;
    const pid = child.pid;
    assert.ok(pid);
    process.kill(pid, "SIGTERM");
    await new Promise<void>((resolve) => (child.onclose = () => resolve()));
    assert.deepEqual(sleepers(marker), [], "no process of the terminal survives the server");
    await peer.close();
  });

  it("refuses a missing workspace with a clear message and exit 1", async () => {
    const child = spawnCcb(["serve", "--no-workbench", "--workspace", `${dir.path}/missing`], { env: cleanEnv() });
    let err = "";
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
    child.stdin!.end();
    const exit = await waitExit(child);
    assert.equal(exit.code, 1);
    assert.match(err, /Workspace root does not exist/);
  });
});
