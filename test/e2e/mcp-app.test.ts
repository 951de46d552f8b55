import assert from "node:assert/strict";
import { once } from "node:events";
import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { WebSocket } from "ws";
import { silentLogger } from "../../src/core/log.ts";
import type { CdpSession } from "../../src/platform/cdp-pipe.ts";
import { type Chromium, launchChromium } from "../../src/platform/chromium.ts";
import { runCcb } from "../helpers/cli.ts";
import { cleanEnv } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { bootWorkbench, type ToolResult, text, type Workbench } from "../helpers/workbench.ts";

/**
 * The MCP App end to end: `ccb serve --http --render-mode stream` with the real code-server
 * workbench, an MCP SDK client for resources/tools, and a real Chromium playing an MCP host that
 * frames the App document and speaks the host side of the postMessage protocol. Booted once.
 */
const ws = tmpdirFixture({ prefix: "ccb-app-ws-" });
const home = tmpdirFixture({ prefix: "ccb-app-home-" });
writeFileSync(join(ws.path, "hello.txt"), "hello\n");
const APP_URI = "ui://ccb/workbench.html";

let wb: Workbench;
let chromium: Chromium | undefined;
let cdp: CdpSession | undefined;
let host: Server | undefined;
let hostUrl = "";
let onLoad: (() => void) | undefined;
const scenarios = new Map<
  string,
  {
    html: string;
    result: ToolResult;
    hostCapabilities: Record<string, unknown>;
    csp: { frameDomains: string[]; connectDomains: string[] };
  }
>();

/** A minimal MCP Apps host page: frames the App (srcdoc + the CSP it declared), answers ui/initialize, delivers the tool result, records what the App reports. */
const HOST_PAGE = (cfgJson: string) => `<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0">
<script type="application/json" id="cfg">${cfgJson}</script>
<script>
const cfg = JSON.parse(document.getElementById("cfg").textContent);
window.states = []; window.links = [];
const waiters = [];
window.settled = () => new Promise((resolve) => {
  const done = window.states.find((s) => s.state !== "probing");
  if (done) resolve(done); else waiters.push(resolve);
});
const f = document.createElement("iframe");
f.setAttribute("sandbox", "allow-scripts allow-same-origin");
f.style.cssText = "width:1280px;height:800px;border:0";
const csp = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; frame-src " + cfg.csp.frameDomains.join(" ") + "; connect-src " + cfg.csp.connectDomains.join(" ");
f.srcdoc = cfg.html.replace("<head>", '<head><meta http-equiv="Content-Security-Policy" content="' + csp + '">');
window.appDoc = () => f.contentDocument;
window.addEventListener("message", (e) => {
  if (e.source !== f.contentWindow) return;
  const m = e.data;
  if (!m || m.jsonrpc !== "2.0") return;
  const send = (x) => f.contentWindow.postMessage(Object.assign({ jsonrpc: "2.0" }, x), "*");
  if (m.method === "ui/initialize") {
    send({ id: m.id, result: { protocolVersion: m.params.protocolVersion, hostInfo: { name: "ccb-test-host", version: "1" }, hostCapabilities: cfg.hostCapabilities, hostContext: { displayMode: "inline" } } });
  } else if (m.method === "ui/notifications/initialized") {
    send({ method: "ui/notifications/tool-result", params: cfg.result });
  } else if (m.method === "notifications/message" && m.params.logger === "ccb-app") {
    window.states.push(m.params.data);
    if (m.params.data.state !== "probing") for (const w of waiters.splice(0)) w(m.params.data);
  } else if (m.method === "ui/open-link") {
    window.links.push(m.params.url);
    send({ id: m.id, result: {} });
  }
});
document.body.appendChild(f);
</script></body></html>`;

