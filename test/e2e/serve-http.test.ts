import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { workspaceTools } from "../../src/tools/catalog.ts";
import { spawnCcb } from "../helpers/cli.ts";
import { e2e } from "../helpers/fixture.ts";
import {
  cleanEnv,
  connectHttp,
  INITIALIZE,
  MCP_POST_HEADERS,
  rawRequest,
  rpcMessages,
  waitExit,
  waitForOutput,
} from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

describe("ccb serve --http with the MCP SDK client", { timeout: 180_000 }, () => {
  const f = e2e({ git: true, http: {} });

  it("prints a 127.0.0.1 URL for port 0", () => {
    assert.match(f.http.base, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(new URL(f.http.base).port, "0");
  });

  it("lists every registry tool over Streamable HTTP", async () => {
    const client = await f.serveClient();
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), workspaceTools.map((t) => t.name).sort());
    await assert.rejects(
      client.callTool({ name: "nope", arguments: {} }),
      (err: unknown) => err instanceof McpError && err.code === -32602,
    );
  });

  it("/healthz reports ok, version and bridge status without auth", async () => {
    const r = await rawRequest(`${f.http.base}/healthz`);
    assert.equal(r.status, 200);
    const body = JSON.parse(r.body) as { ok: boolean; version: string; bridge: { connected: boolean; reason: string } };
    assert.equal(body.ok, true);
    assert.match(body.version, /^\d+\.\d+\.\d+/);
    assert.equal(body.bridge.connected, false);
    assert.ok(body.bridge.reason.length > 0);
  });

  it("keeps one session per client and ends a session on DELETE", async () => {
    const a = new StreamableHTTPClientTransport(new URL(f.http.url));
    const b = new StreamableHTTPClientTransport(new URL(f.http.url));
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const ca = new Client({ name: "a", version: "1" });
    const cb = new Client({ name: "b", version: "1" });
    await ca.connect(a);
    await cb.connect(b);
    f.defer(() => cb.close().catch(() => {}));
    assert.ok(a.sessionId && b.sessionId && a.sessionId !== b.sessionId);
    const before = (JSON.parse((await rawRequest(`${f.http.base}/healthz`)).body) as { sessions: number }).sessions;
    const oldId = a.sessionId;
    await a.terminateSession();
    await ca.close();
    const afterDelete = (JSON.parse((await rawRequest(`${f.http.base}/healthz`)).body) as { sessions: number })
      .sessions;
    assert.equal(afterDelete, before - 1);
    const r = await rawRequest(f.http.url, {
      method: "POST",
      headers: { ...MCP_POST_HEADERS, "mcp-session-id": oldId, "mcp-protocol-version": "2025-06-18" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    });
    assert.equal(r.status, 404);
    assert.equal(rpcMessages(r.body)[0]?.error?.code, -32001);
    // the other session is untouched
    assert.ok((await cb.listTools()).tools.length > 0);
  });

  it("answers malformed JSON with -32700 and keeps serving", async () => {
    const r = await rawRequest(f.http.url, { method: "POST", headers: MCP_POST_HEADERS, body: '{"jsonrpc":"2.0",' });
    assert.equal(r.status, 400);
    assert.equal(rpcMessages(r.body)[0]?.error?.code, -32700);
    const c = await f.serveClient();
    assert.ok((await c.listTools()).tools.length > 0);
  });

  it("answers bad params of a known method inside a session with -32602", async () => {
    const init = await rawRequest(f.http.url, { method: "POST", headers: MCP_POST_HEADERS, body: INITIALIZE });
    const sid = String(init.headers["mcp-session-id"]);
    const r = await rawRequest(f.http.url, {
      method: "POST",
      headers: { ...MCP_POST_HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: ["x"] } }),
    });
    const e = rpcMessages(r.body)[0]?.error;
    assert.equal(e?.code, -32602);
    assert.match(e?.message ?? "", /Invalid params for tools\/call: name: /);
    await rawRequest(f.http.url, {
      method: "DELETE",
      headers: { "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18" },
    });
  });

  it("refuses a non-initialize request without a session id", async () => {
    const r = await rawRequest(f.http.url, {
      method: "POST",
      headers: MCP_POST_HEADERS,
      body: JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/list" }),
    });
    assert.equal(r.status, 400);
    assert.match(rpcMessages(r.body)[0]?.error?.message ?? "", /initialize/);
  });

  it("serves initialize over a raw POST as an SSE or JSON response carrying a session id", async () => {
    const r = await rawRequest(f.http.url, { method: "POST", headers: MCP_POST_HEADERS, body: INITIALIZE });
    assert.equal(r.status, 200);
    assert.ok(r.headers["mcp-session-id"]);
    const msg = rpcMessages(r.body)[0] as { result: { serverInfo: { name: string } } };
    assert.equal(msg.result.serverInfo.name, "ccb");
  });

  it("404s unknown paths and 405s wrong methods on known ones", async () => {
    assert.equal((await rawRequest(`${f.http.base}/nothing-here`)).status, 404);
    assert.equal((await rawRequest(`${f.http.base}/healthz`, { method: "POST", body: "{}" })).status, 405);
  });
});

describe("ccb serve --stdio --http together", { timeout: 120_000 }, () => {
  const dir = tmpdirFixture();
  after(() => dir.cleanup());

  it("answers on both transports from one process and exits 0 when stdin ends", async () => {
    const child = spawnCcb(["serve", "--no-workbench", "--stdio", "--http", "--port", "0", "--workspace", dir.path], {
      env: cleanEnv(),
    });
    let out = "";
    let err = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
    const m = await waitForOutput(child.stderr!, () => err, /listening on (http:\/\/\S+\/mcp)/);
    await waitForOutput(child.stderr!, () => err, /stdio ready/);
    const client = await connectHttp(m[1] as string);
    assert.ok((await client.listTools()).tools.length > 0);
    child.stdin!.write(`${INITIALIZE}\n${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })}\n`);
    await waitForOutput(child.stdout!, () => out, /"id":2[,}]/);
    await client.close();
    child.stdin!.end();
    assert.deepEqual(await waitExit(child), { code: 0, signal: null });
    // stdout carried only protocol frames
    for (const line of out.trim().split("\n")) assert.equal((JSON.parse(line) as { jsonrpc: string }).jsonrpc, "2.0");
  });
});
