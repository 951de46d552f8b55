import assert from "node:assert/strict";
import { after, before, describe, it, mock } from "node:test";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { type Core, createCore } from "../../src/core/core.ts";
import { silentLogger } from "../../src/core/log.ts";
import { Gateway } from "../../src/net/gateway.ts";
import { McpHttpEndpoint } from "../../src/protocols/mcp/http.ts";
import {
  connectHttp,
  connectStdio,
  type HttpServe,
  INITIALIZE,
  MCP_POST_HEADERS,
  rawRequest,
  startHttpServe,
} from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

/**
 * Limits that keep one client from starving the others: session exhaustion over HTTP (the real
 * CLI, a flood of never-closed sessions, a well-behaved SDK client probing throughout), idle expiry
 * (fake timers), and the stdio frame cap (the SDK client gets its error, matched to its request).
 */
const dir = tmpdirFixture({ prefix: "ccb-limits-" });
after(() => dir.cleanup());

describe("session exhaustion (ccb serve --http)", { timeout: 600_000 }, () => {
  let srv: HttpServe;
  before(async () => {
    srv = await startHttpServe(dir.path, ["--log-level", "debug"]);
  });
  after(async () => {
    await srv.stop();
  });

  it("2,000 initialize requests never closed: the well-behaved client keeps working, new clients get in, sessions stay at the cap", async () => {
    const good = await connectHttp(srv.url);
    const initialize = () => rawRequest(srv.url, { method: "POST", headers: MCP_POST_HEADERS, body: INITIALIZE });
    let refused = 0;
    let probes = 0;
    for (let batch = 0; batch < 40; batch++) {
      const answers = await Promise.all(Array.from({ length: 50 }, initialize));
      refused += answers.filter((a) => a.status !== 200).length;
      assert.ok((await good.listTools()).tools.length > 0, `the probing client works after ${(batch + 1) * 50} floods`);
      probes++;
    }
    assert.equal(refused, 0, "no flood request was refused: the least recently used idle session made room");
    const late = await connectHttp(srv.url);
    assert.ok((await late.listTools()).tools.length > 0, "a new client gets in at the cap");
    const health = JSON.parse((await rawRequest(`${srv.base}/healthz`)).body) as { sessions: number };
    assert.ok(health.sessions <= 256, `sessions stay bounded (${health.sessions})`);
    console.error(
      `session flood: 2000 initialize, ${probes} probes answered, ${health.sessions} sessions open at the end`,
    );
    await late.close();
    await good.close();
  });
});

describe("idle session expiry (fake timers)", () => {
  let core: Core;
  let gw: Gateway;
  let endpoint: McpHttpEndpoint;
  before(async () => {
    mock.timers.enable({ apis: ["setInterval", "Date"] });
    core = createCore({ roots: [dir.path], log: silentLogger });
    gw = new Gateway({ host: "127.0.0.1", port: 0, log: silentLogger });
    endpoint = new McpHttpEndpoint(gw, { core, log: silentLogger, sessionIdleMs: 5 * 60_000 });
    await gw.listen();
  });
  after(async () => {
    mock.timers.reset();
    await endpoint.close();
    await gw.close();
    await core.dispose();
  });

  it("a session with nothing open expires after five idle minutes; one with an open stream does not", async () => {
    const idle = await rawRequest(`${gw.url}/mcp`, { method: "POST", headers: MCP_POST_HEADERS, body: INITIALIZE });
    assert.equal(idle.status, 200);
    const streaming = await connectHttp(`${gw.url}/mcp`); // the SDK client holds a GET stream open
    await streaming.listTools();
    assert.equal(endpoint.sessionCount, 2);
    mock.timers.tick(4 * 60_000);
    assert.equal(endpoint.sessionCount, 2, "not yet: four minutes");
    mock.timers.tick(2 * 60_000);
    assert.equal(endpoint.sessionCount, 1, "the idle session is gone, the streaming one stays");
    assert.ok((await streaming.listTools()).tools.length > 0);
    await streaming.close();
  });
});

describe("stdio frame cap (--max-body-bytes)", { timeout: 120_000 }, () => {
  it("an oversized frame gets Invalid Request carrying its id, at once; the connection lives on", async () => {
    const peer = await connectStdio(dir.path, ["--max-body-bytes", "65536"]);
    try {
      const big = "x".repeat(200_000);
      // A timeout of 10 minutes: only the server's own answer can end this call in a test run.
      const err = await peer.client
        .callTool({ name: "fs_write", arguments: { path: "big.txt", content: big } }, undefined, { timeout: 600_000 })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      assert.ok(err instanceof McpError, String(err));
      assert.equal(err.code, -32600);
      assert.match(err.message, /at most 65536 bytes \(--max-body-bytes\)/);
      assert.ok((await peer.client.listTools()).tools.length > 0, "the next request is answered");
    } finally {
      await peer.close();
    }
  });
});
