import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import WebSocket from "ws";
import { acpTurn } from "../helpers/acp-turn.ts";
import { repoRoot, spawnCcb } from "../helpers/cli.ts";
import { pidAlive, stopProcess, until, waitForOutput } from "../helpers/process.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

const TOKEN = "link-test-token-0123456789abcdef";
const testAgent = [process.execPath, "--import", "tsx", join(repoRoot, "test/fixtures/acp-test-agent.ts")];

interface Link {
  child: ChildProcess;
  url: string;
  port: number;
  stderr: () => string;
}

async function startLink(args: string[], env: Record<string, string> = {}, agent: string[] = testAgent): Promise<Link> {
  const child = spawnCcb(["link", "--port", "0", "--host", "127.0.0.1", ...args, "--", ...agent], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
  });
  let err = "";
  child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const m = await waitForOutput(child, /listening on (wss?:\/\/[^\s]+:(\d+)\/acp)/);
  return { child, url: m[1] as string, port: Number(m[2]), stderr: () => err };
}

/** An upgrade attempt that reports the HTTP status when refused. */
function tryUpgrade(
  url: string,
  options: { headers?: Record<string, string>; protocols?: string[] } = {},
): Promise<{ opened: boolean; status?: number; protocol?: string; ws?: WebSocket }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, options.protocols ?? [], { headers: options.headers ?? {} });
    ws.on("open", () => resolve({ opened: true, protocol: ws.protocol, ws }));
    ws.on("unexpected-response", (_req, res) => {
      resolve({ opened: false, status: res.statusCode ?? 0 });
      res.resume();
    });
    ws.on("error", () => resolve({ opened: false }));
  });
}

/** A full ACP exchange through the link with the SDK's own WebSocket client. */
const promptThroughLink = (url: string, headers: Record<string, string>, meta?: Record<string, unknown>) =>
  acpTurn(createWebSocketStream(url, { WebSocket: WebSocket as never, headers }), {
    name: "link-test",
    cwd: repoRoot,
    ...(meta ? { meta } : {}),
  });

describe("ccb link", () => {
  const home = tmpdirFixture({ prefix: "ccb-link-home-" });
  let link: Link;

  before(async () => {
    link = await startLink([], {
      ACP_AUTH_TOKEN: TOKEN,
      XDG_CONFIG_HOME: join(home.path, "config"),
      ACP_PERMISSION_MODE: "acceptEdits",
    });
  });
  after(async () => {
    await stopProcess(link.child);
    home.cleanup();
  });

  it("serves /health", async () => {
    const res = await fetch(`http://127.0.0.1:${link.port}/health`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { ok: boolean; name: string };
    assert.equal(body.ok, true);
    assert.equal(body.name, "ccb link");
  });

  it("relays a full prompt round trip with a permission request (bearer auth)", async () => {
    const r = await promptThroughLink(link.url, { authorization: `Bearer ${TOKEN}` });
    assert.equal(r.result.stopReason, "end_turn");
    assert.deepEqual(r.updates, ["echo: hello", "permission: allow"]);
    // The local default (ACP_PERMISSION_MODE) reached the agent's environment and session/new _meta.
    assert.equal((r.init._meta as { envPermissionMode: string }).envPermissionMode, "acceptEdits");
    assert.equal((r.session._meta as { permissionMode: string }).permissionMode, "acceptEdits");
  });

  it("passes the client's permission mode, but never escalates to bypassPermissions", async () => {
    const plan = await promptThroughLink(link.url, { authorization: `Bearer ${TOKEN}` }, { permissionMode: "plan" });
    assert.equal((plan.session._meta as { permissionMode: string }).permissionMode, "plan");
    const bypass = await promptThroughLink(
      link.url,
      { authorization: `Bearer ${TOKEN}` },
      { permissionMode: "bypassPermissions" },
    );
    assert.equal((bypass.session._meta as { permissionMode: string }).permissionMode, "acceptEdits");
  });

  it("accepts the rcs.auth subprotocol and echoes it", async () => {
    const proto = `rcs.auth.${Buffer.from(TOKEN).toString("base64url")}`;
    const r = await tryUpgrade(link.url, { protocols: [proto] });
    assert.equal(r.opened, true);
    assert.equal(r.protocol, proto);
    r.ws?.close();
  });

  it("refuses wrong, missing and query-string tokens and browser origins before the upgrade", async () => {
    assert.equal((await tryUpgrade(link.url, { headers: { authorization: "Bearer wrong" } })).status, 401);
    assert.equal((await tryUpgrade(link.url, { headers: { authorization: `Bearer ${TOKEN}x` } })).status, 401);
    assert.equal((await tryUpgrade(link.url)).status, 401);
    assert.equal(
      (await tryUpgrade(link.url, { protocols: [`rcs.auth.${Buffer.from("nope").toString("base64url")}`] })).status,
      401,
    );
    assert.equal((await tryUpgrade(`${link.url}?token=${TOKEN}`)).status, 400);
    assert.equal(
      (await tryUpgrade(link.url, { headers: { authorization: `Bearer ${TOKEN}`, origin: "https://evil.example" } }))
        .status,
      403,
    );
  });

  it("answers invalid JSON with a parse error and keeps the connection", async () => {
    const r = await tryUpgrade(link.url, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.ok(r.ws);
    const ws = r.ws;
    const replies: unknown[] = [];
    const got = new Promise<void>((resolve) => {
      ws.on("message", (d) => {
        replies.push(JSON.parse(d.toString()));
        if (replies.length === 3) resolve();
      });
    });
    ws.send("{not json");
    ws.send("[1,2]");
    ws.send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "initialize",
        params: { protocolVersion: 1, clientCapabilities: {} },
      }),
    );
    await got;
    assert.equal((replies[0] as { error: { code: number } }).error.code, -32700);
    assert.equal((replies[1] as { error: { code: number } }).error.code, -32600);
    assert.equal((replies[2] as { id: number }).id, 7);
    ws.close();
  });

  it("isolates two clients; closing one kills only its agent", async () => {
    const a = await tryUpgrade(link.url, { headers: { authorization: `Bearer ${TOKEN}` } });
    const b = await tryUpgrade(link.url, { headers: { authorization: `Bearer ${TOKEN}` } });
    const pidOf = (ws: WebSocket) =>
      new Promise<number>((resolve) => {
        ws.once("message", (d) =>
          resolve((JSON.parse(d.toString()) as { result: { _meta: { pid: number } } }).result._meta.pid),
        );
        ws.send(
          JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: { protocolVersion: 1, clientCapabilities: {} },
          }),
        );
      });
    const pa = await pidOf(a.ws as WebSocket);
    const pb = await pidOf(b.ws as WebSocket);
    assert.notEqual(pa, pb);
    a.ws?.close();
    await until(() => !pidAlive(pa), "agent A to exit");
    assert.equal(pidAlive(pb), true);
    b.ws?.close();
    await until(() => !pidAlive(pb), "agent B to exit");
  });

  it("closes the socket with a reason when the agent dies", async () => {
    const r = await tryUpgrade(link.url, { headers: { authorization: `Bearer ${TOKEN}` } });
    const ws = r.ws as WebSocket;
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    ws.send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: 1, clientCapabilities: {} },
      }),
    );
    ws.send(
      JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: repoRoot, mcpServers: [] } }),
    );
    ws.send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        method: "session/prompt",
        params: { sessionId: "x", prompt: [{ type: "text", text: "die" }] },
      }),
    );
    const c = await closed;
    assert.equal(c.code, 1011);
    assert.match(c.reason, /agent exited \(code 3\)/);
  });
});

