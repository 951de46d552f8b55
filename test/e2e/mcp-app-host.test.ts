import assert from "node:assert/strict";
import { once } from "node:events";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { build } from "esbuild";
import { WebSocket } from "ws";
import { silentLogger } from "../../src/core/log.ts";
import type { CdpSession } from "../../src/platform/cdp-pipe.ts";
import { type Chromium, launchChromium } from "../../src/platform/chromium.ts";
import { repoRoot } from "../helpers/cli.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { bootWorkbench, type ToolResult, type Workbench } from "../helpers/workbench.ts";

/**
 * The MCP App in a real MCP Apps host built on the ext-apps SDK (`AppBridge` +
 * `PostMessageTransport`, test/e2e/app-host/host.ts), in real Chromium, with `ccb serve
 * --render-mode stream` and the real code-server workbench behind it. The host is the shape of the
 * SDK's basic host: an outer page, a sandbox proxy on a second origin that applies the CSP the host
 * grants, the App document inside; an MCP SDK client connected to the serve reads the resource and
 * calls vscode_open. Each tier is screenshotted into test-artifacts/ (kept by CI).
 *
 * As with every real host, the host page and its sandbox are on another site than ccb's gateway
 * (`localhost` vs `127.0.0.1`), and Chromium runs with third-party cookie restriction on: a
 * workbench cookie is never sent in the App's frame (a positive control below shows the cookie way
 * in fails there and works in a same-site frame), so embedding rests on the frame capability.
 */
const ARTIFACTS = join(repoRoot, "test-artifacts");
const APP_URI = "ui://ccb/workbench.html";
const ws = tmpdirFixture({ prefix: "ccb-apphost-ws-" });
const home = tmpdirFixture({ prefix: "ccb-apphost-home-" });
writeFileSync(join(ws.path, "hello.txt"), "hello\n");

/** The sandbox proxy: frames the App with the host's CSP, relays messages both ways, answers test probes. */
const SANDBOX_PAGE = `<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0;overflow:hidden">
<script>
let inner = null;
const list = (a) => (a && a.length ? a.join(" ") : "'none'");
window.addEventListener("message", (e) => {
  if (e.source === window.parent) {
    const m = e.data;
    if (m && m.type === "ccb-test-probe") {
      let v;
      try { v = Function("doc", "return (" + m.expr + ")")(inner && inner.contentDocument); } catch (err) { v = { probeError: String(err) }; }
      Promise.resolve(v).then((x) => e.ports[0].postMessage(x));
      return;
    }
    if (m && m.method === "ui/notifications/sandbox-resource-ready") {
      const p = m.params, csp = p.csp || {};
      const policy = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; frame-src " +
        list(csp.frameDomains) + "; connect-src " + list(csp.connectDomains);
      inner = document.createElement("iframe");
      inner.setAttribute("sandbox", p.sandbox);
      inner.style.cssText = "display:block;width:100%;height:100vh;border:0";
      inner.srcdoc = p.html.replace("<head>", '<head><meta http-equiv="Content-Security-Policy" content="' + policy + '">');
      document.body.appendChild(inner);
      return;
    }
    if (inner) inner.contentWindow.postMessage(m, "*");
  } else if (inner && e.source === inner.contentWindow) {
    window.parent.postMessage(e.data, "*");
  }
});
window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, "*");
</script></body></html>`;

let wb: Workbench;
let chromium: Chromium | undefined;
let cdp: CdpSession;
const servers: Server[] = [];
let hostUrl = "";
let sandboxUrl = "";
let hostScript = "";
let origin = "";
let html = "";
let sameSiteUrl = "";

/** A test server on 127.0.0.1, addressed as `name` (`localhost`: another site than the gateway's 127.0.0.1). */
async function listen(handler: Parameters<typeof createServer>[1], name = "localhost"): Promise<string> {
  const s = createServer(handler);
  servers.push(s);
  s.listen(0, "127.0.0.1");
  await once(s, "listening");
  return `http://${name}:${(s.address() as AddressInfo).port}`;
}

/** `/frame?src=<url>`: a page that frames `src` (the controls' cross-site and same-site framers). */
function framePage(req: IncomingMessage, res: ServerResponse): boolean {
  const u = new URL(req.url ?? "/", "http://x");
  if (u.pathname !== "/frame") return false;
  const src = JSON.stringify(u.searchParams.get("src") ?? "about:blank").replace(/</g, "\\u003c");
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  res.end(
    `<!doctype html><html><body><iframe id="f"></iframe><script>document.getElementById("f").src = ${src};</script></body></html>`,
  );
  return true;
}

