import assert from "node:assert/strict";
import { createHash, createHmac, randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { WebSocket, WebSocketServer } from "ws";
import { silentLogger } from "../../../src/core/log.ts";
import { BrowserSession, ONE_TIME_QUERY } from "../../../src/net/browser-session.ts";
import { Gateway, redactPath } from "../../../src/net/gateway.ts";
import { mountSessionRoutes, mountWorkbenchProxy } from "../../../src/workbench/routes.ts";

const KEY = randomBytes(24).toString("base64url");
const BASE = `/ide/${KEY}`;
const dir = mkdtempSync(join(tmpdir(), "ccb-gw-"));
const SOCKET = join(dir, "runtime.sock");
let upstream: Server;
let gw: Gateway;
let url = "";
let socketPath: () => string | undefined = () => SOCKET;
const LANDINGS: Record<string, string> = { "/app": `${BASE}/__ccb/app`, "/session.json": `${BASE}/__ccb/session.json` };
const session = new BrowserSession({
  path: () => BASE,
  landing: (p) => LANDINGS[p] ?? p,
  secure: () => false,
});
const PROOF_KEY = randomBytes(32);
let cookie = "";
let pageSocketClosed: () => void = () => undefined;

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
      res.end(
        JSON.stringify({
          method: req.method,
          url: req.url,
          host: req.headers.host,
          cookie: req.headers.cookie ?? "",
          prefix: req.headers["x-forwarded-prefix"] ?? "",
          encoding: req.headers["accept-encoding"] ?? "",
          size,
          sha256: hash.digest("hex"),
        }),
      );
    });
  });
  const wss = new WebSocketServer({ server: upstream });
  wss.on("connection", (s, req) => {
    s.send(`hello ${req.url}`);
    s.on("message", (d) => s.send(d.toString()));
  });
  upstream.listen(SOCKET);
  await once(upstream, "listening");
  gw = new Gateway({ host: "127.0.0.1", port: 0, log: silentLogger });
  url = await gw.listen();
  const http = { gateway: gw, url };
  mountWorkbenchProxy(
    http,
    BASE,
    { socketPath: () => socketPath(), epoch: () => 3, proofKey: PROOF_KEY },
    session,
    silentLogger,
  );
  // the same proxy with the loopback rule off (the control of the encoding test)
  mountWorkbenchProxy(
    http,
    `${BASE}x`,
    { socketPath: () => socketPath(), epoch: () => 3, proofKey: PROOF_KEY },
    session,
    silentLogger,
    "none",
  );
  // only ccb's own headless client (HeadlessChrome from loopback) gets files uncompressed
  mountWorkbenchProxy(
    http,
    `${BASE}h`,
    { socketPath: () => socketPath(), epoch: () => 3, proofKey: PROOF_KEY },
    session,
    silentLogger,
    "headless",
    () => pageSocketClosed(),
  );
  mountSessionRoutes(http, BASE, session, "s3cret-token", () => ({
    runtime: "code-server",
    state: "running",
    workbenchPath: `${BASE}/?folder=/w`,
    bridge: { connected: true, reason: "", hosts: 1 },
  }));
  const r = await send(`${BASE}/?folder=/w&${ONE_TIME_QUERY}=${session.mint()}`);
  cookie = String((r.headers["set-cookie"] as string[])[0]).split(";")[0] as string;
});

