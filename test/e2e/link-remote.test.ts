import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import * as acp from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import WebSocket from "ws";
import { type AcpCtx, acpTurn } from "../helpers/acp-turn.ts";
import { repoRoot, spawnCcb } from "../helpers/cli.ts";
import { pidAlive, stopProcess, until, waitForOutput } from "../helpers/process.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

/**
 * `ccb link` on ACP's remote transport: `/acp` as Streamable HTTP and as a WebSocket upgrade, with
 * the SDK's own clients (createHttpStream, createWebSocketStream) against a real stdio ACP agent.
 * The agent command first appends its pid to a file: that file is the count of agents started.
 */
const MAX = 1024 * 1024;
const TOKEN = "link-remote-token-0123456789abcdef";
const home = tmpdirFixture({ prefix: "ccb-link-remote-" });
const startedFile = join(home.path, "agents-started");
const agentArgv = [
  "/bin/sh",
  "-c",
  'echo $$ >> "$0"; exec "$@"',
  startedFile,
  process.execPath,
  "--import",
  "tsx",
  join(repoRoot, "test/fixtures/acp-test-agent.ts"),
];

interface Link {
  child: ChildProcess;
  port: number;
  http: string;
  ws: string;
}

async function startLink(env: Record<string, string>): Promise<Link> {
  const child = spawnCcb(
    ["link", "--port", "0", "--host", "127.0.0.1", "--max-message-size", String(MAX), "--", ...agentArgv],
    {
      cwd: repoRoot,
      env: { ...process.env, ACP_AUTH_TOKEN: TOKEN, XDG_CONFIG_HOME: join(home.path, "config"), ...env },
    },
  );
  child.stderr?.resume();
  const m = await waitForOutput(child, /listening on (ws:\/\/127\.0\.0\.1:(\d+)\/acp) \(WebSocket\) and (http:\S+)/);
  return { child, port: Number(m[2]), ws: m[1] as string, http: m[3] as string };
}

function started(): number[] {
  let text = "";
  try {
    text = readFileSync(startedFile, "utf8");
  } catch {
    return [];
  }
  return text.split("\n").filter(Boolean).map(Number);
}

/** initialize + session/new + a prompt (with the agent's permission request), with the SDK's client. */
const turn = (stream: acp.Stream, text = "hello", work?: (ctx: AcpCtx, sessionId: string) => Promise<void>) =>
  acpTurn(stream, { name: "link-remote-test", cwd: repoRoot, text, meta: { permissionMode: "plan" }, work });

/** The SDK's fetch option, recording what the HTTP client sent and was answered. */
function recordingFetch(log: { method: string; cookie: string | null; setCookie: string | null }[]): typeof fetch {
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    const res = await fetch(input, init);
    log.push({
      method: init?.method ?? "GET",
      cookie: headers.get("cookie"),
      setCookie: res.headers.get("set-cookie"),
    });
    return res;
  };
}

/** One raw HTTP request (exact headers, no client logic), answered with status, headers and body. */
function raw(
  port: number,
  o: { method: string; path?: string; headers: Record<string, string>; body?: string; upgrade?: boolean },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const headers = { ...o.headers };
    if (o.upgrade)
      Object.assign(headers, {
        connection: "Upgrade",
        upgrade: "websocket",
        "sec-websocket-version": "13",
        "sec-websocket-key": Buffer.from("0123456789abcdef").toString("base64"),
      });
    const req = request({ host: "127.0.0.1", port, method: o.method, path: o.path ?? "/acp", headers, setHost: false });
    req.on("upgrade", (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body: "" });
    });
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(o.body);
  });
}

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: 1, clientCapabilities: {} },
});