/** The HTTP statuses Chromium got, by URL (Network.responseReceived). */
const statuses = new Map<string, number[]>();

async function evaluate<T>(expression: string): Promise<T> {
  const r = (await cdp.send("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true })) as {
    result: { value?: unknown };
    exceptionDetails?: unknown;
  };
  assert.equal(r.exceptionDetails, undefined, JSON.stringify(r.exceptionDetails));
  return r.result.value as T;
}

/** Evaluate in the App's document (through the sandbox proxy). */
const probe = <T>(expr: string): Promise<T> => evaluate<T>(`ccbHost.probe(${JSON.stringify(expr)})`);

/** Poll a probe until `ok` holds (events inside the App that the host does not see). */
async function until<T>(what: string, expr: string, ok: (v: T) => boolean, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe<T>(expr);
    if (ok(v)) return v;
    if (Date.now() > deadline) assert.fail(`${what}: last ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function screenshot(name: string): Promise<void> {
  const shot = (await cdp.send("Page.captureScreenshot", { format: "png" })) as { data: string };
  writeFileSync(join(ARTIFACTS, name), Buffer.from(shot.data, "base64"));
}

/** Navigate the page and wait for its load event. */
async function navigate(url: string): Promise<void> {
  const loaded = new Promise<void>((resolve) => cdp.on("Page.loadEventFired", () => resolve()));
  await cdp.send("Page.navigate", { url });
  await loaded;
}

/** The statuses Chromium got for `url`, waited for (bounded). */
async function statusOf(url: string, what: string): Promise<number> {
  const deadline = Date.now() + 30_000;
  while (!statuses.get(url)?.length) {
    if (Date.now() > deadline) assert.fail(`no response seen for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return (statuses.get(url) as number[]).at(-1) as number;
}

/** A fresh host page with one App: `csp` is what the host grants, `declared` what it tells the App. */
async function loadHost(o: {
  result: ToolResult;
  csp: { frameDomains?: string[]; connectDomains?: string[] };
  declared: { frameDomains?: string[]; connectDomains?: string[] };
  hostContext?: Record<string, unknown>;
}): Promise<void> {
  const loaded = new Promise<void>((resolve) => cdp.on("Page.loadEventFired", () => resolve()));
  await cdp.send("Page.navigate", { url: `${hostUrl}/` });
  await loaded;
  const scenario = {
    sandboxUrl,
    html,
    csp: o.csp,
    hostCapabilities: { openLinks: {}, logging: {}, sandbox: { csp: o.declared } },
    hostContext: {
      theme: "dark",
      platform: "web",
      displayMode: "inline",
      availableDisplayModes: ["inline", "fullscreen"],
      containerDimensions: { width: 1000, maxHeight: 700 },
      ...o.hostContext,
    },
    result: o.result,
  };
  await evaluate(`ccbHost.load(${JSON.stringify(scenario)})`);
}

/** The App's size (#app: what the host's container holds), its stage below the bar (#wrap) and the last stream frame's size. */
const SIZES =
  "(() => { const a = doc.getElementById('app'), w = doc.getElementById('wrap'); " +
  "return { app: a.offsetWidth + 'x' + a.offsetHeight, wrap: w.offsetWidth + 'x' + w.offsetHeight, bar: doc.getElementById('bar').offsetHeight, frame: w.dataset.frameSize || '' }; })()";
type Sizes = { app: string; wrap: string; bar: number; frame: string };

const settled = () => evaluate<{ state: string; detail: string }>("ccbHost.state((s) => s.state !== 'probing')");

/** The HTTP status a new /stream viewer gets (101 = connected, then closed again). */
function viewerStatus(stream: { url: string; token: string }): Promise<number> {
  return new Promise((resolve) => {
    const v = new WebSocket(`${stream.url}?token=${encodeURIComponent(stream.token)}`);
    v.on("unexpected-response", (_q, res) => resolve(res.statusCode ?? 0));
    v.on("open", () => {
      v.close();
      resolve(101);
    });
    v.on("error", () => resolve(0));
  });
}

function withoutStream(r: ToolResult): ToolResult {
  const { "ccb/stream": _stream, ...meta } = r._meta ?? {};
  return { ...r, _meta: meta };
}

before(
  async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const bundle = await build({
      entryPoints: [join(repoRoot, "test/e2e/app-host/host.ts")],
      bundle: true,
      write: false,
      format: "iife",
      platform: "browser",
      logLevel: "warning",
    });
    hostScript = bundle.outputFiles[0]?.text ?? "";
    hostUrl = await listen((req, res) => {
      if (framePage(req, res)) return;
      if (req.url === "/host.js") return void res.writeHead(200, { "content-type": "text/javascript" }).end(hostScript);
      if (req.url !== "/") return void res.writeHead(404).end();
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(
        '<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0;background:#444"><script src="/host.js"></script></body></html>',
      );
    });
    // A second origin (another port) for the sandbox proxy, as real hosts do.
    sandboxUrl = `${await listen((_req, res) => void res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(SANDBOX_PAGE))}/sandbox.html`;
    // The same-site framer of the positive control: 127.0.0.1, the gateway's site (ports do not make sites).
    sameSiteUrl = await listen((req, res) => void (framePage(req, res) || res.writeHead(404).end()), "127.0.0.1");
    wb = await bootWorkbench(ws.path, home.path, ["--render-mode", "stream"]);
    await wb.waitLog(/stream: server-side Chromium \(pid \d+\) streams the workbench/);
    origin = new URL(wb.serve.base).origin;
    const read = await wb.client.readResource({ uri: APP_URI });
    html = (read.contents[0] as { text: string }).text;
    chromium = await launchChromium({ url: "about:blank", log: silentLogger, width: 1100, height: 900 });
    cdp = chromium.page;
    await cdp.send("Page.enable");
    await cdp.send("Runtime.enable");
    // Responses seen by the page and by its out-of-process frames (the workbench is on another site).
    const record = (p: Record<string, unknown>) => {
      const r = p.response as { url: string; status: number };
      statuses.set(r.url, [...(statuses.get(r.url) ?? []), r.status]);
    };
    const browser = chromium;
    cdp.on("Network.responseReceived", record);
    cdp.on("Target.attachedToTarget", (p) => {
      const child = browser.session(String(p.sessionId));
      child.on("Network.responseReceived", record);
      void child
        .send("Network.enable")
        .catch(() => undefined)
        .then(() => child.send("Runtime.runIfWaitingForDebugger"))
        .catch(() => undefined);
    });
    await cdp.send("Network.enable");
    await cdp.send("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: true, flatten: true });
    // Third-party cookies blocked, the way browsers and Electron hosts are heading.
    await cdp.send("Network.setCookieControls", {
      enableThirdPartyCookieRestriction: true,
      disableThirdPartyCookieMetadata: true,
      disableThirdPartyCookieHeuristics: true,
    });
  },
  { timeout: 300_000 },
);

after(async () => {
  await chromium?.close();
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
  await wb?.stop();
  ws.cleanup();
  home.cleanup();
});

describe("the MCP App in an ext-apps AppBridge host (real Chromium, real workbench)", { timeout: 900_000 }, () => {
  it("the host grants frameDomains: the workbench is embedded and its extension host connects; fullscreen on request; teardown answered", async () => {
    const r = withoutStream(await wb.ok("vscode_open"));
    statuses.clear();
    const connected = wb.countLog(/bridge: extension host \d+ connected/);
    const grant = { frameDomains: [origin], connectDomains: [origin, origin.replace(/^http/, "ws")] };
    await loadHost({ result: r, csp: grant, declared: grant });
    const s = await settled();
    assert.equal(s.state, "embedded", JSON.stringify(s));
    assert.equal(s.detail, origin);
    // The framed workbench is a new client of the runtime: its own extension host connects to the bridge.
    await wb.waitLog(
      (err) => err.split("\n").filter((l) => /bridge: extension host \d+ connected/.test(l)).length > connected,
    );
    assert.equal(await probe<string>("doc.documentElement.dataset.state"), "embedded");
    assert.equal(
      await probe<string>("doc.querySelector('iframe').src"),
      (r._meta as { "ccb/workbench": { url: string } })["ccb/workbench"].url,
    );
    assert.notEqual(
      new URL(hostUrl).hostname,
      new URL(origin).hostname,
      "the host is on another site than the gateway",
    );
    // The frame is in through its capability path (every workbench request under it, none refused;
    // code-server's own 404s for optional files are its answers),
    // and no workbench cookie exists in this browser.
    const seen = [...statuses.entries()].filter(([u]) => u.startsWith(`${origin}/`));
    const under = new RegExp(`^${origin}/s/[A-Za-z0-9_-]{43}/ide/`);
    assert.ok(
      seen.some(([u, st]) => under.test(u) && st.includes(200)),
      "the workbench page was answered below /s/<capability>",
    );
    assert.deepEqual(
      seen
        .filter(([u, st]) => !under.test(u) || st.some((x) => x === 401 || x === 403))
        .map(([u, st]) => `${u.replace(/\/s\/[^/]+/, "/s/<cap>").slice(0, 120)} ${st}`),
      [],
      "every workbench request of the frame went below the capability, none was refused",
    );
    const { cookies } = (await cdp.send("Network.getAllCookies")) as { cookies: Array<{ name: string }> };
    assert.deepEqual(
      cookies.filter((c) => c.name.startsWith("ccb_")).map((c) => c.name),
      [],
      "the frame got no cookie",
    );
    // The host context was applied: theme, and the container width with a capped height.
    assert.equal(await probe<string>("doc.documentElement.dataset.theme"), "dark");
    const sized = await probe<Sizes>(SIZES);
    assert.ok(sized.bar > 0, "the bar with the fullscreen button is shown (the host offers fullscreen)");
    assert.equal(sized.app, "1000x700");
    assert.equal(sized.wrap, `1000x${700 - sized.bar}`);
    // The App's size reached the host, which sized the frame to it.
    await evaluate(
      "new Promise((r) => { const t = () => ccbHost.sizes.some((s) => s.height === 700) ? r() : setTimeout(t, 50); t(); })",
    );
    await until(
      "the workbench frame fills the stage",
      "doc.querySelector('iframe').offsetHeight",
      (h: number) => h === 700 - sized.bar,
    );
    await screenshot("mcp-app-host-embedded.png");

    // Fullscreen: the App's button asks the host (ui/request-display-mode) and follows its answer.
    assert.equal(await probe<boolean>("doc.getElementById('fullscreen').classList.contains('hidden')"), false);
    await probe("doc.getElementById('fullscreen').click()");
    await until(
      "the App is in fullscreen",
      "doc.documentElement.dataset.displayMode",
      (m: string) => m === "fullscreen",
    );
    assert.deepEqual(await evaluate<string[]>("ccbHost.displayModes"), ["fullscreen"]);
    const viewport = await evaluate<{ w: number; h: number }>("({ w: innerWidth, h: innerHeight })");
    await until("the App fills the host's viewport", SIZES, (v: Sizes) => v.app === `${viewport.w}x${viewport.h}`);
    await screenshot("mcp-app-host-fullscreen.png");

    // Teardown: answered, the workbench frame is gone.
    assert.deepEqual(await evaluate("ccbHost.bridge.teardownResource({})"), {});
    assert.equal(await probe<string>("doc.documentElement.dataset.state"), "closed");
    assert.equal(await probe<number>("doc.querySelectorAll('iframe').length"), 0);
  });

  it("the host refuses the frame origin: the browser card, whose button sends ui/open-link to the host", async () => {
    const r = withoutStream(await wb.ok("vscode_open"));
    const url = (r._meta as { "ccb/workbench": { url: string } })["ccb/workbench"].url;
    await loadHost({ result: r, csp: {}, declared: { frameDomains: [] }, hostContext: { theme: "light" } });
    const s = await settled();
    assert.equal(s.state, "browser");
    assert.match(s.detail, /frameDomains/);
    assert.equal(await probe<string>("doc.getElementById('link').href"), url);
    assert.equal(await probe<number>("doc.querySelectorAll('iframe').length"), 0, "no frame was even tried");
    assert.equal(await probe<string>("doc.documentElement.dataset.theme"), "light");
    assert.equal(await probe<string>("getComputedStyle(doc.body).colorScheme"), "light");
    await screenshot("mcp-app-host-browser-card.png");
    await probe("doc.getElementById('open').click()");
    assert.deepEqual(
      await evaluate<string[]>(
        "new Promise((r) => { const t = () => ccbHost.links.length ? r(ccbHost.links) : setTimeout(t, 50); t(); })",
      ),
      [url],
    );
    assert.deepEqual(await evaluate("ccbHost.bridge.teardownResource({})"), {});
  });

  it("stream mode with only connectDomains: canvas frames; a container-size change resizes the App and the remote page; teardown closes the stream", async () => {
    const r = await wb.ok("vscode_open");
    const connect = { connectDomains: [origin, origin.replace(/^http/, "ws")] };
    await loadHost({
      result: r,
      csp: connect,
      declared: connect,
      hostContext: { containerDimensions: { width: 1000, height: 640 } },
    });
    const s = await settled();
    assert.equal(s.state, "stream", JSON.stringify(s));
    assert.ok(Number(await probe<string>("doc.getElementById('wrap').dataset.frames")) >= 1);
    const first = await until(
      "the remote page takes the stage's size",
      SIZES,
      (v: Sizes) => v.frame !== "" && v.frame === v.wrap,
    );
    assert.equal(first.app, "1000x640");
    await screenshot("mcp-app-host-stream.png");

    // The host's container shrinks: the App follows, tells the host its new size, the stream refits.
    await evaluate("ccbHost.setContext({ containerDimensions: { width: 800, height: 450 } })");
    await until("the App takes the new container size", SIZES, (v: Sizes) => v.app === "800x450");
    await evaluate(
      "new Promise((r) => { const t = () => ccbHost.sizes.some((s) => s.height === 450) ? r() : setTimeout(t, 50); t(); })",
    );
    assert.equal(await evaluate<string>("ccbHost.frame.style.height"), "450px");
    const resized = await until("a frame of the new stage size is drawn", SIZES, (v: Sizes) => v.frame === v.wrap);
    assert.equal(resized.wrap, `800x${450 - resized.bar}`);
    const canvas = await probe<{ w: number; h: number; left: number; top: number }>(
      "(() => { const c = doc.querySelector('canvas'); return { w: c.offsetWidth, h: c.offsetHeight, left: c.offsetLeft, top: c.offsetTop }; })()",
    );
    assert.deepEqual(canvas, { w: 800, h: 450 - resized.bar, left: 0, top: 0 }, "the canvas fills the stage exactly");
    await screenshot("mcp-app-host-stream-resized.png");

    // The App holds the one stream viewer: another one is refused while it shows the stream ...
    const stream = r._meta?.["ccb/stream"] as { url: string; token: string };
    assert.equal(await viewerStatus(stream), 409);
    assert.deepEqual(await evaluate("ccbHost.bridge.teardownResource({})"), {});
    assert.equal(await probe<string>("doc.documentElement.dataset.state"), "closed");
    assert.equal(await probe<number>("doc.querySelectorAll('canvas').length"), 0);
    // ... and teardown closed its socket: the next viewer gets in.
    const deadline = Date.now() + 30_000;
    let status = await viewerStatus(stream);
    while (status !== 101 && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 200));
      status = await viewerStatus(stream);
    }
    assert.equal(status, 101, "the stream is free after teardown");
  });

  it("positive control: a browser holding the workbench cookie is refused in a cross-site frame without the capability and in a same-site one, let in at top level", async () => {
    const link = new URL(
      (withoutStream(await wb.ok("vscode_open"))._meta as { "ccb/workbench": { url: string } })["ccb/workbench"].url,
    );
    const basePath = link.pathname.replace(/\/$/, "");
    // Top level: the one-time link gives this browser the cookie (the person's-tab way in, unchanged).
    link.pathname = `${basePath}/__ccb/epoch`;
    await navigate(link.toString());
    link.searchParams.delete("ccb_ott");
    const epoch = link.toString();
    assert.equal(await evaluate<string>("location.href"), epoch, "the token left the address bar");
    assert.equal(await statusOf(epoch, "the top-level epoch"), 200);
    const { cookies } = (await cdp.send("Network.getAllCookies")) as {
      cookies: Array<{ name: string; sameSite?: string }>;
    };
    assert.ok(
      cookies.some((c) => c.name.startsWith("ccb_") && c.sameSite === "Strict"),
      "the browser holds the cookie",
    );
    // The same address framed by a page of the gateway's own site (another port): the cookie is
    // sent, and refused there (Sec-Fetch-Site: same-site; only the gateway's own pages use it).
    statuses.delete(epoch);
    await navigate(`${sameSiteUrl}/frame?src=${encodeURIComponent(epoch)}`);
    assert.equal(await statusOf(epoch, "the same-site frame"), 403);
    // Framed by the host's site (localhost): no cookie goes there, and the request is refused on its
    // fetch metadata (Sec-Fetch-Site: cross-site) before any credential is looked at. This is what
    // embedding met before; the frame capability is its way in.
    statuses.delete(epoch);
    await navigate(`${hostUrl}/frame?src=${encodeURIComponent(epoch)}`);
    assert.equal(await statusOf(epoch, "the cross-site frame"), 403);
    await screenshot("mcp-app-host-control-cookie-refused.png");
  });
});

