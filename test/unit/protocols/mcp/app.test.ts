import assert from "node:assert/strict";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ResourceListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { type Core, createCore } from "../../../../src/core/core.ts";
import { CcbError } from "../../../../src/core/errors.ts";
import { silentLogger } from "../../../../src/core/log.ts";
import { BrowserSession } from "../../../../src/net/browser-session.ts";
import { Gateway } from "../../../../src/net/gateway.ts";
import { workbenchAppHtml } from "../../../../src/protocols/mcp/app/app-html.ts";
import { AppState, WORKBENCH_APP_URI } from "../../../../src/protocols/mcp/app/app-state.ts";
import { parseRenderMode } from "../../../../src/protocols/mcp/app/render-mode.ts";
import { appResourceMeta, MCP_APP_MIME } from "../../../../src/protocols/mcp/app/resource.ts";
import { createMcpServer } from "../../../../src/protocols/mcp/server.ts";
import { ALIVE_SCRIPT_PATH, injectAliveTag } from "../../../../src/workbench/alive.ts";
import { mountWorkbenchProxy } from "../../../../src/workbench/routes.ts";
import { tmpdirFixture } from "../../../helpers/tmp.ts";

describe("render mode", () => {
  it("unset, empty and default mean default; stream opts in", () => {
    assert.equal(parseRenderMode(undefined), "default");
    assert.equal(parseRenderMode(""), "default");
    assert.equal(parseRenderMode("default"), "default");
    assert.equal(parseRenderMode("stream"), "stream");
  });
  it("anything else is a configuration error naming the value and the choices", () => {
    for (const bad of ["iframe", "Stream", "browser"]) {
      assert.throws(
        () => parseRenderMode(bad),
        (e: unknown) =>
          e instanceof CcbError &&
          e.code === "CONFIG_INVALID" &&
          e.message.includes(bad) &&
          /default.*stream/.test(e.hint ?? ""),
      );
    }
  });
});

describe("App resource metadata", () => {
  it("asks for the gateway origin only: frame + http/ws connect (https gives wss)", () => {
    assert.deepEqual(
      appResourceMeta({ gatewayUrl: "http://127.0.0.1:4000", renderMode: "default", starting: false }).ui.csp,
      {
        frameDomains: ["http://127.0.0.1:4000"],
        connectDomains: ["http://127.0.0.1:4000", "ws://127.0.0.1:4000"],
      },
    );
    const meta = appResourceMeta({
      gatewayUrl: "https://editor.example.com:8443",
      renderMode: "stream",
      starting: false,
      stream: { url: "wss://editor.example.com:8443/stream", token: "SECRET" },
    });
    assert.deepEqual(meta.ui.csp.connectDomains, ["https://editor.example.com:8443", "wss://editor.example.com:8443"]);
    assert.ok(!JSON.stringify(meta).includes("SECRET"));
  });
  it("the App document loads nothing from outside", () => {
    const html = workbenchAppHtml();
    assert.doesNotMatch(html, /<(script|img|link|iframe)[^>]+(src|href)=/i);
    assert.match(html, /ui\/initialize/);
    assert.match(html, /ccb:workbench-alive/);
  });
});

/** A tools/call of vscode_open through the MCP server: its isError result as the CcbError fields, or the result. */
type OpenResult = {
  isError?: boolean;
  content: Array<{ text: string }>;
  structuredContent?: { error?: { code: string; message: string; hint?: string } };
  _meta?: Record<string, unknown>;
};
const callOpen = async (client: Client): Promise<OpenResult> =>
  (await client.callTool({ name: "vscode_open", arguments: {} })) as OpenResult;

describe("MCP server with and without the App", () => {
  const ws = tmpdirFixture({ prefix: "ccb-app-unit-" });
  let core: Core;
  before(() => {
    core = createCore({ roots: [ws.path], log: silentLogger });
  });
  after(async () => {
    await core.dispose();
    ws.cleanup();
  });
  const connect = async (app?: AppState) => {
    const server = createMcpServer({ core, log: silentLogger, app });
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "t", version: "1" });
    await Promise.all([server.connect(a), client.connect(b)]);
    return { client, close: () => client.close() };
  };

  it("without a workbench: no resources capability and no ui link on vscode_open", async () => {
    for (const app of [undefined, new AppState()]) {
      const c = await connect(app);
      assert.equal(c.client.getServerCapabilities()?.resources, undefined);
      const t = (await c.client.listTools()).tools.find((x) => x.name === "vscode_open");
      assert.equal((t?._meta as Record<string, unknown> | undefined)?.ui, undefined);
      await c.close();
    }
  });

  it("with a workbench: the resource is listed and read, vscode_open links it", async () => {
    const app = new AppState();
    app.set({ gatewayUrl: "http://127.0.0.1:4000", renderMode: "default", starting: false });
    const c = await connect(app);
    const list = await c.client.listResources();
    assert.deepEqual(
      list.resources.map((r) => [r.uri, r.mimeType]),
      [[WORKBENCH_APP_URI, MCP_APP_MIME]],
    );
    const read = await c.client.readResource({ uri: WORKBENCH_APP_URI });
    assert.equal(read.contents[0]?.mimeType, MCP_APP_MIME);
    assert.equal((read.contents[0] as { text: string }).text, workbenchAppHtml());
    const t = (await c.client.listTools()).tools.find((x) => x.name === "vscode_open");
    assert.deepEqual((t?._meta as Record<string, unknown>).ui, { resourceUri: WORKBENCH_APP_URI });
    // The flat key of older hosts, as the ext-apps server helper registerAppTool writes it.
    assert.equal((t?._meta as Record<string, unknown> | undefined)?.["ui/resourceUri"], WORKBENCH_APP_URI);
    await c.close();
  });
});