async function appResource(): Promise<{ html: string; csp: { frameDomains: string[]; connectDomains: string[] } }> {
  const read = await wb.client.readResource({ uri: APP_URI });
  const c = read.contents[0] as unknown as {
    text: string;
    _meta: { ui: { csp: { frameDomains: string[]; connectDomains: string[] } } };
  };
  return { html: c.text, csp: c._meta.ui.csp };
}

/** Load a scenario in the host page and wait until the App settles (embedded, stream or browser). */
async function runScenario(
  name: string,
  result: ToolResult,
  hostCapabilities: Record<string, unknown> = {},
): Promise<{ state: string; detail: string }> {
  const { html, csp } = await appResource();
  scenarios.set(name, { html, result, hostCapabilities, csp });
  const c = cdp as CdpSession;
  const loaded = new Promise<void>((resolve) => (onLoad = resolve));
  await c.send("Page.navigate", { url: `${hostUrl}/${name}` });
  await loaded;
  return evaluate<{ state: string; detail: string }>("window.settled()");
}

async function evaluate<T>(expression: string): Promise<T> {
  const r = (await (cdp as CdpSession).send("Runtime.evaluate", {
    expression,
    awaitPromise: true,
    returnByValue: true,
  })) as {
    result: { value?: unknown };
    exceptionDetails?: unknown;
  };
  assert.equal(r.exceptionDetails, undefined, JSON.stringify(r.exceptionDetails));
  return r.result.value as T;
}

before(
  async () => {
    wb = await bootWorkbench(ws.path, home.path, ["--render-mode", "stream"]);
    await wb.waitLog(/stream: server-side Chromium \(pid \d+\) streams the workbench/);
    host = createServer((req, res) => {
      const s = scenarios.get(new URL(req.url ?? "/", "http://x").pathname.slice(1));
      if (!s) return void res.writeHead(404).end();
      res
        .writeHead(200, { "content-type": "text/html; charset=utf-8" })
        .end(HOST_PAGE(JSON.stringify(s).replace(/</g, "\\u003c")));
    });
    host.listen(0, "127.0.0.1");
    await once(host, "listening");
    hostUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
    chromium = await launchChromium({ url: "about:blank", log: silentLogger, width: 1400, height: 900 });
    cdp = chromium.page;
    cdp.on("Page.loadEventFired", () => onLoad?.());
    await cdp.send("Page.enable");
    await cdp.send("Runtime.enable");
  },
  { timeout: 300_000 },
);

after(async () => {
  await chromium?.close();
  host?.closeAllConnections();
  host?.close();
  await wb?.stop();
  ws.cleanup();
  home.cleanup();
});

