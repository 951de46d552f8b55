import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import { silentLogger } from "../../../src/core/log.ts";
import { credentialMatches } from "../../../src/net/credentials.ts";
import { Gateway } from "../../../src/net/gateway.ts";
import { HostAllowList } from "../../../src/net/hosts.ts";
import { isLoopbackHost } from "../../../src/net/loopback.ts";
import { normaliseOrigin } from "../../../src/net/origin.ts";
import type { EdgePolicy } from "../../../src/net/policy.ts";
import { tokensEqual } from "../../../src/util/secrets.ts";
import { rawRequest } from "../../helpers/serve.ts";

const OPEN: EdgePolicy = { name: "open", origin: { kind: "same" }, auth: [] };

function fakeReq(headers: Record<string, string>): IncomingMessage {
  return { headers } as unknown as IncomingMessage;
}

describe("edge checks", () => {
  it("bearer: exact token only, any case of the scheme", () => {
    const cred = [{ places: [{ in: "bearer" as const }], expected: () => "abc123" }];
    const u = new URL("http://x/");
    const m = (authorization?: string) =>
      credentialMatches(fakeReq(authorization === undefined ? {} : { authorization }), u, cred);
    assert.equal(m("Bearer abc123"), true);
    assert.equal(m("bearer abc123"), true);
    assert.equal(m("Bearer abc124"), false);
    assert.equal(m("Bearer abc1234"), false);
    assert.equal(m("Bearer "), false);
    assert.equal(m("Basic abc123"), false);
    assert.equal(m("Bearer abc123 extra"), false);
    assert.equal(m(undefined), false);
    assert.equal(
      credentialMatches(fakeReq({}), u, [{ places: [{ in: "bearer" }], expected: () => undefined }]),
      undefined,
      "no active credential: open",
    );
  });

  it("tokensEqual (the one constant-time compare): length check first", () => {
    assert.equal(tokensEqual("abc", "abc"), true);
    assert.equal(tokensEqual("abd", "abc"), false);
    assert.equal(tokensEqual("abcd", "abc"), false);
    assert.equal(tokensEqual(undefined, "abc"), false);
  });

  it("subprotocol, header, query and cookie places", () => {
    const u = new URL("http://x/?token=q1");
    const one = (
      place: Parameters<typeof credentialMatches>[2][number]["places"][number],
      headers: Record<string, string>,
      want: string,
    ) => credentialMatches(fakeReq(headers), u, [{ places: [place], expected: () => want }]);
    assert.equal(
      one(
        { in: "subprotocol", prefix: "rcs.auth." },
        { "sec-websocket-protocol": `acp, rcs.auth.${Buffer.from("s3").toString("base64url")}` },
        "s3",
      ),
      true,
    );
    assert.equal(one({ in: "header", name: "X-Tok" }, { "x-tok": "h1" }, "h1"), true);
    assert.equal(one({ in: "query", name: "token" }, {}, "q1"), true);
    assert.equal(one({ in: "cookie", name: "c" }, { cookie: "a=1; c=v2" }, "v2"), true);
    assert.equal(one({ in: "cookie", name: "c" }, { cookie: "c=v3" }, "v2"), false);
  });

  it("HostAllowList: loopback names and the bound host with our port", () => {
    const h = new HostAllowList("127.0.0.1", false);
    h.setPort(4321);
    for (const ok of ["127.0.0.1:4321", "localhost:4321", "[::1]:4321", "LocalHost:4321"])
      assert.equal(h.check(ok), true, ok);
    for (const bad of [
      "127.0.0.1",
      "127.0.0.1:80",
      "evil.com:4321",
      "localhost:1234",
      "",
      "127.0.0.1:4321.evil.com",
      undefined,
    ])
      assert.equal(h.check(bad), false, String(bad));
    h.allow("editor.example.com");
    assert.equal(h.check("editor.example.com:4321"), true);
    h.allow("proxy.example.com:443");
    assert.equal(h.check("proxy.example.com:443"), true);
    assert.deepEqual(h.authorities().includes("localhost:4321"), true);
  });

  it("HostAllowList: a TLS server accepts a Host without port only for 443", () => {
    const h = new HostAllowList("0.0.0.0", true);
    h.setPort(443);
    assert.equal(h.check("localhost"), true);
    assert.equal(h.check("0.0.0.0:443"), false, "the wildcard address is not a name clients use");
  });

  it("isLoopbackHost", () => {
    for (const h of ["127.0.0.1", "127.5.6.7", "localhost", "::1", "[::1]"]) assert.equal(isLoopbackHost(h), true, h);
    for (const h of ["0.0.0.0", "::", "192.168.1.2", "example.com"]) assert.equal(isLoopbackHost(h), false, h);
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
    gw.addRoute("GET", "/ide", (_q, s) => void s.end("ide"), OPEN);
    gw.addRoute("*", "/ide/deep", (_q, s) => void s.end("deep"), OPEN);
    gw.addRoute(
      "GET",
      "/boom",
      () => {
        throw new Error("secret detail");
      },
      OPEN,
    );
    gw.addUpgrade(
      "/ws",
      (_req, socket) => {
        socket.end("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n");
      },
      OPEN,
    );
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

  it("Host checked on every route, also for unknown paths", async () => {
    assert.equal((await rawRequest(`${base}/ide`, { headers: { host: "evil.test" } })).status, 403);
    assert.equal((await rawRequest(`${base}/nothing`, { headers: { host: "evil.test" } })).status, 403);
    assert.equal((await rawRequest(`${base}/ide`, { headers: { host: `proxy.test:${port}` } })).status, 403);
    gw.allowHost("proxy.test");
    assert.equal((await rawRequest(`${base}/ide`, { headers: { host: `proxy.test:${port}` } })).body, "ide");
  });

  const upgrade = (path: string, host: string) =>
    new Promise<string>((resolve, reject) => {
      const s = connect(port, "127.0.0.1", () =>
        s.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n`),
      );
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