describe("a session created before the workbench is set up", () => {
  const ws = tmpdirFixture({ prefix: "ccb-app-early-" });
  const core = createCore({ roots: [ws.path], log: silentLogger });
  after(async () => {
    await core.dispose();
    ws.cleanup();
  });

  it("is offered the App from the start and told when its metadata arrives; reads wait for it", async () => {
    const app = new AppState();
    app.expect();
    const server = createMcpServer({ core, log: silentLogger, app });
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "t", version: "1" });
    let changed = 0;
    const notified = new Promise<void>((resolve) => {
      client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
        changed++;
        resolve();
      });
    });
    await Promise.all([server.connect(a), client.connect(b)]);
    assert.equal(client.getServerCapabilities()?.resources?.listChanged, true);
    const t = (await client.listTools()).tools.find((x) => x.name === "vscode_open");
    assert.deepEqual((t?._meta as Record<string, unknown>).ui, { resourceUri: WORKBENCH_APP_URI });
    const starting = await callOpen(client);
    const err = starting.structuredContent?.error;
    assert.ok(
      starting.isError &&
        err?.code === "BRIDGE_UNAVAILABLE" &&
        /still starting/.test(err.message) &&
        /again in 5 seconds/.test(err.hint ?? ""),
      JSON.stringify(starting),
    );
    // A read issued now is answered once the App is set up.
    const read = client.readResource({ uri: WORKBENCH_APP_URI });
    app.set({ gatewayUrl: "http://127.0.0.1:4100", renderMode: "default", starting: true });
    const content = (await read).contents[0] as unknown as { _meta: { ui: { csp: { frameDomains: string[] } } } };
    assert.deepEqual(content._meta.ui.csp.frameDomains, ["http://127.0.0.1:4100"]);
    await notified;
    const listed = (await client.listResources()).resources;
    assert.deepEqual(
      listed.map((r) => r.uri),
      [WORKBENCH_APP_URI],
    );
    assert.deepEqual((listed[0]?._meta as { ui: { csp: { frameDomains: string[] } } }).ui.csp.frameDomains, [
      "http://127.0.0.1:4100",
    ]);
    assert.match((await callOpen(client)).content[0]?.text ?? "", /still starting/);
    // Settling without a workbench gives the real reason, not "starting".
    app.set({ gatewayUrl: "http://127.0.0.1:4100", renderMode: "default", starting: false });
    const settled = await callOpen(client);
    assert.ok(
      settled.isError && /No workbench is running/.test(settled.structuredContent?.error?.message ?? ""),
      JSON.stringify(settled),
    );
    // A change that leaves the listing as it was sends nothing more.
    assert.equal(changed, 1);
    await client.close();
  });

  it("without a workbench configured, the server has no resources capability at all", async () => {
    const app = new AppState();
    const server = createMcpServer({ core, log: silentLogger, app });
    assert.equal(app.offered(), false);
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "t", version: "1" });
    await Promise.all([server.connect(a), client.connect(b)]);
    assert.equal(client.getServerCapabilities()?.resources, undefined);
    await client.close();
  });
});

