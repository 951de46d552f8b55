import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { WebSocket, WebSocketServer } from "ws";
import { silentLogger } from "../../src/core/log.ts";
import { Gateway } from "../../src/protocols/mcp/gateway.ts";
import { mountSessionRoutes, mountWorkbenchProxy } from "../../src/workbench/gateway.ts";

const KEY = randomBytes(24).toString("base64url");
const BASE = `/ide/${KEY}`;
let upstream: Server;
let upstreamPort = 0;
let gw: Gateway;
let url = "";
let port = () => upstreamPort;

before(async () => {
  upstream = createServer((req, res) => {
    const hash = createHash("sha256");
    let size = 0;
    req.on("data", (c: Buffer) => {
      hash.update(c);
      size += c.length;
    });
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ method: req.method, url: req.url, host: req.headers.host, size, sha256: hash.digest("hex") }));
    });
  });
  const wss = new WebSocketServer({ server: upstream });
  wss.on("connection", (s, req) => {
    s.send(`hello ${req.url}`);
    s.on("message", (d) => s.send(d.toString()));
  });
  upstream.listen(0, "127.0.0.1");
  await once(upstream, "listening");
  upstreamPort = (upstream.address() as AddressInfo).port;
  gw = new Gateway({ host: "127.0.0.1", port: 0, log: silentLogger });
  url = await gw.listen();
  const http = { url, addRoute: gw.addRoute.bind(gw), addUpgrade: gw.addUpgrade.bind(gw) };
  mountWorkbenchProxy(http, BASE, { port: () => port(), stripPrefix: true }, silentLogger);
  mountSessionRoutes(http, "s3cret-token", () => ({ runtime: "code-server", state: "running", workbenchPath: `${BASE}/?folder=/w`, bridge: { connected: true, reason: "", hosts: 1 } }));
});

after(async () => {
  await gw.close();
  upstream.closeAllConnections();
  upstream.close();
});

function send(path: string, options: { method?: string; headers?: Record<string, string>; body?: Buffer } = {}): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = request({ host: u.hostname, port: u.port, path, method: options.method ?? "GET", headers: options.headers }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

describe("workbench gateway", () => {
  test("HTTP is proxied with the prefix stripped, query kept, request body intact", async () => {
    const body = randomBytes(1024 * 1024 + 7);
    const r = await send(`${BASE}/static/x.js?a=1&b=2`, { method: "POST", body, headers: { "content-type": "application/octet-stream" } });
    assert.equal(r.status, 200);
    const j = JSON.parse(r.body) as { method: string; url: string; size: number; sha256: string; host: string };
    assert.equal(j.method, "POST");
    assert.equal(j.url, "/static/x.js?a=1&b=2");
    assert.equal(j.size, body.length);
    assert.equal(j.sha256, createHash("sha256").update(body).digest("hex"));
    assert.equal(j.host, new URL(url).host, "the Host header is kept (code-server compares it with Origin)");
  });

  test("the bare base path redirects to the folder form", async () => {
    const r = await send(`${BASE}?folder=/w`);
    assert.equal(r.status, 302);
    assert.equal(r.headers.location, `${BASE}/?folder=/w`);
  });

  test("cross-site Origins and foreign Hosts are refused; same origin passes", async () => {
    assert.equal((await send(`${BASE}/x`, { headers: { origin: "https://evil.example" } })).status, 403);
    assert.equal((await send(`${BASE}/x`, { headers: { host: "evil.example" } })).status, 403);
    assert.equal((await send(`${BASE}/x`, { headers: { origin: url } })).status, 200);
    assert.equal((await send(`/ide/${"A".repeat(32)}/x`)).status, 404, "a wrong key finds nothing");
  });

  test("WebSockets are proxied both ways; a cross-site Origin is refused", async () => {
    const s = new WebSocket(`${url.replace(/^http/, "ws")}${BASE}/sock?x=1`, { origin: url });
    const first = await new Promise<string>((resolve, reject) => {
      s.once("message", (d) => resolve(d.toString()));
      s.once("error", reject);
    });
    assert.equal(first, "hello /sock?x=1");
    s.send("ping through the proxy");
    assert.equal((await once(s, "message"))[0].toString(), "ping through the proxy");
    s.close();
    const bad = new WebSocket(`${url.replace(/^http/, "ws")}${BASE}/sock`, { origin: "https://evil.example" });
    const [err] = (await once(bad, "error")) as [Error];
    assert.match(err.message, /403/);
  });

  test("while the runtime is down the proxy says so (503)", async () => {
    const saved = port;
    port = () => 0;
    try {
      assert.equal((await send(`${BASE}/x`)).status, 503);
    } finally {
      port = saved;
    }
  });

  test("/session.json and /app need the token when one is set", async () => {
    assert.equal((await send("/session.json")).status, 401);
    assert.equal((await send("/session.json?token=wrong-token!")).status, 401);
    const ok = await send("/session.json?token=s3cret-token");
    assert.equal(ok.status, 200);
    assert.equal((JSON.parse(ok.body) as { workbenchPath: string }).workbenchPath, `${BASE}/?folder=/w`);
    assert.equal((await send("/app")).status, 401);
    const app = await send("/app?token=s3cret-token");
    assert.equal(app.status, 200);
    assert.match(app.body, /<iframe/);
    assert.match(String(app.headers["content-security-policy"]), /frame-src 'self'/);
  });
});