describe("ccb link on ACP's remote transport (/acp: Streamable HTTP and WebSocket)", () => {
  let link: Link;
  const host = () => `127.0.0.1:${link.port}`;
  const bearer = { authorization: `Bearer ${TOKEN}` };

  before(async () => {
    writeFileSync(startedFile, "");
    link = await startLink({ ACP_PERMISSION_MODE: "acceptEdits", CCB_LINK_INSTANCE: "alpha" });
  });
  after(async () => {
    await stopProcess(link.child);
    home.cleanup();
  });

  it("the SDK's Streamable HTTP client runs a turn; the affinity cookie is set and returned", async () => {
    const seen: { method: string; cookie: string | null; setCookie: string | null }[] = [];
    const count0 = started().length;
    const r = await turn(createHttpStream(link.http, { headers: bearer, fetch: recordingFetch(seen) }));
    assert.equal(r.result.stopReason, "end_turn");
    assert.deepEqual(r.updates, ["echo: hello", "permission: allow"]);
    // The client's permission mode reached the agent through session/new's _meta.
    assert.equal((r.session._meta as { permissionMode: string }).permissionMode, "plan");
    assert.equal(started().length, count0 + 1, "one agent for the connection");
    const init = seen[0];
    assert.equal(init?.method, "POST");
    assert.match(init?.setCookie ?? "", /^ccb_link_affinity=alpha; Path=\/acp; HttpOnly; SameSite=Strict$/);
    const later = seen.slice(1);
    assert.ok(later.length >= 3, `requests after initialize: ${JSON.stringify(later)}`);
    for (const s of later) assert.equal(s.cookie, "ccb_link_affinity=alpha", `${s.method} returns the cookie`);
  });

  it("the SDK's WebSocket client (bearer in headers) runs a turn", async () => {
    const count0 = started().length;
    const r = await turn(createWebSocketStream(link.ws, { WebSocket: WebSocket as never, headers: bearer }));
    assert.equal(r.result.stopReason, "end_turn");
    assert.deepEqual(r.updates, ["echo: hello", "permission: allow"]);
    assert.equal((r.session._meta as { permissionMode: string }).permissionMode, "plan");
    assert.equal(started().length, count0 + 1);
  });

  it("the WebSocket upgrade carries the Acp-Connection-Id and the affinity cookie", async () => {
    const ws = new WebSocket(link.ws, { headers: bearer });
    const headers = await new Promise<Record<string, string | string[] | undefined>>((resolve, reject) => {
      ws.once("upgrade", (res) => resolve(res.headers));
      ws.once("error", reject);
    });
    assert.match(String(headers["acp-connection-id"]), /^[0-9a-f-]{36}$/);
    assert.deepEqual(headers["set-cookie"], ["ccb_link_affinity=alpha; Path=/acp; HttpOnly; SameSite=Strict"]);
    ws.close();
  });

  it("refuses unauthenticated, wrong-token, foreign-Origin and hostile-Host requests on both transports, starting no agent", async () => {
    const count0 = started().length;
    const attacks: [string, Record<string, string>, number][] = [
      ["no token", { host: host() }, 401],
      ["wrong token", { host: host(), authorization: `Bearer ${TOKEN.slice(0, -1)}x` }, 401],
      ["other-length token", { host: host(), authorization: `Bearer ${TOKEN}x` }, 401],
      [
        "wrong rcs.auth subprotocol",
        { host: host(), "sec-websocket-protocol": `rcs.auth.${Buffer.from("nope").toString("base64url")}` },
        401,
      ],
      ["foreign Origin", { host: host(), ...bearer, origin: "https://evil.example" }, 403],
      ["Origin null", { host: host(), ...bearer, origin: "null" }, 403],
      ["hostile Host", { host: `evil.example:${link.port}`, ...bearer }, 403],
      ["rebinding Host", { host: `127.0.0.1.evil.example:${link.port}`, ...bearer }, 403],
    ];
    for (const [name, headers, status] of attacks) {
      const post = await raw(link.port, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: INITIALIZE,
      });
      assert.equal(post.status, status, `HTTP POST initialize, ${name}`);
      assert.equal(post.headers["acp-connection-id"], undefined);
      const sse = await raw(link.port, { method: "GET", headers: { ...headers, accept: "text/event-stream" } });
      assert.equal(sse.status, status, `HTTP GET, ${name}`);
      const up = await raw(link.port, { method: "GET", headers, upgrade: true });
      assert.equal(up.status, status, `WebSocket upgrade, ${name}`);
    }
    // The SDK's own clients, refused the same way.
    await assert.rejects(turn(createHttpStream(link.http, { headers: { authorization: "Bearer wrong" } })));
    await assert.rejects(
      turn(createWebSocketStream(link.ws, { WebSocket: WebSocket as never, headers: { authorization: "Bearer x" } })),
    );
    assert.equal(started().length, count0, "no agent started for a refused request");

    // Positive controls: the same requests with the right credential start exactly one agent each.
    const ok = await raw(link.port, {
      method: "POST",
      headers: { host: host(), ...bearer, "content-type": "application/json" },
      body: INITIALIZE,
    });
    assert.equal(ok.status, 200);
    const connectionId = ok.headers["acp-connection-id"] as string;
    assert.equal(started().length, count0 + 1);
    const proto = `rcs.auth.${Buffer.from(TOKEN).toString("base64url")}`;
    const ws = new WebSocket(link.ws, [proto]);
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    assert.equal(ws.protocol, proto, "the rcs.auth subprotocol is accepted and echoed");
    // An accepted WebSocket that has sent nothing has started nothing yet...
    assert.equal(started().length, count0 + 1);
    const answer = new Promise<{ id: number; result: { _meta: { pid: number } } }>((resolve) =>
      ws.once("message", (d) => resolve(JSON.parse(d.toString()))),
    );
    ws.send(INITIALIZE);
    // ...its initialize starts its agent.
    const { result } = await answer;
    assert.equal(started().length, count0 + 2);
    assert.equal(started().at(-1), result._meta.pid);
    ws.close();
    await until(() => !pidAlive(result._meta.pid), "the WebSocket's agent to stop with its connection");
    const del = await raw(link.port, {
      method: "DELETE",
      headers: { host: host(), ...bearer, "acp-connection-id": connectionId },
    });
    assert.equal(del.status, 202);
  });

  it("answers bad input with clear JSON-RPC errors and keeps serving", async () => {
    const h = { host: host(), ...bearer, "content-type": "application/json" };
    const parse = await raw(link.port, { method: "POST", headers: h, body: "{not json" });
    assert.equal(parse.status, 400);
    assert.equal(JSON.parse(parse.body).error.code, -32700);
    const batch = await raw(link.port, { method: "POST", headers: h, body: `[${INITIALIZE}]` });
    assert.equal(batch.status, 400);
    assert.equal(JSON.parse(batch.body).error.code, -32600);
    const media = await raw(link.port, {
      method: "POST",
      headers: { ...h, "content-type": "text/plain" },
      body: INITIALIZE,
    });
    assert.equal(media.status, 415);
    assert.match(JSON.parse(media.body).error.message, /Content-Type: application\/json/);
    const noConn = await raw(link.port, {
      method: "POST",
      headers: h,
      body: JSON.stringify({ jsonrpc: "2.0", id: "q1", method: "session/list", params: {} }),
    });
    assert.equal(noConn.status, 400);
    assert.deepEqual(
      { id: JSON.parse(noConn.body).id, code: JSON.parse(noConn.body).error.code },
      { id: "q1", code: -32600 },
    );
    assert.match(JSON.parse(noConn.body).error.message, /Acp-Connection-Id/);
    const gone = await raw(link.port, {
      method: "POST",
      headers: { ...h, "acp-connection-id": "00000000-0000-4000-8000-000000000000" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "session/list", params: {} }),
    });
    assert.equal(gone.status, 404);
    assert.equal(JSON.parse(gone.body).id, 9);
    assert.match(JSON.parse(gone.body).error.message, /connection has ended/);
    const big = await raw(link.port, {
      method: "POST",
      headers: h,
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "initialize", params: { pad: "x".repeat(MAX) } }),
    });
    assert.equal(big.status, 413);
    // A WebSocket's bad frames: JSON-RPC errors, and the connection stays.
    const ws = new WebSocket(link.ws, { headers: bearer });
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    const replies: { id: unknown; error?: { code: number } }[] = [];
    const three = new Promise<void>((resolve) =>
      ws.on("message", (d) => {
        replies.push(JSON.parse(d.toString()));
        if (replies.length === 3) resolve();
      }),
    );
    ws.send("{not json");
    ws.send("[1]");
    ws.send(INITIALIZE);
    await three;
    assert.deepEqual(
      replies.map((r) => r.error?.code ?? r.id),
      [-32700, -32600, 1],
    );
    ws.close();
    // And the link still serves a whole turn.
    const r = await turn(createHttpStream(link.http, { headers: bearer }));
    assert.equal(r.result.stopReason, "end_turn");
  });

  it("an agent exiting ends its own connection only; the link and other connections go on", async () => {
    const other = createHttpStream(link.http, { headers: bearer });
    const survivor = turn(other, "hello", async (ctx, sessionId) => {
      // Kill the first connection's agent while this one is open, then use this one again.
      const dying = await raw(link.port, {
        method: "POST",
        headers: { host: host(), ...bearer, "content-type": "application/json" },
        body: INITIALIZE,
      });
      const id = dying.headers["acp-connection-id"] as string;
      const pid = (JSON.parse(dying.body) as { result: { _meta: { pid: number } } }).result._meta.pid;
      const post = (body: object, extra: Record<string, string> = {}) =>
        raw(link.port, {
          method: "POST",
          headers: { host: host(), ...bearer, "content-type": "application/json", "acp-connection-id": id, ...extra },
          body: JSON.stringify(body),
        });
      await post({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: repoRoot, mcpServers: [] } });
      const die = await post(
        {
          jsonrpc: "2.0",
          id: 3,
          method: "session/prompt",
          params: { sessionId: `s-${pid}`, prompt: [{ type: "text", text: "die" }] },
        },
        { "acp-session-id": `s-${pid}` },
      );
      assert.equal(die.status, 202);
      await until(() => !pidAlive(pid), "the agent to exit");
      await until(
        async () => (await post({ jsonrpc: "2.0", id: 4, method: "session/list", params: {} })).status === 404,
        "its connection to end",
      );
      const again = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "still here" }],
      });
      assert.equal(again.stopReason, "end_turn");
    });
    const r = await survivor;
    assert.equal(r.result.stopReason, "end_turn");
    assert.ok(r.updates.includes("echo: still here"));
    const health = await fetch(`http://${host()}/health`);
    assert.equal(health.status, 200);
  });

  it("a connection of another link instance is answered 421 by its cookie (404 without one)", async () => {
    const h = { host: host(), ...bearer, "content-type": "application/json" };
    const body = JSON.stringify({ jsonrpc: "2.0", id: 5, method: "session/list", params: {} });
    const foreign = "11111111-1111-4111-8111-111111111111";
    const misrouted = await raw(link.port, {
      method: "POST",
      headers: { ...h, "acp-connection-id": foreign, cookie: "ccb_link_affinity=beta" },
      body,
    });
    assert.equal(misrouted.status, 421);
    assert.match(JSON.parse(misrouted.body).error.message, /another ccb link instance.*this is alpha/);
    const sse = await raw(link.port, {
      method: "GET",
      headers: {
        host: host(),
        ...bearer,
        accept: "text/event-stream",
        "acp-connection-id": foreign,
        cookie: "ccb_link_affinity=beta",
      },
    });
    assert.equal(sse.status, 421);
    // Controls: no cookie, or this instance's cookie, on an unknown connection: 404.
    for (const cookie of [undefined, "ccb_link_affinity=alpha"]) {
      const r = await raw(link.port, {
        method: "POST",
        headers: { ...h, "acp-connection-id": foreign, ...(cookie ? { cookie } : {}) },
        body,
      });
      assert.equal(r.status, 404, `cookie ${cookie}`);
    }
  });
});