describe("vscode_open result metadata", () => {
  const ws = tmpdirFixture({ prefix: "ccb-app-open-" });
  const core = createCore({ roots: [ws.path], log: silentLogger });
  const app = new AppState();
  let client: Client;
  before(async () => {
    app.expect();
    const server = createMcpServer({ core, log: silentLogger, app });
    const [a, b] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: "t", version: "1" });
    await Promise.all([server.connect(a), client.connect(b)]);
  });
  after(async () => {
    await client.close();
    await core.dispose();
    ws.cleanup();
  });
  const run = () => callOpen(client);
  const URL_ = "http://127.0.0.1:4000/ide/SECRETKEY/";
  const visible = (r: OpenResult) => `${JSON.stringify(r.content)}${JSON.stringify(r.structuredContent)}`;

  it("default mode: the workbench URL in _meta only, no stream entry", async () => {
    core.claimEditor("test").setWorkbench({ url: URL_, runtime: "code-server" });
    app.set({ gatewayUrl: "http://127.0.0.1:4000", renderMode: "default", starting: false });
    const r = await run();
    assert.deepEqual(r._meta, { "ccb/workbench": { url: URL_, runtime: "code-server" } });
    assert.ok(!visible(r).includes("SECRETKEY"));
  });

  it("stream mode: the stream URL and token, or the reason it is not there (never a silent iframe)", async () => {
    app.set({
      gatewayUrl: "http://127.0.0.1:4000",
      renderMode: "stream",
      starting: false,
      stream: { url: "ws://127.0.0.1:4000/stream", token: "TOKEN123" },
    });
    const ok = await run();
    assert.deepEqual(ok._meta?.["ccb/stream"], { url: "ws://127.0.0.1:4000/stream", token: "TOKEN123" });
    assert.ok(!visible(ok).includes("TOKEN123"));
    app.set({
      gatewayUrl: "http://127.0.0.1:4000",
      renderMode: "stream",
      starting: false,
      streamError: "The stream could not start: no Chromium.",
    });
    assert.deepEqual((await run())._meta?.["ccb/stream"], { error: "The stream could not start: no Chromium." });
    app.set({ gatewayUrl: "http://127.0.0.1:4000", renderMode: "stream", starting: false });
    assert.match(((await run())._meta?.["ccb/stream"] as { error: string }).error, /still starting/);
  });

  it("default mode with the stream on demand: offered to the App only, marked onDemand; not offered, nothing", async () => {
    const stream = { url: "ws://127.0.0.1:4000/stream", token: "TOKEN456", onDemand: true };
    app.set({ gatewayUrl: "http://127.0.0.1:4000", renderMode: "default", starting: false, stream });
    const r = await run();
    assert.deepEqual(r._meta?.["ccb/stream"], stream);
    assert.ok(!visible(r).includes("TOKEN456"));
    app.set({ gatewayUrl: "http://127.0.0.1:4000", renderMode: "default", starting: false });
    assert.equal((await run())._meta?.["ccb/stream"], undefined);
  });
});

describe("liveness script injection", () => {
  it("goes before </head>, or first when there is no head", () => {
    assert.equal(
      injectAliveTag("<html><head><title>x</title></head><body></body></html>", "/s.js"),
      '<html><head><title>x</title><script src="/s.js"></script></head><body></body></html>',
    );
    assert.equal(injectAliveTag("<p>hi</p>", "/s.js"), '<script src="/s.js"></script><p>hi</p>');
  });

  const BASE = "/ide/unit-key";
  const sockDir = mkdtempSync(join(tmpdir(), "ccb-app-"));
  const socket = join(sockDir, "runtime.sock");
  const session = new BrowserSession({ path: () => BASE, secure: () => false });
  const headers: Record<string, string> = {};
  let upstream: Server;
  let gw: Gateway;
  let seen: IncomingHttpHeaders | undefined;
  before(async () => {
    upstream = createServer((req, res) => {
      seen = req.headers;
      if (req.url === "/")
        res
          .writeHead(200, { "content-type": "text/html; charset=utf-8" })
          .end("<html><head><title>wb</title></head><body>ü</body></html>");
      else if (req.url === "/?folder=%2Fw") res.writeHead(302, { location: "/elsewhere" }).end();
      else res.writeHead(200, { "content-type": "text/html" }).end("<html><head></head></html>");
    });
    upstream.listen(socket);
    await once(upstream, "listening");
    gw = new Gateway({ host: "127.0.0.1", port: 0, log: silentLogger });
    const url = await gw.listen();
    mountWorkbenchProxy(
      { gateway: gw, url },
      BASE,
      { socketPath: () => socket, proofKey: Buffer.alloc(32, 1) },
      session,
      silentLogger,
    );
    const r = await fetch(session.link(`${url}${BASE}/x`), { redirect: "manual" });
    headers.cookie = String(r.headers.get("set-cookie")).split(";")[0] as string;
  });
  after(async () => {
    await gw.close();
    upstream.closeAllConnections();
    upstream.close();
    rmSync(sockDir, { recursive: true, force: true });
  });

  it("the workbench page gets the script with a correct Content-Length; upstream is asked for identity encoding", async () => {
    const r = await fetch(`${gw.url}${BASE}/`, { headers: { "accept-encoding": "gzip, br", ...headers } });
    const body = await r.text();
    assert.equal(
      body,
      `<html><head><title>wb</title><script src="${BASE}${ALIVE_SCRIPT_PATH}"></script></head><body>ü</body></html>`,
    );
    assert.equal(Number(r.headers.get("content-length")), Buffer.byteLength(body));
    assert.equal(seen?.["accept-encoding"], "identity");
  });

  it("other pages and non-200 answers pass through untouched; the script itself is served", async () => {
    assert.equal(await (await fetch(`${gw.url}${BASE}/other.html`, { headers })).text(), "<html><head></head></html>");
    const redirect = await fetch(`${gw.url}${BASE}/?folder=%2Fw`, { redirect: "manual", headers });
    assert.equal(redirect.status, 302);
    const script = await fetch(`${gw.url}${BASE}${ALIVE_SCRIPT_PATH}`, { headers });
    assert.match(script.headers.get("content-type") ?? "", /javascript/);
    assert.match(await script.text(), /window\.parent\.postMessage\(\{ type: "ccb:workbench-alive" \}/);
  });
});
