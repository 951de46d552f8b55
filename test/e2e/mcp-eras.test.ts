import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, it } from "node:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyHttpTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { workspaceTools } from "../../src/tools/catalog.ts";
import { ccbCommand } from "../helpers/cli.ts";
import { cleanEnv, connectStdio, type HttpServe, type StdioPeer, startHttpServe } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

/**
 * Both MCP eras on both transports of `ccb serve`: the 2026-07-28 stateless protocol (the SDK's 2.x
 * client, which sends no `initialize`) beside the 2025-11-25 handshake (the 1.x client), and the
 * new era's wire rules checked on the raw wire.
 */

const MODERN = "2026-07-28";
const envelope = (version = MODERN, caps: Record<string, unknown> = {}) => ({
  "io.modelcontextprotocol/protocolVersion": version,
  "io.modelcontextprotocol/clientCapabilities": caps,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
});

function modernClient(): Client {
  return new Client({ name: "ccb-e2e-modern", version: "1.0.0" }, { versionNegotiation: { mode: { pin: MODERN } } });
}

interface ModernStdio {
  client: Client;
  stderr: () => string;
  close(): Promise<void>;
}

async function modernStdio(workspace: string, extra: string[] = []): Promise<ModernStdio> {
  const { command, args } = ccbCommand([
    "serve",
    "--no-workbench",
    "--stdio",
    "--log-level",
    "debug",
    "--workspace",
    workspace,
    ...extra,
  ]);
  const transport = new StdioClientTransport({ command, args, env: cleanEnv(), stderr: "pipe" });
  let err = "";
  transport.stderr?.on("data", (d: Buffer) => (err += d.toString("utf8")));
  const client = modernClient();
  await client.connect(transport);
  return { client, stderr: () => err, close: () => client.close() };
}

/** A terminal that prints nothing until told to, for calls that wait. */
async function quietTerminal(client: Client | LegacyClient): Promise<string> {
  const r = (await caller(client)({ name: "terminal_create", arguments: { command: "cat" } })) as {
    structuredContent?: unknown;
  };
  const id = (r.structuredContent as { terminal?: { id?: string } } | undefined)?.terminal?.id;
  assert.ok(id, JSON.stringify(r));
  return id;
}

function textOf(r: { content?: unknown }): string {
  return ((r.content as Array<{ type: string; text?: string }> | undefined) ?? []).map((c) => c.text ?? "").join("");
}

/**
 * The behaviours every client of either era gets, driven through one SDK client: list, call, a
 * long call that reports progress until the test ends it, and a cancelled call.
 */
interface CallOptions {
  signal?: AbortSignal;
  timeout?: number;
  onprogress?: (p: { progress: number; message?: string }) => void;
}
type Call = (params: { name: string; arguments: Record<string, unknown> }, options?: CallOptions) => Promise<unknown>;

/** tools/call with request options, in each SDK's own shape (the 1.x client takes a result schema first). */
function caller(client: Client | LegacyClient): Call {
  if (client instanceof LegacyClient) return (params, options) => client.callTool(params, undefined, options);
  return (params, options) => client.callTool(params, options);
}

function sharedBehaviour(
  label: string,
  get: () => { client: Client | LegacyClient; stderr: () => string },
  dir: () => string,
) {
  it(`${label}: lists every workspace tool and calls one`, async () => {
    const { client } = get();
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), workspaceTools.map((t) => t.name).sort());
    const r = (await caller(client)({ name: "fs_read", arguments: { path: "README.md" } })) as { content?: unknown };
    assert.match(textOf(r), /# sample/);
    assert.ok(!JSON.stringify(r).includes(dir()), "relative paths only");
  });

  it(`${label}: a long call reports progress while it runs`, async () => {
    const { client } = get();
    const call = caller(client);
    const id = await quietTerminal(client);
    const updates: Array<{ progress: number; message?: string }> = [];
    let release!: () => void;
    const firstProgress = new Promise<void>((resolve) => {
      release = resolve;
    });
    const running = call(
      { name: "terminal_read", arguments: { id, view: "output", waitMs: 60_000 } },
      {
        onprogress: (p) => {
          updates.push(p);
          release();
        },
        timeout: 180_000,
      },
    );
    await firstProgress;
    // The call is still running: end its wait by giving the terminal output.
    await call({ name: "terminal_write", arguments: { id, data: "done-marker\n" } });
    const r = (await running) as { content?: unknown };
    assert.match(textOf(r), /done-marker/);
    assert.ok(updates.length >= 1);
    assert.match(updates[0]?.message ?? "", /terminal_read still running/);
    await call({ name: "terminal_kill", arguments: { id } });
  });

  it(`${label}: a cancelled call ends on the server, and the connection keeps serving`, async () => {
    const { client, stderr } = get();
    const id = await quietTerminal(client);
    const abort = new AbortController();
    const call = caller(client)(
      { name: "terminal_read", arguments: { id, view: "output", waitMs: 60_000 } },
      { signal: abort.signal, onprogress: () => abort.abort(new Error("the test cancels")), timeout: 180_000 },
    );
    await assert.rejects(call);
    // The server's side of the call ended (its wait was aborted), and says so in its debug log.
    const deadline = Date.now() + 30_000;
    while (!/tools\/call terminal_read: cancelled by the client/.test(stderr()) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.match(stderr(), /tools\/call terminal_read: cancelled by the client/);
    const r = (await caller(client)({ name: "workspace_status", arguments: {} })) as { isError?: boolean };
    assert.equal(r.isError, undefined);
    await caller(client)({ name: "terminal_kill", arguments: { id } });
  });
}

