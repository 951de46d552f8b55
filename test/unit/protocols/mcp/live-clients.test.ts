import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Client, InMemoryTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport as LegacyMemory } from "@modelcontextprotocol/sdk/inMemory.js";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { type Core, createCore } from "../../../../src/core/core.ts";
import { LiveClients, liveClientsOf } from "../../../../src/core/live-clients.ts";
import { silentLogger } from "../../../../src/core/log.ts";
import { Gateway } from "../../../../src/net/gateway.ts";
import { McpHttpEndpoint } from "../../../../src/protocols/mcp/http.ts";
import { createMcpServer } from "../../../../src/protocols/mcp/server.ts";
import { tmpdirFixture } from "../../../helpers/tmp.ts";
import { eventually } from "../../../helpers/workbench.ts";

/**
 * Who is connected now (the person's "Agent changes" view reads it): an MCP client of either era.
 * A 2025-era client says who it is in `initialize`; a 2026-07-28 client sends none, and is named by
 * its requests' clientInfo: over a connection (stdio, here in memory) until it closes, over
 * stateless HTTP (the real endpoint, real sockets) until it has been quiet for the idle time.
 */

const MODERN = "2026-07-28";
const modernClient = (name: string) =>
  new Client({ name, version: "1.0.0" }, { versionNegotiation: { mode: { pin: MODERN } } });
const names = (core: Core) =>
  liveClientsOf(core)
    .list()
    .map((c) => `${c.frontEnd}:${c.client}`)
    .sort();

describe("MCP clients of both eras are listed as connected while they are", () => {
  const dir = tmpdirFixture();
  let core: Core;
  before(() => {
    core = createCore({ roots: [dir.path] });
  });
  after(async () => {
    await core.dispose();
    dir.cleanup();
  });

  it("a 2026-07-28 client over a connection: listed from its first request, gone when it closes", async () => {
    // as `ccb serve --stdio` serves a connection: the SDK's serveStdio pins one server for it
    const [a, b] = InMemoryTransport.createLinkedPair();
    const handle = serveStdio(() => createMcpServer({ core }), { transport: a });
    const client = modernClient("modern-editor");
    await client.connect(b);
    await client.listTools();
    assert.deepEqual(names(core), ["mcp:modern-editor"]);
    // a second request does not list it twice
    await client.callTool({ name: "workspace_status", arguments: {} });
    assert.deepEqual(names(core), ["mcp:modern-editor"]);
    await client.close();
    await eventually("the modern client gone", () => names(core).length === 0 || undefined, 10_000);
    await handle.close();
  });

  it("control: a 2025-era client is listed from its initialize, as before", async () => {
    const server = createMcpServer({ core });
    const [a, b] = LegacyMemory.createLinkedPair();
    await server.connect(a);
    const client = new LegacyClient({ name: "legacy-editor", version: "1" });
    await client.connect(b);
    assert.deepEqual(names(core), ["mcp:legacy-editor"]);
    await client.close();
    await eventually("the legacy client gone", () => names(core).length === 0 || undefined, 10_000);
  });

  it("2026-07-28 over stateless HTTP: listed while it makes requests, gone after the idle time", async () => {
    const gw = new Gateway({ host: "127.0.0.1", port: 0, log: silentLogger });
    const url = await gw.listen();
    const endpoint = new McpHttpEndpoint(gw, { core, log: silentLogger, sessionIdleMs: 1_500 });
    try {
      const one = modernClient("http-agent");
      await one.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
      const other = modernClient("second-agent");
      await other.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
      await one.listTools();
      await one.listTools();
      await other.listTools();
      assert.deepEqual(names(core), ["mcp:http-agent", "mcp:second-agent"], "each named once, per request");
      // one keeps working, the other goes quiet: only the quiet one leaves the list
      const until = Date.now() + 2_500;
      while (Date.now() < until) {
        await one.listTools();
        await new Promise((r) => setTimeout(r, 300));
      }
      assert.deepEqual(names(core), ["mcp:http-agent"]);
      await eventually("the quiet HTTP client gone", () => names(core).length === 0 || undefined, 10_000);
      await Promise.all([one.close(), other.close()]);
    } finally {
      await endpoint.close();
      await gw.close();
    }
  });
});

describe("LiveClients.seen", () => {
  it("one entry per key, refreshed by each sighting, ended once; a flood evicts the oldest", () => {
    const live = new LiveClients();
    let changes = 0;
    live.onChange(() => changes++);
    live.seen("k1", { frontEnd: "mcp", client: "a" });
    live.seen("k1", { frontEnd: "mcp", client: "a" });
    assert.equal(live.list().length, 1);
    assert.equal(changes, 1);
    live.end("k1");
    live.end("k1");
    assert.equal(live.list().length, 0);
    assert.equal(changes, 2);
    for (let i = 0; i < 1005; i++) live.seen(`flood ${i}`, { frontEnd: "mcp", client: `c${i}` });
    // the list shows at most 200; the keyed set holds at most 1000: the first five were evicted
    live.end("flood 5");
    const before = changes;
    live.end("flood 0");
    assert.equal(changes, before, "flood 0 was already evicted");
  });
});
