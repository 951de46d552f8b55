import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import { silentLogger } from "../../../../src/core/log.ts";
import { Gateway } from "../../../../src/protocols/mcp/gateway.ts";
import { HostAllowList, bearerMatches, isLoopbackHost, normaliseOrigin } from "../../../../src/protocols/mcp/guards.ts";
import { checkExposure } from "../../../../src/protocols/mcp/serve.ts";
import { rawRequest } from "../../../e2e/serve-helpers.ts";

describe("HTTP guards", () => {
  it("bearerMatches: exact token only, any case of the scheme", () => {
    assert.equal(bearerMatches("Bearer abc123", "abc123"), true);
    assert.equal(bearerMatches("bearer abc123", "abc123"), true);
    assert.equal(bearerMatches("Bearer abc124", "abc123"), false);
    assert.equal(bearerMatches("Bearer abc1234", "abc123"), false);
    assert.equal(bearerMatches("Bearer ", "abc123"), false);
    assert.equal(bearerMatches("Basic abc123", "abc123"), false);
    assert.equal(bearerMatches("Bearer abc123 extra", "abc123"), false);
    assert.equal(bearerMatches(undefined, "abc123"), false);
  });

  it("HostAllowList: loopback names and the bound host with our port", () => {
    const h = new HostAllowList("127.0.0.1", false);
    h.setPort(4321);
    for (const ok of ["127.0.0.1:4321", "localhost:4321", "[::1]:4321", "LocalHost:4321"]) assert.equal(h.check(ok), true, ok);
    for (const bad of ["127.0.0.1", "127.0.0.1:80", "evil.com:4321", "localhost:1234", "", "127.0.0.1:4321.evil.com", undefined]) assert.equal(h.check(bad), false, String(bad));
    h.allow("editor.example.com");
    assert.equal(h.check("editor.example.com:4321"), true);
    h.allow("proxy.example.com:443");
    assert.equal(h.check("proxy.example.com:443"), true);
    assert.deepEqual(h.sameOrigins("http").includes("http://localhost:4321"), true);
  });

  it("HostAllowList: a TLS server accepts a Host without port only for 443", () => {
    const h = new HostAllowList("0.0.0.0", true);
    h.setPort(443);
    assert.equal(h.check("localhost"), true);
    assert.equal(h.check("0.0.0.0:443"), false, "the wildcard address is not a name clients use");
  });

  it("isLoopbackHost and checkExposure", () => {
    for (const h of ["127.0.0.1", "127.5.6.7", "localhost", "::1", "[::1]"]) assert.equal(isLoopbackHost(h), true, h);
    for (const h of ["0.0.0.0", "::", "192.168.1.2", "example.com"]) assert.equal(isLoopbackHost(h), false, h);
    assert.doesNotThrow(() => checkExposure("127.0.0.1", false, undefined));
    assert.throws(() => checkExposure("0.0.0.0", false, undefined), /needs TLS \(--cert and --key\) and a bearer token/);
    assert.throws(() => checkExposure("0.0.0.0", true, undefined), /needs a bearer token/);
    assert.throws(() => checkExposure("0.0.0.0", false, "t"), /needs TLS/);
    assert.doesNotThrow(() => checkExposure("0.0.0.0", true, "t"));
  });

  it("normaliseOrigin lower-cases and drops default ports", () => {
    assert.equal(normaliseOrigin("HTTPS://App.Example.com:443"), "https://app.example.com");
    assert.equal(normaliseOrigin("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
  });
});

describe("Gateway routing", () => {
  const gw = new Gateway({ host: "127.0.0.1", port: 0, log: silentLogger });
  let base: string;
  let port: number;

  before(async () => {
    gw.addRoute("GET", "/ide", (_q, s) => void s.end("ide"));
    gw.addRoute("*", "/ide/deep", (_q, s) => void s.end("deep"));
    gw.addRoute("GET", "/open", (_q, s) => void s.end("open"), { checkHost: false });
    gw.addRoute("GET", "/boom", () => {
      throw new Error("secret detail");
    });
    gw.addUpgrade("/ws", (_req, socket) => {
      socket.end("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n");
    });
    base = await gw.listen();
    port = Number(new URL(base).port);
  });
  after(() => gw.close());

  it("longest prefix wins; a prefix matches itself and below it, not siblings", async () => {
    assert.equal((await rawRequest(`${base}/ide`)).body, "ide");
    assert.equal((await rawRequest(`${base}/ide/x/y`)).body, "ide");
    assert.equal((await rawRequest(`${base}/ide/deep/z`, { method: "PUT" })).body, "deep");
    assert.equal((await rawRequest(`${base}/ideas`)).status, 404);
  });

  it("405 with Allow for a wrong method; 500 without details when a handler throws", async () => {
    const r = await rawRequest(`${base}/ide`, { method: "POST", body: "" });
    assert.equal(r.status, 405);
    assert.equal(r.headers.allow, "GET");
    const b = await rawRequest(`${base}/boom`);
    assert.equal(b.status, 500);
    assert.doesNotMatch(b.body, /secret detail/);
  });

  it("Host checked per route (on by default), also for unknown paths", async () => {
    assert.equal((await rawRequest(`${base}/ide`, { headers: { host: "evil.test" } })).status, 403);
    assert.equal((await rawRequest(`${base}/nothing`, { headers: { host: "evil.test" } })).status, 403);
    assert.equal((await rawRequest(`${base}/open`, { headers: { host: "proxy.test" } })).body, "open");
    gw.allowHost("proxy.test");
    assert.equal((await rawRequest(`${base}/ide`, { headers: { host: `proxy.test:${port}` } })).body, "ide");
  });

  const upgrade = (path: string, host: string) =>
    new Promise<string>((resolve, reject) => {
      const s = connect(port, "127.0.0.1", () => s.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n`));
      let data = "";
      s.setEncoding("utf8").on("data", (d: string) => (data += d));
      s.on("end", () => resolve(data.split("\r\n")[0] ?? ""));
      s.on("error", reject);
    });

  it("upgrades: routed by prefix, Host-checked, 404 otherwise", async () => {
    assert.match(await upgrade("/ws/x", `127.0.0.1:${port}`), / 101 /);
    assert.match(await upgrade("/ws/x", "evil.test"), / 403 /);
    assert.match(await upgrade("/nope", `127.0.0.1:${port}`), / 404 /);
  });
});