describe("MCP App (ui://ccb/workbench.html) on ccb serve with the real workbench", { timeout: 900_000 }, () => {
  it("resources/list has the App resource with its MIME type", async () => {
    const list = await wb.client.listResources();
    const r = list.resources.find((x) => x.uri === APP_URI);
    assert.ok(r, JSON.stringify(list));
    assert.equal(r.mimeType, "text/html;profile=mcp-app");
  });

  it("resources/read gives the App document and a CSP request for the gateway origins only", async () => {
    const read = await wb.client.readResource({ uri: APP_URI });
    const c = read.contents[0] as {
      uri: string;
      mimeType: string;
      text: string;
      _meta: { ui: { csp: Record<string, string[]> } };
    };
    assert.equal(c.uri, APP_URI);
    assert.equal(c.mimeType, "text/html;profile=mcp-app");
    const origin = new URL(wb.serve.base).origin;
    assert.deepEqual(c._meta.ui.csp, {
      frameDomains: [origin],
      connectDomains: [origin, origin.replace(/^http/, "ws")],
    });
    assert.match(c.text, /ui\/initialize/);
    assert.doesNotMatch(c.text, /<script[^>]+src=|<link[^>]+href=/i, "self-contained: no external loads");
    const opened = await wb.ok("vscode_open");
    const key = /\/ide\/([^/]+)/.exec((opened._meta?.["ccb/workbench"] as { url: string }).url)?.[1] as string;
    const token = (opened._meta?.["ccb/stream"] as { token: string }).token;
    assert.ok(
      !JSON.stringify(read).includes(key) && !JSON.stringify(read).includes(token),
      "nothing secret in the App resource",
    );
    await assert.rejects(wb.client.readResource({ uri: "ui://ccb/other.html" }), /Unknown resource/);
  });

  it("tools/list links vscode_open to the App", async () => {
    const tools = await wb.client.listTools();
    const t = tools.tools.find((x) => x.name === "vscode_open");
    assert.deepEqual((t?._meta as { ui?: unknown } | undefined)?.ui, { resourceUri: APP_URI });
  });

  it("vscode_open gives the workbench URL and the stream token only in _meta", async () => {
    const r = await wb.ok("vscode_open");
    const url = (r._meta?.["ccb/workbench"] as { url: string }).url;
    const stream = r._meta?.["ccb/stream"] as { url: string; token: string };
    assert.equal(stream.url, `${wb.serve.base.replace(/^http/, "ws")}/stream`);
    assert.match(stream.token, /^[A-Za-z0-9_-]{43}$/, "256-bit base64url token");
    const key = /\/ide\/([^/]+)/.exec(url)?.[1] as string;
    const visible = text(r) + JSON.stringify(r.structuredContent ?? {});
    assert.ok(!visible.includes(key), "no /ide/ key in model-visible output");
    assert.ok(!visible.includes(stream.token), "no stream token in model-visible output");
    assert.ok(!wb.serve.stderr().includes(stream.token), "the stream token is never logged");
  });

  it("/stream refuses a viewer without the right token", async () => {
    for (const q of ["", "?token=wrong"]) {
      const status = await new Promise<number>((resolve) => {
        const s = new WebSocket(`${wb.serve.base.replace(/^http/, "ws")}/stream${q}`);
        s.on("unexpected-response", (_q, res) => resolve(res.statusCode ?? 0));
        s.on("open", () => {
          s.close();
          resolve(101);
        });
      });
      assert.equal(status, 401);
    }
  });

  it("the gateway injects the liveness script into the workbench page (and only there)", async () => {
    const r = await wb.ok("vscode_open");
    const url = (r._meta?.["ccb/workbench"] as { url: string }).url;
    const base = /^(.*\/ide\/[^/]+)\//.exec(url)?.[1] as string;
    const exchange = await fetch(url, { redirect: "manual" });
    assert.equal(exchange.status, 302, "the one-time link sets the workbench cookie");
    const headers = { cookie: String(exchange.headers.get("set-cookie")).split(";")[0] as string };
    const page = await fetch(new URL(String(exchange.headers.get("location")), url), { headers });
    assert.equal(page.status, 200);
    const body = await page.text();
    const src = `${new URL(base).pathname}/__ccb/alive.js`;
    assert.ok(body.includes(`<script src="${src}"></script>`), body.slice(0, 400));
    assert.equal(
      Number(page.headers.get("content-length")),
      Buffer.byteLength(body),
      "Content-Length matches the edited body",
    );
    assert.equal(page.headers.get("content-encoding"), null);
    const script = await fetch(`${new URL(url).origin}${src}`, { headers });
    assert.equal(script.status, 200);
    assert.match(script.headers.get("content-type") ?? "", /javascript/);
    assert.match(await script.text(), /ccb:workbench-alive/);
  });

  it("in a real browser host, the App reaches 'embedded' only after the workbench's liveness message", async () => {
    const r = await wb.ok("vscode_open");
    const { "ccb/stream": _stream, ...meta } = r._meta ?? {};
    const settled = await runScenario("embedded", { ...r, _meta: meta });
    assert.equal(settled.state, "embedded", JSON.stringify(settled));
    const states = await evaluate<Array<{ state: string }>>("window.states");
    assert.deepEqual(
      states.map((s) => s.state),
      ["probing", "embedded"],
    );
    assert.equal(await evaluate<string>("window.appDoc().documentElement.dataset.state"), "embedded");
  });

  it("a host that refuses the frame origin gets the browser card, and its button asks the host to open the link", async () => {
    const r = await wb.ok("vscode_open");
    const url = (r._meta?.["ccb/workbench"] as { url: string }).url;
    const { "ccb/stream": _stream, ...meta } = r._meta ?? {};
    const settled = await runScenario("refused", { ...r, _meta: meta }, { sandbox: { csp: { frameDomains: [] } } });
    assert.equal(settled.state, "browser");
    assert.match(settled.detail, /frameDomains/);
    assert.equal(await evaluate<string>("window.appDoc().getElementById('link').href"), url);
    await evaluate("window.appDoc().getElementById('open').click()");
    assert.deepEqual(
      await evaluate<string[]>(
        "new Promise((r) => { const t = () => window.links.length ? r(window.links) : setTimeout(t, 50); t(); })",
      ),
      [url],
    );
  });

  it("stream mode: the App draws frames of the server-side Chromium on its canvas", async () => {
    const r = await wb.ok("vscode_open");
    const settled = await runScenario("stream", r);
    assert.equal(settled.state, "stream", JSON.stringify(settled));
    assert.ok(Number(await evaluate<string>("window.appDoc().getElementById('wrap').dataset.frames")) >= 1);
    const size = await evaluate<{ w: number; h: number }>(
      "(() => { const c = window.appDoc().querySelector('canvas'); return { w: c.width, h: c.height }; })()",
    );
    assert.deepEqual(size, { w: 1280, h: 800 });
  });
});