after(async () => {
  await gw.close();
  upstream.closeAllConnections();
  upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

function send(
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: Buffer } = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = request(
      { host: u.hostname, port: u.port, path, method: options.method ?? "GET", headers: options.headers },
      (res) => {
        let body = "";
        res.setEncoding("utf8").on("data", (d: string) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

describe("workbench routes on a gateway", () => {
  test("a one-time link sets an HttpOnly SameSite=Strict cookie scoped to the workbench path only, then redirects without the token", async () => {
    const token = session.mint();
    const r = await send(`${BASE}/?folder=/w&${ONE_TIME_QUERY}=${token}`);
    assert.equal(r.status, 302);
    assert.equal(r.headers.location, `${BASE}/?folder=%2Fw`);
    const cookies = r.headers["set-cookie"] as string[];
    assert.deepEqual(
      cookies.map((c) => /Path=([^;]+)/.exec(c)?.[1]),
      [BASE],
      "one cookie, below the unguessable prefix only (no /app, no /session.json)",
    );
    assert.match(session.cookieName, /^ccb_[0-9a-f]{16}$/, "the cookie names its instance");
    assert.notEqual(session.cookieName, new BrowserSession({ path: () => BASE, secure: () => false }).cookieName);
    for (const c of cookies) {
      assert.match(c, /; HttpOnly/);
      assert.match(c, /; SameSite=Strict/);
      assert.doesNotMatch(c, /Secure/, "plain-http loopback: no Secure flag");
    }
    const again = await send(`${BASE}/?${ONE_TIME_QUERY}=${token}`);
    assert.equal(again.status, 401, "a one-time token works once");
    const forged = await send(`${BASE}/?${ONE_TIME_QUERY}=${token.slice(0, -2)}xx`);
    assert.equal(forged.status, 401);
    const sameBrowser = await send(`${BASE}/?${ONE_TIME_QUERY}=${token}`, { headers: { cookie } });
    assert.equal(sameBrowser.status, 302, "a used link opened again in the browser holding the cookie just redirects");
  });

  test("a client on this machine gets the runtime's files uncompressed (no per-request Brotli/gzip of 19 MB); the rule off passes the header on", async () => {
    const plain = await send(`${BASE}/static/workbench.js`, {
      headers: { cookie, "accept-encoding": "gzip, deflate, br" },
    });
    assert.equal(plain.status, 200);
    assert.equal((JSON.parse(plain.body) as { encoding: string }).encoding, "identity");
    const control = await send(`${BASE}x/static/workbench.js`, {
      headers: { cookie, "accept-encoding": "gzip, deflate, br" },
    });
    assert.equal(control.status, 200, control.body);
    assert.equal((JSON.parse(control.body) as { encoding: string }).encoding, "gzip, deflate, br");
  });

  test("the headless rule: a loopback HeadlessChrome gets files uncompressed, a person's browser on loopback (an SSH tunnel) keeps compression", async () => {
    const enc = async (ua: string) => {
      const r = await send(`${BASE}h/static/workbench.js`, {
        headers: { cookie, "accept-encoding": "gzip, deflate, br", "user-agent": ua },
      });
      assert.equal(r.status, 200, r.body);
      return (JSON.parse(r.body) as { encoding: string }).encoding;
    };
    const headless =
      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/140.0.0.0 Safari/537.36";
    const person =
      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36";
    assert.equal(await enc(headless), "identity");
    assert.equal(await enc(person), "gzip, deflate, br", "control: a person's Chrome on loopback is left alone");
  });

  test("without the cookie the workbench is refused (HTTP and WebSocket), even with the right path", async () => {
    assert.equal((await send(`${BASE}/static/x.js`)).status, 401);
    assert.equal(
      (await send(`${BASE}/static/x.js`, { headers: { cookie: `${session.cookieName}=${"A".repeat(43)}` } })).status,
      401,
    );
    const bad = new WebSocket(`${url.replace(/^http/, "ws")}${BASE}/sock`);
    const [err] = (await once(bad, "error")) as [Error];
    assert.match(err.message, /401/);
  });

  test("HTTP is proxied to the runtime's Unix socket with the prefix stripped, query kept, request body intact", async () => {
    const body = randomBytes(1024 * 1024 + 7);
    const r = await send(`${BASE}/static/x.js?a=1&b=2`, {
      method: "POST",
      body,
      headers: { "content-type": "application/octet-stream", cookie },
    });
    assert.equal(r.status, 200);
    const j = JSON.parse(r.body) as { method: string; url: string; size: number; sha256: string; host: string };
    assert.equal(j.method, "POST");
    assert.equal(j.url, "/static/x.js?a=1&b=2");
    assert.equal(j.size, body.length);
    assert.equal(j.sha256, createHash("sha256").update(body).digest("hex"));
    assert.equal(j.host, new URL(url).host, "the Host header is kept (code-server compares it with Origin)");
  });

  test("the bare base path redirects to the folder form", async () => {
    const r = await send(`${BASE}?folder=/w`, { headers: { cookie } });
    assert.equal(r.status, 302);
    assert.equal(r.headers.location, `${BASE}/?folder=/w`);
  });

  test("cross-site Origins and foreign Hosts are refused; same origin passes", async () => {
    assert.equal((await send(`${BASE}/x`, { headers: { cookie, origin: "https://evil.example" } })).status, 403);
    assert.equal((await send(`${BASE}/x`, { headers: { cookie, host: "evil.example" } })).status, 403);
    assert.equal(
      (await send(`${BASE}/x`, { headers: { cookie, host: `127.0.0.1.evil.example:${new URL(url).port}` } })).status,
      403,
    );
    assert.equal((await send(`${BASE}/x`, { headers: { cookie, origin: url } })).status, 200);
    assert.equal(
      (await send(`/ide/${"A".repeat(32)}/x`, { headers: { cookie } })).status,
      404,
      "a wrong key finds nothing",
    );
  });

  test("WebSockets are proxied both ways with the cookie; a cross-site Origin is refused", async () => {
    const s = new WebSocket(`${url.replace(/^http/, "ws")}${BASE}/sock?x=1`, { origin: url, headers: { cookie } });
    const first = await new Promise<string>((resolve, reject) => {
      s.once("message", (d) => resolve(d.toString()));
      s.once("error", reject);
    });
    assert.equal(first, "hello /sock?x=1");
    s.send("ping through the proxy");
    assert.equal((await once(s, "message"))[0].toString(), "ping through the proxy");
    s.close();
    const bad = new WebSocket(`${url.replace(/^http/, "ws")}${BASE}/sock`, {
      origin: "https://evil.example",
      headers: { cookie },
    });
    const [err] = (await once(bad, "error")) as [Error];
    assert.match(err.message, /403/);
  });

  test("a page's WebSocket closing is told (the window may be gone); one still open or refused is not", async () => {
    let closed = 0;
    pageSocketClosed = () => closed++;
    const s = new WebSocket(`${url.replace(/^http/, "ws")}${BASE}h/sock`, { origin: url, headers: { cookie } });
    await once(s, "message");
    const bad = new WebSocket(`${url.replace(/^http/, "ws")}${BASE}h/sock`, { origin: "https://evil.example" });
    await once(bad, "error");
    assert.equal(closed, 0, "control: an open socket and a refused one are not a page gone");
    const told = new Promise<void>((resolve) => {
      pageSocketClosed = () => {
        closed++;
        resolve();
      };
    });
    s.close();
    await told;
    assert.equal(closed, 1);
  });

  test("while the runtime is down the proxy says so (503)", async () => {
    const saved = socketPath;
    socketPath = () => undefined;
    try {
      assert.equal((await send(`${BASE}/x`, { headers: { cookie } })).status, 503);
    } finally {
      socketPath = saved;
    }
  });

  test("/session.json and /app: links there land below the prefix, the cookie opens the pages there; programs use the bearer token; ?token= is refused", async () => {
    assert.equal((await send("/session.json")).status, 401);
    assert.equal((await send("/session.json", { headers: { authorization: "Bearer wrong-token!" } })).status, 401);
    assert.equal((await send("/session.json?token=s3cret-token")).status, 400);
    assert.equal((await send("/session.json", { headers: { authorization: "Bearer s3cret-token" } })).status, 200);
    assert.equal((await send(`${BASE}/__ccb/session.json`)).status, 401);
    const ok = await send(`${BASE}/__ccb/session.json`, { headers: { cookie } });
    assert.equal(ok.status, 200);
    assert.equal((JSON.parse(ok.body) as { workbenchPath: string }).workbenchPath, `${BASE}/?folder=/w`);
    assert.equal((await send("/app")).status, 401);
    const link = await send(`/app?${ONE_TIME_QUERY}=${session.mint()}`);
    assert.equal(link.status, 302);
    assert.equal(link.headers.location, `${BASE}/__ccb/app`, "an /app link lands on the App page below the prefix");
    assert.match(String((link.headers["set-cookie"] as string[])[0]), new RegExp(`Path=${BASE};`));
    const app = await send(`${BASE}/__ccb/app`, { headers: { cookie } });
    assert.equal(app.status, 200);
    assert.match(app.body, /<iframe/);
    assert.match(String(app.headers["content-security-policy"]), /frame-src 'self'/);
    assert.match(String(app.headers["content-security-policy"]), /frame-ancestors 'self'/);
  });

  test("the cookie works only from the gateway's own pages or a person's navigation (Sec-Fetch-Site), and only this origin may frame its answers", async () => {
    const at = (site: string, mode = "cors", dest = "empty") => ({
      cookie,
      "sec-fetch-site": site,
      "sec-fetch-mode": mode,
      "sec-fetch-dest": dest,
    });
    for (const path of [`${BASE}/x`, `${BASE}/__ccb/app`, `${BASE}/__ccb/session.json`]) {
      // Positive controls: the gateway's own page, a typed/reloaded navigation, a program (no metadata).
      assert.equal((await send(path, { headers: at("same-origin") })).status, 200, path);
      assert.equal((await send(path, { headers: at("none", "navigate", "document") })).status, 200, path);
      assert.equal((await send(path, { headers: { cookie } })).status, 200, path);
      // A page on another loopback port (same-site), another site, a "none" that is no navigation, a frame.
      for (const h of [
        at("same-site"),
        at("same-site", "navigate", "document"),
        at("cross-site", "navigate", "iframe"),
        at("none", "cors"),
        at("same-site", "navigate", "iframe"),
      ]) {
        const r = await send(path, { headers: h });
        assert.equal(r.status, 403, `${path} ${JSON.stringify(h)}`);
        assert.equal(r.headers["content-security-policy"], "frame-ancestors 'self'");
      }
    }
    const page = await send(`${BASE}/x`, { headers: at("same-origin") });
    assert.equal(page.headers["content-security-policy"], "frame-ancestors 'self'");
    assert.equal(page.headers["x-frame-options"], "SAMEORIGIN");
    const ws = new WebSocket(`${url.replace(/^http/, "ws")}${BASE}/sock`, {
      origin: url,
      headers: { cookie, "sec-fetch-site": "same-site" },
    });
    const [err] = (await once(ws, "error")) as [Error];
    assert.match(err.message, /403/);
  });

  test("a link opened from another site gets a page that continues from the gateway's origin (a redirect would keep the other site)", async () => {
    const r = await send(`${BASE}/?folder=/w&${ONE_TIME_QUERY}=${session.mint()}`, {
      headers: { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" },
    });
    assert.equal(r.status, 200);
    assert.match(String((r.headers["set-cookie"] as string[])[0]), new RegExp(`Path=${BASE};`));
    assert.ok(r.body.includes(`href="${BASE}/?folder=%2Fw"`), r.body);
    assert.match(
      String(r.headers["content-security-policy"]),
      /script-src 'sha256-[A-Za-z0-9+/=]+'; frame-ancestors 'none'/,
    );
    assert.doesNotMatch(r.body, new RegExp(ONE_TIME_QUERY), "the token is not in the page");
  });

  test("the epoch answer carries an HMAC of the page's nonce under the gateway's key", async () => {
    const nonce = randomBytes(16).toString("hex");
    const r = await send(`${BASE}/__ccb/epoch?n=${nonce}`, { headers: { cookie } });
    assert.equal(r.status, 200);
    const j = JSON.parse(r.body) as { epoch: number; proof: string };
    assert.equal(j.epoch, 3);
    assert.equal(j.proof, createHmac("sha256", PROOF_KEY).update(`ccb-epoch:${nonce}:3`).digest("hex"));
    assert.notEqual(
      j.proof,
      createHmac("sha256", randomBytes(32)).update(`ccb-epoch:${nonce}:3`).digest("hex"),
      "another key gives another proof",
    );
    assert.equal((await send(`${BASE}/__ccb/epoch?n=xyz`, { headers: { cookie } })).status, 400, "a bad nonce");
    assert.deepEqual(
      JSON.parse((await send(`${BASE}/__ccb/epoch`, { headers: { cookie } })).body),
      { epoch: 3 },
      "no nonce, no proof",
    );
    const script = await send(`${BASE}/__ccb/alive.js`, { headers: { cookie } });
    assert.ok(script.body.includes(PROOF_KEY.toString("hex")), "the page's script carries the key");
    assert.equal((await send(`${BASE}/__ccb/alive.js`)).status, 401, "only over the cookie session");
  });

  test("a frame's one-time link gets a frame capability in the path, no cookie; the path opens HTTP and WebSocket", async () => {
    const frames = session.frames;
    const r = await send(`${BASE}/?folder=/w&${ONE_TIME_QUERY}=${session.mint()}`, {
      headers: { "sec-fetch-dest": "iframe", "sec-fetch-site": "cross-site" },
    });
    assert.equal(r.status, 302);
    assert.equal(r.headers["set-cookie"], undefined, "a frame gets no cookie");
    assert.equal(r.headers["referrer-policy"], "no-referrer");
    const m = /^\/s\/([A-Za-z0-9_-]{43})(\/ide\/.*)$/.exec(String(r.headers.location));
    assert.ok(m, String(r.headers.location).replace(/\/s\/[^/]+/, "/s/<cap>"));
    assert.equal(m[2], `${BASE}/?folder=%2Fw`);
    assert.equal(session.frames, frames + 1);
    const cap = `/s/${m[1]}`;
    // Without any cookie: the capability path is the credential; the runtime sees the path stripped of both prefixes.
    const page = await send(`${cap}${BASE}/static/x.js?a=1`, { headers: { origin: url } });
    assert.equal(page.status, 200);
    assert.equal((JSON.parse(page.body) as { url: string }).url, "/static/x.js?a=1");
    assert.equal(page.headers["referrer-policy"], "no-referrer");
    const bare = await send(`${cap}${BASE}?folder=/w`);
    assert.equal(bare.status, 302);
    assert.equal(bare.headers.location, `${cap}${BASE}/?folder=/w`, "absolute redirects keep the capability");
    const app = await send(`${cap}/app`);
    assert.equal(app.status, 200);
    assert.doesNotMatch(String(app.headers["content-security-policy"]), /frame-ancestors/, "any host may frame it");
    assert.equal(app.headers["x-frame-options"], undefined);
    assert.ok(app.body.includes(JSON.stringify(`${cap}${BASE}/?folder=/w`)), "/app frames the workbench under it");
    const s = new WebSocket(`${url.replace(/^http/, "ws")}${cap}${BASE}/sock?x=1`, { origin: url });
    const first = await new Promise<string>((resolve, reject) => {
      s.once("message", (d) => resolve(d.toString()));
      s.once("error", reject);
    });
    assert.equal(first, "hello /sock?x=1");
    s.close();
    // Still refused: another site's Origin, a foreign Host, a route without the session, a made-up or altered capability.
    assert.equal((await send(`${cap}${BASE}/x`, { headers: { origin: "https://evil.example" } })).status, 403);
    assert.equal((await send(`${cap}${BASE}/x`, { headers: { host: "evil.example" } })).status, 403);
    assert.equal((await send(`${cap}/bridge`)).status, 401);
    for (const forged of [`/s/${"A".repeat(43)}`, `${cap.slice(0, -1)}x`, `${cap}x`, "/s/"]) {
      const f = await send(`${forged}${BASE}/static/x.js`);
      assert.equal(f.status, 401, `${forged.length}`);
      assert.doesNotMatch(f.body, /\/ide\//, "a refusal names no workbench path");
    }
    const bad = new WebSocket(`${url.replace(/^http/, "ws")}/s/${"A".repeat(43)}${BASE}/sock`, { origin: url });
    const [err] = (await once(bad, "error")) as [Error];
    assert.match(err.message, /401/);
    // A top-level navigation (a person's tab) still gets the cookie, not a capability.
    const tab = await send(`${BASE}/?${ONE_TIME_QUERY}=${session.mint()}`, {
      headers: { "sec-fetch-dest": "document" },
    });
    assert.equal(tab.status, 302);
    assert.equal(tab.headers.location, `${BASE}/`);
    assert.ok(Array.isArray(tab.headers["set-cookie"]));
    // Ended with the session's workbench: the capability no longer opens anything.
    session.revokeFrames();
    assert.equal((await send(`${cap}${BASE}/static/x.js`)).status, 401);
  });

  test("a runtime that writes absolute URLs (OpenVSCode) gets the path without the secret prefix and is told the browser-facing prefix (a capability's too); a client's own X-Forwarded-Prefix never reaches it; log lines redact it", async () => {
    const gw2 = new Gateway({ host: "127.0.0.1", port: 0, log: silentLogger });
    const url2 = await gw2.listen();
    const own = new BrowserSession({ path: () => BASE, secure: () => false });
    mountWorkbenchProxy(
      { gateway: gw2, url: url2 },
      BASE,
      { socketPath: () => SOCKET, announcePrefix: true, proofKey: randomBytes(32) },
      own,
      silentLogger,
    );
    try {
      const get = (path: string, headers: Record<string, string> = {}) =>
        new Promise<{ status: number; location?: string; body: string }>((resolve, reject) => {
          const u = new URL(url2);
          request({ host: u.hostname, port: u.port, path, headers }, (res) => {
            let body = "";
            res.setEncoding("utf8").on("data", (d: string) => (body += d));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, location: res.headers.location, body }));
          })
            .on("error", reject)
            .end();
        });
      const ex = await get(`${BASE}/?${ONE_TIME_QUERY}=${own.mint()}`, { "sec-fetch-dest": "iframe" });
      const cap = /^\/s\/[^/]+/.exec(ex.location ?? "")?.[0] as string;
      assert.ok(cap);
      const j = JSON.parse((await get(`${cap}${BASE}/static/x.js`)).body) as { url: string; prefix: string };
      assert.equal(j.url, "/static/x.js", "the capability and the secret prefix are stripped");
      assert.equal(j.prefix, `${cap}${BASE}`);
      const forged = JSON.parse((await get(`${cap}${BASE}/static/x.js`, { "x-forwarded-prefix": "/evil" })).body) as {
        prefix: string;
      };
      assert.equal(forged.prefix, `${cap}${BASE}`, "a client's own X-Forwarded-Prefix is replaced");
      assert.equal(redactPath(`${cap}${BASE}/x`), `/s/<capability>${BASE}/x`);
      assert.equal(redactPath(`${BASE}/x`), `${BASE}/x`);
      // The other session's capability opens nothing here, and this one nothing on the first gateway.
      assert.equal((await send(`${cap}${BASE}/static/x.js`)).status, 401);
    } finally {
      await gw2.close();
    }
  });

  test("the test's runtime socket folder is private (0700)", () => {
    assert.equal(statSync(dir).mode & 0o777, 0o700);
  });
});
