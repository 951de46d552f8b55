import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { generate } from "selfsigned";
import { spawnCcb } from "../helpers/cli.ts";
import { e2e } from "../helpers/fixture.ts";
import {
  cleanEnv,
  connectHttp,
  INITIALIZE,
  MCP_POST_HEADERS,
  rawRequest,
  rpcMessages,
  startHttpServe,
  waitExit,
} from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

const TOKEN = "e2e-token-0123456789abcdef0123456789abcdef";

describe("ccb serve --http security matrix", { timeout: 180_000 }, () => {
  const f = e2e({
    http: {
      args: ["--allow-origin", "https://app.example.com", "--max-body-bytes", "65536"],
      env: { CCB_AUTH_TOKEN: TOKEN },
    },
  });
  let port: string;
  before(() => {
    port = new URL(f.http.base).port;
  });

  const post = (headers: Record<string, string>, body: string | Buffer = INITIALIZE) =>
    rawRequest(f.http.url, { method: "POST", headers: { ...MCP_POST_HEADERS, ...headers }, body });
  const auth = { authorization: `Bearer ${TOKEN}` };

  it("missing bearer -> 401 with WWW-Authenticate", async () => {
    const r = await post({});
    assert.equal(r.status, 401);
    assert.match(String(r.headers["www-authenticate"]), /^Bearer /);
    assert.match(rpcMessages(r.body)[0]?.error?.message ?? "", /Authorization: Bearer/);
  });

  it("wrong bearer (same length, other length, other scheme) -> 401 invalid_token", async () => {
    for (const value of [`Bearer ${TOKEN.slice(0, -1)}x`, `Bearer ${TOKEN}x`, "Bearer short", `Basic ${TOKEN}`]) {
      const r = await post({ authorization: value });
      assert.equal(r.status, 401, value);
      assert.match(String(r.headers["www-authenticate"]), /invalid_token/);
    }
  });

  it("the right bearer works with the SDK client", async () => {
    const client = await connectHttp(f.http.url, auth);
    assert.ok((await client.listTools()).tools.length > 0);
    await client.close();
  });

  it("the token never appears in /healthz or on stderr", async () => {
    const r = await rawRequest(`${f.http.base}/healthz`);
    assert.equal(r.status, 200);
    assert.ok(!r.body.includes(TOKEN));
    assert.ok(!f.http.stderr().includes(TOKEN));
  });

  it("hostile Host headers are refused (DNS rebinding), loopback names with our port are accepted", async () => {
    for (const host of [
      "evil.example.com",
      `evil.example.com:${port}`,
      "127.0.0.1:1",
      "localhost",
      `127.0.0.2:${port}`,
    ]) {
      const r = await post({ ...auth, host });
      assert.equal(r.status, 403, host);
    }
    const h = await rawRequest(`${f.http.base}/healthz`, { headers: { host: "attacker.test" } });
    assert.equal(h.status, 403, "/healthz checks Host too");
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`]) {
      const r = await post({ ...auth, host });
      assert.equal(r.status, 200, host);
    }
  });

  it("browser Origins are refused unless allowed; the server's own origin is same-origin", async () => {
    for (const origin of [
      "http://evil.example.com",
      `http://localhost:${Number(port) + 1}`,
      "null",
      "https://app.example.com.evil.com",
    ]) {
      const r = await post({ ...auth, origin });
      assert.equal(r.status, 403, origin);
      assert.match(rpcMessages(r.body)[0]?.error?.message ?? "", /--allow-origin/);
    }
    for (const origin of ["https://app.example.com", `http://127.0.0.1:${port}`]) {
      const r = await post({ ...auth, origin });
      assert.equal(r.status, 200, origin);
    }
  });

  it("an oversized body gets 413 with a JSON-RPC error naming the limit, and the server lives on", async () => {
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { pad: "x".repeat(70_000) } });
    const r = await post(auth, big);
    assert.equal(r.status, 413);
    const e = rpcMessages(r.body)[0]?.error;
    assert.equal(e?.code, -32600);
    assert.match(e?.message ?? "", /65536 bytes/);
    const client = await connectHttp(f.http.url, auth);
    assert.ok((await client.listTools()).tools.length > 0);
    await client.close();
  });
});

describe("ccb serve --http exposure rules", { timeout: 180_000 }, () => {
  const dir = tmpdirFixture();
  after(() => dir.cleanup());

  async function refusal(args: string[], env: Record<string, string> = {}) {
    const child = spawnCcb(["serve", "--no-workbench", "--http", "--port", "0", "--workspace", dir.path, ...args], {
      env: cleanEnv(env),
    });
    let err = "";
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
    const exit = await waitExit(child);
    return { exit, err };
  }

  it("refuses a non-loopback --host without TLS and a token", async () => {
    const { exit, err } = await refusal(["--host", "0.0.0.0"]);
    assert.equal(exit.code, 1);
    assert.match(
      err,
      /Refusing to listen on 0\.0\.0\.0: a non-loopback address needs TLS \(--cert and --key\) and a bearer token/,
    );
  });

  it("refuses a non-loopback --host with a token but no TLS", async () => {
    const { exit, err } = await refusal(["--host", "0.0.0.0"], { CCB_AUTH_TOKEN: TOKEN });
    assert.equal(exit.code, 1);
    assert.match(err, /needs TLS \(--cert and --key\)\./);
    assert.ok(!err.includes(TOKEN));
  });

  it("refuses --cert without --key", async () => {
    const { exit, err } = await refusal(["--cert", join(dir.path, "none.pem")]);
    assert.equal(exit.code, 1);
    assert.match(err, /--cert and --key must be given together/);
  });

  it("serves HTTPS on a non-loopback host with TLS and a token", async () => {
    const pems = await generate([{ name: "commonName", value: "localhost" }], {
      keySize: 2048,
      algorithm: "sha256",
      extensions: [
        {
          name: "subjectAltName",
          altNames: [
            { type: 2, value: "localhost" },
            { type: 7, ip: "127.0.0.1" },
          ],
        },
      ],
    });
    const cert = join(dir.path, "cert.pem");
    const key = join(dir.path, "key.pem");
    writeFileSync(cert, pems.cert);
    writeFileSync(key, pems.private, { mode: 0o600 });
    const srv = await startHttpServe(dir.path, ["--host", "0.0.0.0", "--cert", cert, "--key", key], {
      CCB_AUTH_TOKEN: TOKEN,
    });
    try {
      assert.match(srv.base, /^https:\/\/127\.0\.0\.1:\d+$/);
      const denied = await rawRequest(srv.url, {
        method: "POST",
        headers: MCP_POST_HEADERS,
        body: INITIALIZE,
        ca: pems.cert,
      });
      assert.equal(denied.status, 401);
      const ok = await rawRequest(srv.url, {
        method: "POST",
        headers: { ...MCP_POST_HEADERS, authorization: `Bearer ${TOKEN}` },
        body: INITIALIZE,
        ca: pems.cert,
      });
      assert.equal(ok.status, 200);
      assert.equal(
        (rpcMessages(ok.body)[0] as { result: { serverInfo: { name: string } } }).result.serverInfo.name,
        "ccb",
      );
    } finally {
      assert.equal(await srv.stop(), 0);
    }
  });
});