describe("default render mode, a host that refuses frames but allows connections (stream on demand)", {
  timeout: 900_000,
}, () => {
  const ws2 = tmpdirFixture({ prefix: "ccb-apphost2-ws-" });
  const home2 = tmpdirFixture({ prefix: "ccb-apphost2-home-" });
  writeFileSync(join(ws2.path, "hello.txt"), "hello\n");
  let wb2: Workbench | undefined;
  let origin2 = "";
  const started = /stream: server-side Chromium \(pid \d+\) streams the workbench/;

  before(
    async () => {
      wb2 = await bootWorkbench(ws2.path, home2.path);
      await wb2.waitLog(/ccb serve: workbench \([a-z-]+\) running/);
      origin2 = new URL(wb2.serve.base).origin;
    },
    { timeout: 300_000 },
  );
  after(async () => {
    await wb2?.stop();
    ws2.cleanup();
    home2.cleanup();
  });

  it("the browser card offers the stream only when connections are allowed; choosing it starts the stream and paints frames", async () => {
    const w = wb2 as Workbench;
    const r = await w.ok("vscode_open");
    const s = r._meta?.["ccb/stream"] as { url: string; token: string; onDemand?: boolean };
    assert.equal(s.onDemand, true, "the default mode offers the stream on demand");
    assert.equal(w.countLog(started), 0, "nothing streams before it is asked for");
    // Same token rules as --render-mode stream: a wrong token is refused, and starts nothing.
    assert.equal(await viewerStatus({ url: s.url, token: "x".repeat(43) }), 401);
    assert.equal(w.countLog(started), 0);
    const wsOrigin = origin2.replace(/^http/, "ws");

    // A host that allows no connection to the gateway: the card without the offer.
    await loadHost({ result: r, csp: {}, declared: { frameDomains: [], connectDomains: [] } });
    assert.equal((await settled()).state, "browser");
    assert.equal(await probe<boolean>("doc.getElementById('offer').classList.contains('hidden')"), true);

    // Frames refused, connections allowed: the card offers "Show it here".
    const connect = { connectDomains: [origin2, wsOrigin] };
    await loadHost({ result: r, csp: connect, declared: { frameDomains: [], ...connect } });
    const card = await settled();
    assert.equal(card.state, "browser");
    assert.match(card.detail, /frameDomains/);
    assert.equal(await probe<boolean>("doc.getElementById('offer').classList.contains('hidden')"), false);
    await screenshot("mcp-app-host-card-stream-offer.png");
    await probe("doc.getElementById('stream-here').click()");
    await until(
      "the on-demand stream's first frame",
      "doc.documentElement.dataset.state",
      (v: string) => v === "stream",
    );
    await until(
      "frames drawn on the canvas",
      "Number(doc.getElementById('wrap').dataset.frames || 0)",
      (n: number) => n >= 1,
    );
    // The workbench itself is painted (not only the blank page of a browser that is still loading it).
    await until(
      "the streamed picture shows the workbench (more than a blank page)",
      "(() => { const c = doc.querySelector('canvas'), x = c.getContext('2d'), d = x.getImageData(0, 0, c.width, c.height).data, seen = new Set(); " +
        "for (let i = 0; i < d.length; i += 4 * 997) seen.add(d[i] + ',' + d[i + 1] + ',' + d[i + 2]); return seen.size; })()",
      (n: number) => n >= 4,
    );
    assert.equal(w.countLog(started), 1, "the click started the server-side Chromium");
    assert.equal(await probe<boolean>("doc.getElementById('card').classList.contains('hidden')"), true);
    await screenshot("mcp-app-host-stream-on-demand.png");
    assert.deepEqual(await evaluate("ccbHost.bridge.teardownResource({})"), {});
    assert.equal(await probe<number>("doc.querySelectorAll('canvas').length"), 0);
  });
});