describe("the MCP App for a 2026-07-28 client: the UI extension negotiated per request", () => {
  async function modern(capabilities: Record<string, unknown>): Promise<Client> {
    const client = new Client(
      { name: "modern-host", version: "1" },
      { capabilities, versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(wb.serve.url)));
    return client;
  }
  const UI = { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } };

  it("server/discover declares the extension; a host that renders Apps gets vscode_open linked and the App document", async () => {
    const client = await modern(UI);
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), "2026-07-28");
      const ext = client.getServerCapabilities()?.extensions as Record<string, { mimeTypes: string[] }> | undefined;
      assert.deepEqual(ext?.["io.modelcontextprotocol/ui"]?.mimeTypes, ["text/html;profile=mcp-app"]);
      const t = (await client.listTools()).tools.find((x) => x.name === "vscode_open");
      assert.deepEqual((t?._meta as { ui?: unknown } | undefined)?.ui, { resourceUri: APP_URI });
      const read = await client.readResource({ uri: APP_URI });
      assert.equal(read.contents[0]?.mimeType, "text/html;profile=mcp-app");
      assert.match((read.contents[0] as { text: string }).text, /ui\/initialize/);
    } finally {
      await client.close();
    }
  });

  it("a host that does not declare the extension in its request gets vscode_open unlinked (control: the same server above)", async () => {
    const client = await modern({});
    try {
      const t = (await client.listTools()).tools.find((x) => x.name === "vscode_open");
      assert.ok(t, "vscode_open is listed");
      assert.equal((t._meta as { ui?: unknown } | undefined)?.ui, undefined);
    } finally {
      await client.close();
    }
  });
});

describe("render mode selection", () => {
  it("an unknown --render-mode or CCB_RENDER_MODE stops ccb serve with a clear message", async () => {
    for (const [args, env] of [
      [["--render-mode", "iframe"], {}],
      [[], { CCB_RENDER_MODE: "pixels" }],
    ] as const) {
      const r = await runCcb(["serve", "--http", "--port", "0", "--no-workbench", "--workspace", ws.path, ...args], {
        env: cleanEnv(env),
        timeoutMs: 60_000,
      });
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /Unknown render mode "(iframe|pixels)"/);
      assert.match(r.stderr, /"default".*"stream"/s);
    }
  });
});