describe("ccb link: a Streamable HTTP client that leaves without DELETE", () => {
  it("has its connection and agent closed when idle; a connection with an open stream stays", async () => {
    const link = await startLink({ CCB_LINK_HTTP_IDLE_MS: "1500" });
    try {
      const headers = {
        host: `127.0.0.1:${link.port}`,
        authorization: `Bearer ${TOKEN}`,
        "content-type": "application/json",
      };
      const open = async () => {
        const r = await raw(link.port, { method: "POST", headers, body: INITIALIZE });
        assert.equal(r.status, 200);
        return {
          id: r.headers["acp-connection-id"] as string,
          pid: (JSON.parse(r.body) as { result: { _meta: { pid: number } } }).result._meta.pid,
        };
      };
      // A: older, but holds its SSE stream open (as the SDK's client does while it lives).
      const a = await open();
      const stream = request({
        host: "127.0.0.1",
        port: link.port,
        method: "GET",
        path: "/acp",
        headers: { ...headers, accept: "text/event-stream", "acp-connection-id": a.id },
      });
      const streaming = new Promise<void>((resolve, reject) =>
        stream.once("response", () => resolve()).once("error", reject),
      );
      stream.end();
      await streaming;
      // B: initialized, then abandoned.
      const b = await open();
      await until(() => !pidAlive(b.pid), "the abandoned connection's agent to be stopped");
      assert.equal(pidAlive(a.pid), true, "the connection with an open stream is not idle");
      const after = await raw(link.port, {
        method: "POST",
        headers: { ...headers, "acp-connection-id": b.id },
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/list", params: {} }),
      });
      assert.equal(after.status, 404, "the idle connection is gone");
      stream.destroy();
      await until(() => !pidAlive(a.pid), "A's agent to stop once its stream is gone and it idles");
    } finally {
      await stopProcess(link.child);
    }
  });
});