describe("ccb link limits, TLS and token handling", () => {
  it("closes with 1009 on an oversized message", async () => {
    const link = await startLink(["--no-auth", "--max-message-size", "4096"], {}, [
      process.execPath,
      join(repoRoot, "test/fixtures/echo-agent.mjs"),
    ]);
    try {
      const r = await tryUpgrade(link.url);
      const ws = r.ws as WebSocket;
      const closed = new Promise<number>((resolve) => ws.on("close", (code) => resolve(code)));
      ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "x", params: { pad: "a".repeat(10_000) } }));
      assert.equal(await closed, 1009);
    } finally {
      await stopProcess(link.child);
    }
  });

  it("generates a token, shows it once and stores it 0600", async () => {
    const home = tmpdirFixture({ prefix: "ccb-link-tok-" });
    const env = { XDG_CONFIG_HOME: join(home.path, "config"), ACP_AUTH_TOKEN: "" };
    const link = await startLink([], env, [process.execPath, join(repoRoot, "test/fixtures/echo-agent.mjs")]);
    try {
      const shown = link.stderr().match(/token: (\S+)/)?.[1];
      assert.ok(shown && shown.length >= 22, "a token of at least 128 bits is shown");
      const file = join(home.path, "config/ccb/link-token");
      assert.equal(readFileSync(file, "utf8").trim(), shown);
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal((await tryUpgrade(link.url, { headers: { authorization: `Bearer ${shown}` } })).opened, true);
      assert.equal((await tryUpgrade(link.url)).status, 401);
    } finally {
      await stopProcess(link.child);
      home.cleanup();
    }
  });

  it("refuses --no-auth on a non-loopback host", async () => {
    const child = spawnCcb(["link", "--port", "0", "--host", "0.0.0.0", "--no-auth"], { cwd: repoRoot });
    let err = "";
    child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    assert.equal(code, 1);
    assert.match(err, /--no-auth is only allowed on a loopback host/);
  });

  it("serves wss:// with a cached self-signed certificate", async () => {
    const home = tmpdirFixture({ prefix: "ccb-link-tls-" });
    const env = { XDG_CONFIG_HOME: join(home.path, "config"), ACP_AUTH_TOKEN: TOKEN };
    const agent = [process.execPath, join(repoRoot, "test/fixtures/echo-agent.mjs")];
    let link = await startLink(["--https"], env, agent);
    try {
      assert.match(link.url, /^wss:\/\//);
      assert.match(link.stderr(), /TLS certificate: .*link-cert\.pem \(generated\)/);
      const certPath = join(home.path, "config/ccb/tls/link-cert.pem");
      const ca = readFileSync(certPath, "utf8");
      assert.equal(statSync(join(home.path, "config/ccb/tls/link-key.pem")).mode & 0o777, 0o600);
      const ws = new WebSocket(link.url.replace("127.0.0.1", "localhost"), {
        ca,
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      const reply = await new Promise<unknown>((resolve, reject) => {
        // ACP's first message is initialize (the echo agent answers with its params).
        ws.on("open", () => ws.send(JSON.stringify({ jsonrpc: "2.0", id: 5, method: "initialize", params: { x: 1 } })));
        ws.on("message", (d) => resolve(JSON.parse(d.toString())));
        ws.on("error", reject);
      });
      assert.deepEqual(reply, { jsonrpc: "2.0", id: 5, result: { x: 1 } });
      ws.close();
      await stopProcess(link.child);
      link = await startLink(["--https"], env, agent);
      assert.match(link.stderr(), /\(cache\)/);
    } finally {
      await stopProcess(link.child);
      home.cleanup();
    }
  });
});
