import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ccbCommand, spawnCcb } from "./cli.ts";
import { tmpdirFixture } from "./tmp.ts";

/** Shared helpers of the `ccb serve` end-to-end tests: spawn the real CLI, connect real SDK clients. */

/**
 * A private XDG_STATE_HOME for the ccb processes this test process spawns (one per test file, made
 * on first use, removed at exit): their state (checkpoint stores, workbench records) never lands
 * in the real home. A test that sets HOME or XDG_STATE_HOME itself keeps what it set.
 */
let stateHome: string | undefined;
function privateStateHome(): string {
  if (!stateHome) {
    const dir = mkdtempSync(join(tmpdir(), "ccb-test-state-"));
    stateHome = dir;
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  }
  return stateHome;
}

export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined) continue;
    // The server's own settings come from each test, never from the environment of the test run.
    if (k.startsWith("CCB_") && !["CCB_TEST_BIN", "CCB_REPO_ROOT", "CCB_WORKBENCH_GRACE"].includes(k)) continue;
    env[k] = v;
  }
  const own = extra.HOME !== undefined || extra.XDG_STATE_HOME !== undefined;
  return { ...env, ...(own ? {} : { XDG_STATE_HOME: privateStateHome() }), ...extra };
}

export interface StdioPeer {
  client: Client;
  transport: StdioClientTransport;
  pid: number;
  stderr: () => string;
  close(): Promise<void>;
}

/** The real CLI with `cliArgs` (e.g. `serve --stdio ...`) spawned by the SDK's StdioClientTransport, connected with the SDK Client. */
export async function spawnStdioPeer(cliArgs: string[], env: Record<string, string> = {}): Promise<StdioPeer> {
  const { command, args } = ccbCommand(cliArgs);
  const transport = new StdioClientTransport({ command, args, env: cleanEnv(env), stderr: "pipe" });
  let err = "";
  transport.stderr?.on("data", (d: Buffer) => (err += d.toString("utf8")));
  const client = new Client({ name: "ccb-e2e", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport, pid: transport.pid as number, stderr: () => err, close: () => client.close() };
}

/** `ccb serve --stdio --no-workbench` on `workspace`. */
export function connectStdio(
  workspace: string,
  extraArgs: string[] = [],
  env: Record<string, string> = {},
): Promise<StdioPeer> {
  return spawnStdioPeer(["serve", "--no-workbench", "--stdio", "--workspace", workspace, ...extraArgs], env);
}

export interface HttpServe {
  child: ChildProcess;
  /** Base URL, e.g. http://127.0.0.1:41234 */
  base: string;
  /** MCP endpoint URL */
  url: string;
  stderr: () => string;
  /** SIGTERM, wait for exit; returns the exit code. */
  stop(): Promise<number | null>;
}

/** Spawn `ccb serve --http --port 0 ...` (no workbench) and wait for the URL it prints on stderr. */
export function startHttpServe(
  workspace: string,
  extraArgs: string[] = [],
  env: Record<string, string> = {},
): Promise<HttpServe> {
  return spawnHttpServe(["--no-workbench", "--http", "--port", "0", "--workspace", workspace, ...extraArgs], env);
}

/**
 * `ccb serve --http` (no workbench) on a fresh temporary workspace for the enclosing describe block:
 * started in its `before`, stopped in its `after` (asserting a clean exit 0), the workspace removed.
 */
export function httpServeFixture(options: { git?: boolean } = {}): { readonly dir: string; readonly serve: HttpServe } {
  const dir = tmpdirFixture(options);
  let serve: HttpServe | undefined;
  before(async () => {
    serve = await startHttpServe(dir.path);
  });
  after(async () => {
    const code = await serve?.stop();
    dir.cleanup();
    assert.equal(code, 0, "SIGTERM shuts the server down with exit 0");
  });
  return {
    dir: dir.path,
    get serve() {
      if (!serve) throw new Error("ccb serve --http has not started (its before hook failed)");
      return serve;
    },
  };
}

/** Spawn `ccb serve <args>` and wait for the URL of /mcp it prints on stderr. */
export async function spawnHttpServe(args: string[], env: Record<string, string>): Promise<HttpServe> {
  const child = spawnCcb(["serve", ...args], { env: cleanEnv(env) });
  let err = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const base = await new Promise<string>((resolve, reject) => {
    const onData = (d: Buffer) => {
      err += d.toString("utf8");
      const m = /listening on (https?:\/\/\S+)\/mcp/.exec(err);
      if (m) {
        child.stderr?.off("data", onData);
        child.stderr?.on("data", (more: Buffer) => (err += more.toString("utf8")));
        resolve(m[1] as string);
      }
    };
    child.stderr?.on("data", onData);
    void exited.then((code) => reject(new Error(`ccb serve exited (${code}) before listening:\n${err}`)));
  });
  return {
    child,
    base,
    url: `${base}/mcp`,
    stderr: () => err,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}

export async function connectHttp(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: "ccb-e2e-http", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

/** Wait for a child to exit; resolves with its code and signal. */
export function waitExit(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
}

/** Resolve when `read()` matches `re`, checking on every `data` event of `stream`. */
export function waitForOutput(stream: NodeJS.ReadableStream, read: () => string, re: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve) => {
    const check = () => {
      const m = re.exec(read());
      if (m) {
        stream.off("data", check);
        resolve(m);
      }
    };
    stream.on("data", check);
    check();
  });
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw HTTP(S) request (node:http lets a test set Host and Origin, which fetch forbids). */
export async function rawRequest(
  url: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    ca?: string | Buffer;
    /** The local address to send from (e.g. 127.0.0.2: another client on loopback). */
    localAddress?: string;
  } = {},
): Promise<RawResponse> {
  const u = new URL(url);
  const mod = u.protocol === "https:" ? await import("node:https") : await import("node:http");
  return new Promise((resolve, reject) => {
    const req = mod.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: options.method ?? "GET",
        headers: options.headers ?? {},
        ...(options.ca ? { ca: options.ca } : {}),
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8").on("data", (d: string) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on("error", reject);
      },
    );
    // The server may answer (413) and close before the whole body is sent.
    req.on("error", reject);
    if (options.body !== undefined) req.end(options.body);
    else req.end();
  });
}

export const MCP_POST_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

export const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

/** The JSON-RPC messages of an SSE or JSON response body. */
export function rpcMessages(
  body: string,
): Array<{ id?: unknown; result?: unknown; error?: { code: number; message: string } }> {
  const t = body.trim();
  if (t.startsWith("{") || t.startsWith("[")) return [JSON.parse(t)].flat();
  return t
    .split("\n")
    .filter((l) => l.startsWith("data: "))
    .map((l) => JSON.parse(l.slice(6)));
}