describe("ccb serve --stdio, both MCP eras", { timeout: 300_000 }, () => {
  const dir = tmpdirFixture();
  let modern: ModernStdio;
  let legacy: StdioPeer;

  before(async () => {
    writeFileSync(join(dir.path, "README.md"), "# sample\n");
    modern = await modernStdio(dir.path);
    legacy = await connectStdio(dir.path, ["--log-level", "debug"]);
  });
  after(async () => {
    await modern?.close();
    await legacy?.close();
    dir.cleanup();
  });

  it("a 2026-07-28 client connects by server/discover: no handshake, ccb's info, instructions", () => {
    assert.equal(modern.client.getNegotiatedProtocolVersion(), MODERN);
    assert.equal(modern.client.getServerVersion()?.name, "ccb");
    assert.match(modern.client.getInstructions() ?? "", /confined workspace/);
    assert.ok(modern.client.getServerCapabilities()?.tools);
  });

  it("a 2025-11-25 client still opens with initialize", () => {
    assert.equal(legacy.client.getServerVersion()?.name, "ccb");
    assert.ok(legacy.client.getServerCapabilities()?.logging, "the 2025 era keeps MCP logging");
  });

  sharedBehaviour(
    "2026-07-28",
    () => modern,
    () => dir.path,
  );
  sharedBehaviour(
    "2025-11-25",
    () => legacy,
    () => dir.path,
  );

  it("an auto-negotiating 2.x client (what claude does) ends in the new era, with no fallback", async () => {
    const { command, args } = ccbCommand(["serve", "--no-workbench", "--stdio", "--workspace", dir.path]);
    const client = new Client({ name: "auto", version: "1" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(new StdioClientTransport({ command, args, env: cleanEnv(), stderr: "pipe" }));
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
    } finally {
      await client.close();
    }
  });
});

/** `ccb serve --stdio` spoken to line by line, as a host that writes its own frames would. */
class RawStdio {
  readonly child: ChildProcessWithoutNullStreams;
  readonly #waiting = new Map<string | number, (m: Record<string, unknown>) => void>();
  readonly #got = new Map<string | number, Record<string, unknown>>();

  constructor(workspace: string) {
    const { command, args } = ccbCommand(["serve", "--no-workbench", "--stdio", "--workspace", workspace]);
    this.child = spawn(command, args, { env: cleanEnv(), stdio: "pipe" });
    createInterface({ input: this.child.stdout }).on("line", (line) => {
      const m = JSON.parse(line) as Record<string, unknown>;
      const id = m.id as string | number;
      const w = this.#waiting.get(id);
      if (w) w(m);
      else this.#got.set(id, m);
    });
  }

  ask(message: Record<string, unknown>): Promise<Record<string, unknown>> {
    const id = message.id as string | number;
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
    const early = this.#got.get(id);
    if (early) return Promise.resolve(early);
    return new Promise((resolve) => this.#waiting.set(id, resolve));
  }

  close(): void {
    this.child.stdin.end();
    this.child.kill();
  }
}

describe("the 2026-07-28 wire rules on stdio", { timeout: 120_000 }, () => {
  const dir = tmpdirFixture();
  let raw: RawStdio;
  before(() => {
    writeFileSync(join(dir.path, "README.md"), "# sample\n");
    raw = new RawStdio(dir.path);
  });
  after(() => {
    raw.close();
    dir.cleanup();
  });

  it("a tools/call is answered with no handshake before it, with resultType", async () => {
    const r = await raw.ask({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "fs_read", arguments: { path: "README.md" }, _meta: envelope() },
    });
    const result = r.result as { resultType: string; content: Array<{ text: string }> };
    assert.equal(result.resultType, "complete");
    assert.match(result.content[0]?.text ?? "", /# sample/);
  });

  it("server/discover names the versions, the capabilities with the tools, and ccb", async () => {
    const r = await raw.ask({ jsonrpc: "2.0", id: 2, method: "server/discover", params: { _meta: envelope() } });
    const result = r.result as {
      supportedVersions: string[];
      capabilities: Record<string, unknown>;
      _meta: Record<string, { name: string }>;
      instructions: string;
    };
    assert.deepEqual(result.supportedVersions, [MODERN]);
    assert.ok(result.capabilities.tools);
    assert.equal(result._meta["io.modelcontextprotocol/serverInfo"]?.name, "ccb");
    assert.match(result.instructions, /workspace_status/);
  });

  it("a version ccb does not speak gets -32022 with the versions it does, on any request", async () => {
    for (const [id, method] of [
      [3, "tools/list"],
      [4, "server/discover"],
    ] as const) {
      const r = await raw.ask({ jsonrpc: "2.0", id, method, params: { _meta: envelope("2099-01-01") } });
      const error = r.error as { code: number; data: { supported: string[] } };
      assert.equal(error.code, -32022, JSON.stringify(r));
      assert.deepEqual(error.data.supported, [MODERN]);
    }
  });

  it("a request of the new era without its version in _meta is refused, naming what is missing", async () => {
    const r = await raw.ask({ jsonrpc: "2.0", id: 5, method: "tools/list", params: {} });
    const error = r.error as { code: number; message: string };
    assert.equal(error.code, -32602, JSON.stringify(r));
    assert.match(error.message, /protocolVersion/);
  });

  it("a method the new era removed is -32601, not a call with bad params", async () => {
    for (const [id, method] of [
      [20, "initialize"],
      [21, "logging/setLevel"],
    ] as const) {
      const r = await raw.ask({ jsonrpc: "2.0", id, method, params: { _meta: envelope() } });
      assert.equal((r.error as { code: number }).code, -32601, JSON.stringify(r));
    }
  });

  it("bad params get one -32602 text naming the field (positive control: the same call well-formed works)", async () => {
    const bad = await raw.ask({
      jsonrpc: "2.0",
      id: 6,
      method: "tools/call",
      params: { name: 7, _meta: envelope() },
    });
    assert.deepEqual(bad.error, {
      code: -32602,
      message: "Invalid params for tools/call: name: Invalid input: expected string, received number",
    });
    const good = await raw.ask({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "workspace_status", arguments: {}, _meta: envelope() },
    });
    assert.ok(good.result, JSON.stringify(good));
  });
});

describe("ccb serve --http, both MCP eras", { timeout: 300_000 }, () => {
  const dir = tmpdirFixture();
  let serve: HttpServe;
  let modern: Client;
  let legacy: LegacyClient;
  const token = `${"t".repeat(8)}0123456789abcdef0123456789abcdef`;

  before(async () => {
    writeFileSync(join(dir.path, "README.md"), "# sample\n");
    serve = await startHttpServe(dir.path, ["--log-level", "debug"], { CCB_AUTH_TOKEN: token });
    const auth = { headers: { authorization: `Bearer ${token}` } };
    modern = modernClient();
    await modern.connect(new StreamableHTTPClientTransport(new URL(serve.url), { requestInit: auth }));
    legacy = new LegacyClient({ name: "legacy", version: "1" });
    await legacy.connect(new LegacyHttpTransport(new URL(serve.url), { requestInit: auth }));
  });
  after(async () => {
    await modern?.close();
    await legacy?.close();
    await serve?.stop();
    dir.cleanup();
  });

  it("the 2026-07-28 client needs no session; the 2025 client still gets one", () => {
    assert.equal(modern.getNegotiatedProtocolVersion(), MODERN);
    assert.equal(modern.getServerVersion()?.name, "ccb");
    assert.equal(legacy.getServerVersion()?.name, "ccb");
  });

  sharedBehaviour(
    "HTTP 2026-07-28",
    () => ({ client: modern, stderr: serve.stderr }),
    () => dir.path,
  );
  sharedBehaviour(
    "HTTP 2025-11-25",
    () => ({ client: legacy, stderr: serve.stderr }),
    () => dir.path,
  );

  const post = async (body: unknown, headers: Record<string, string> = {}) => {
    const r = await fetch(serve.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${token}`,
        ...headers,
      },
      body: JSON.stringify(body),
    });
    const text = await r.text();
    const json = text.startsWith("{") ? (JSON.parse(text) as Record<string, unknown>) : { text };
    return { status: r.status, session: r.headers.get("mcp-session-id"), json };
  };
  const modernHeaders = (method: string, name?: string, version = MODERN) => ({
    "mcp-protocol-version": version,
    "mcp-method": method,
    ...(name ? { "mcp-name": name } : {}),
  });

  it("any POST with matching headers is answered on its own, and no Mcp-Session-Id is issued", async () => {
    const r = await post(
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "fs_read", arguments: { path: "README.md" }, _meta: envelope() },
      },
      modernHeaders("tools/call", "fs_read"),
    );
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.session, null);
    assert.match(JSON.stringify(r.json), /# sample/);
  });

  it("a header that disagrees with the body is refused with 400 (control above: the same call agreeing works)", async () => {
    const body = {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "fs_read", arguments: { path: "README.md" }, _meta: envelope() },
    };
    for (const headers of [
      modernHeaders("tools/call", "fs_write"),
      modernHeaders("tools/list", "fs_read"),
      { "mcp-method": "tools/call", "mcp-name": "fs_read" },
    ]) {
      const r = await post(body, headers);
      assert.equal(r.status, 400, JSON.stringify({ headers, r }));
      assert.equal((r.json.error as { code: number }).code, -32020);
    }
  });

  it("a version ccb does not speak: HTTP 400 and -32022 with the supported versions", async () => {
    const r = await post(
      { jsonrpc: "2.0", id: 3, method: "tools/list", params: { _meta: envelope("2099-01-01") } },
      modernHeaders("tools/list", undefined, "2099-01-01"),
    );
    assert.equal(r.status, 400);
    assert.deepEqual((r.json.error as { code: number; data: { supported: string[] } }).code, -32022);
    assert.deepEqual((r.json.error as { data: { supported: string[] } }).data.supported, [MODERN]);
  });

  it("bad params: the same -32602 text as on stdio", async () => {
    const r = await post(
      { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: 7, _meta: envelope() } },
      modernHeaders("tools/call", "7"),
    );
    assert.deepEqual(r.json.error, {
      code: -32602,
      message: "Invalid params for tools/call: name: Invalid input: expected string, received number",
    });
  });

  it("a method the new era removed (initialize, ping, logging/setLevel) is 404 and -32601, whatever its params", async () => {
    for (const method of ["initialize", "ping", "logging/setLevel"]) {
      const r = await post({ jsonrpc: "2.0", id: 6, method, params: { _meta: envelope() } }, modernHeaders(method));
      assert.equal(r.status, 404, `${method}: ${JSON.stringify(r.json)}`);
      assert.equal((r.json.error as { code: number }).code, -32601, method);
      assert.equal(r.json.id, 6);
    }
    // control: a 2025 client's initialize (no envelope) still opens a session
    const legacyInit = await post({
      jsonrpc: "2.0",
      id: 7,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    assert.equal(legacyInit.status, 200, JSON.stringify(legacyInit.json));
    assert.ok(legacyInit.session, "a session");
  });

  it("one edge policy for both eras: no bearer, a hostile Host or Origin are refused before either era", async () => {
    const body = { jsonrpc: "2.0", id: 5, method: "tools/list", params: { _meta: envelope() } };
    const noToken = await fetch(serve.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", ...modernHeaders("tools/list") },
      body: JSON.stringify(body),
    });
    assert.equal(noToken.status, 401);
    const origin = await post(body, { ...modernHeaders("tools/list"), origin: "https://evil.example" });
    assert.equal(origin.status, 403);
    const legacyInit = await post({
      jsonrpc: "2.0",
      id: 6,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    });
    assert.equal(legacyInit.status, 200, "control: a well-formed request of either era passes the edge");
    assert.ok(legacyInit.session, "the 2025 era's initialize still opens a session");
  });
});
