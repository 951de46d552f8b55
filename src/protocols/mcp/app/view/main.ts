/// <reference lib="dom" />
/**
 * The MCP App view (browser code, bundled by scripts/page-scripts.mjs into the App document): the
 * ext-apps SDK's `App` speaks the MCP Apps protocol with the host. It shows the workbench in one of
 * three tiers, chosen from the tool result's `_meta` (never from model-visible text):
 *
 * - embedded (default): an iframe to `_meta["ccb/workbench"].url`, declared successful only after
 *   the injected `{type:"ccb:workbench-alive"}` message arrives from that frame; a CSP-blocked
 *   frame fires no useful event, so a timeout falls back to the browser card; a host whose
 *   `sandbox.csp.frameDomains` leaves the origin out gets the card at once;
 * - stream (`_meta["ccb/stream"]`, only when the server runs with --render-mode stream): JPEG
 *   frames of a server-side Chromium drawn on a canvas (`ccbStream`, defined by the document);
 * - browser: an honest card with the reason, an `ui/open-link` request to the host and a plain link;
 *   when the server offers the stream tier on demand (`_meta["ccb/stream"].onDemand`, default render
 *   mode) and the host allows connections to it, also "Show it here", which starts that stream.
 *
 * It follows the host context (theme, style variables, container size, display mode), asks for
 * fullscreen with `ui/request-display-mode` when the host offers it, and tears down (frame, stream)
 * on `ui/resource-teardown`. State changes go to the host as log messages (logger "ccb-app") and
 * into `document.documentElement.dataset.state` (waiting, probing, embedded, stream, browser, closed).
 */
import {
  App,
  applyDocumentTheme,
  applyHostStyleVariables,
  type McpUiDisplayMode,
  type McpUiHostContext,
} from "@modelcontextprotocol/ext-apps";

declare const ccbStream: (o: {
  url: string;
  canvas: HTMLCanvasElement;
  container: HTMLElement;
  onFirstFrame?: () => void;
  onClose?: (reason: string) => void;
}) => { close(): void };
declare const CCB_APP: { aliveTimeoutMs: number; version: string };

type State = "waiting" | "probing" | "embedded" | "stream" | "browser" | "closed";

/** Upper bound of the inline height when the host gives only a maximum. */
const PREFERRED_MAX_HEIGHT = 800;

const root = document.documentElement;
const byId = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const box = byId<HTMLDivElement>("app");
const bar = byId<HTMLDivElement>("bar");
const wrap = byId<HTMLDivElement>("wrap");
const card = byId<HTMLDivElement>("card");
const fullscreenButton = byId<HTMLButtonElement>("fullscreen");

const app = new App(
  { name: "ccb-workbench", version: CCB_APP.version },
  { availableDisplayModes: ["inline", "fullscreen"] },
);

let shown = false;
let displayMode: McpUiDisplayMode = "inline";
let teardown: Array<() => void> = [];

function setState(state: State, detail = ""): void {
  root.dataset.state = state;
  void app
    .sendLog({ level: state === "browser" ? "warning" : "info", logger: "ccb-app", data: { state, detail } })
    .catch(() => {});
}

/** The stream tier offered on demand (default render mode), while the card is up. */
let streamOffer: { url: string; token: string } | undefined;

/** Whether the host lets this App connect to the stream's origin (a host that does not say may). */
function connectAllowed(wsUrl: string): boolean {
  const domains = app.getHostCapabilities()?.sandbox?.csp?.connectDomains;
  if (!Array.isArray(domains)) return true;
  const u = new URL(wsUrl);
  return domains.includes(u.origin) || domains.includes(`${u.protocol === "wss:" ? "https:" : "http:"}//${u.host}`);
}

function showCard(title: string, reason: string, url: string): void {
  byId("title").textContent = title;
  const reasonEl = byId("reason");
  reasonEl.textContent = reason;
  const actions = byId("actions");
  if (url) {
    byId<HTMLAnchorElement>("link").href = url;
    byId<HTMLButtonElement>("open").onclick = () => {
      app.openLink({ url }).then(
        (r) => {
          if (r.isError) reasonEl.textContent = `${reason} The host refused to open the link; use the plain link.`;
        },
        () => {
          reasonEl.textContent = `${reason} The host cannot open links; use the plain link.`;
        },
      );
    };
    actions.classList.remove("hidden");
  } else actions.classList.add("hidden");
  const offer = byId("offer");
  const s = streamOffer;
  if (s && url && connectAllowed(s.url)) {
    byId<HTMLButtonElement>("stream-here").onclick = () => {
      streamOffer = undefined;
      offer.classList.add("hidden");
      stream(s, url);
    };
    offer.classList.remove("hidden");
  } else offer.classList.add("hidden");
  card.classList.remove("hidden");
}

function browser(reason: string, url: string): void {
  showCard(url ? "Open the workbench in a browser tab" : "No workbench", reason, url);
  setState("browser", reason);
}

function frameRefused(origin: string): boolean {
  const domains = app.getHostCapabilities()?.sandbox?.csp?.frameDomains;
  return Array.isArray(domains) && !domains.includes(origin);
}

function embed(url: string): void {
  const origin = new URL(url).origin;
  if (frameRefused(origin)) {
    browser(
      `The host does not allow this App to frame ${origin} (frameDomains), so the workbench cannot be shown here.`,
      url,
    );
    return;
  }
  setState("probing", origin);
  const frame = document.createElement("iframe");
  frame.title = "workbench";
  frame.allow = "clipboard-read; clipboard-write";
  let done = false;
  const onMessage = (e: MessageEvent) => {
    if (
      done ||
      e.source !== frame.contentWindow ||
      (e.data as { type?: unknown } | null)?.type !== "ccb:workbench-alive"
    )
      return;
    done = true;
    clearTimeout(timer);
    card.classList.add("hidden");
    setState("embedded", origin);
  };
  const timer = setTimeout(() => {
    if (done) return;
    done = true;
    frame.remove();
    const seconds = Math.round(CCB_APP.aliveTimeoutMs / 1000);
    browser(
      `The workbench did not report in within ${seconds} s: the host may block frames from ${origin}, ` +
        "or the workbench is not reachable from this browser.",
      url,
    );
  }, CCB_APP.aliveTimeoutMs);
  window.addEventListener("message", onMessage);
  teardown.push(() => {
    done = true;
    clearTimeout(timer);
    window.removeEventListener("message", onMessage);
    frame.remove();
  });
  frame.src = url;
  wrap.appendChild(frame);
}

function stream(s: { url: string; token: string }, workbenchUrl: string): void {
  setState("probing", "stream");
  const canvas = document.createElement("canvas");
  canvas.tabIndex = 0;
  wrap.appendChild(canvas);
  let closing = false;
  try {
    const client = ccbStream({
      url: `${s.url}?token=${encodeURIComponent(s.token)}`,
      canvas,
      container: wrap,
      onFirstFrame: () => {
        card.classList.add("hidden");
        setState("stream", "first frame");
      },
      onClose: (reason) => {
        canvas.remove();
        if (closing) return;
        browser(`The stream ended${reason ? `: ${reason}` : " (the server refused or closed it)"}.`, workbenchUrl);
      },
    });
    teardown.push(() => {
      closing = true;
      client.close();
      canvas.remove();
    });
  } catch (err) {
    canvas.remove();
    browser(`The stream could not be opened: ${(err as Error).message}`, workbenchUrl);
  }
}

interface ToolResultMeta {
  "ccb/workbench"?: { url?: unknown };
  "ccb/stream"?: { url?: unknown; token?: unknown; error?: unknown; onDemand?: unknown };
}

function onToolResult(result: { isError?: boolean; _meta?: Record<string, unknown> }): void {
  if (shown) return;
  const meta = (result._meta ?? {}) as ToolResultMeta;
  const wb = meta["ccb/workbench"];
  const s = meta["ccb/stream"];
  if (typeof wb?.url !== "string") {
    const reason = result.isError
      ? "vscode_open failed: no workbench is running, so there is no editor to show."
      : "The tool result carries no workbench address (the host did not pass the result metadata to this App).";
    browser(reason, "");
    return;
  }
  shown = true;
  if (typeof s?.error === "string")
    browser(`Stream mode is on, but ${s.error.charAt(0).toLowerCase()}${s.error.slice(1)}`, wb.url);
  else if (typeof s?.url === "string" && typeof s.token === "string" && s.onDemand === true) {
    streamOffer = { url: s.url, token: s.token };
    embed(wb.url);
  } else if (typeof s?.url === "string" && typeof s.token === "string") stream({ url: s.url, token: s.token }, wb.url);
  else embed(wb.url);
}

/**
 * Size the App to the host's container (a fixed size, or a maximum); fullscreen, or no size from
 * the host, fills the frame the host gave (at least the CSS minimum height).
 */
function applySize(ctx: McpUiHostContext): void {
  const dims = ctx.containerDimensions as
    | { height?: number; maxHeight?: number; width?: number; maxWidth?: number }
    | undefined;
  const fixed = displayMode === "fullscreen" || dims === undefined ? undefined : dims;
  const height =
    fixed?.height ?? (fixed?.maxHeight !== undefined ? Math.min(fixed.maxHeight, PREFERRED_MAX_HEIGHT) : undefined);
  const width = fixed?.width ?? fixed?.maxWidth;
  box.style.height = height !== undefined ? `${Math.floor(height)}px` : "";
  box.style.minHeight = height !== undefined ? "0" : "";
  box.style.width = width !== undefined ? `${Math.floor(width)}px` : "";
}

function setDisplayMode(mode: McpUiDisplayMode): void {
  displayMode = mode;
  root.dataset.displayMode = mode;
  fullscreenButton.textContent = mode === "fullscreen" ? "Exit full screen" : "Full screen";
  applySize(app.getHostContext() ?? {});
}

/** Apply a (partial) host context: the SDK merges it into getHostContext() before calling back. */
function applyContext(ctx: McpUiHostContext): void {
  if (ctx.theme) {
    applyDocumentTheme(ctx.theme);
    root.dataset.theme = ctx.theme;
  }
  if (ctx.styles?.variables) applyHostStyleVariables(ctx.styles.variables);
  const modes = app.getHostContext()?.availableDisplayModes;
  bar.classList.toggle("hidden", !modes?.includes("fullscreen"));
  if (ctx.displayMode && ctx.displayMode !== displayMode) setDisplayMode(ctx.displayMode);
  else applySize(app.getHostContext() ?? ctx);
}

fullscreenButton.onclick = () => {
  const want: McpUiDisplayMode = displayMode === "fullscreen" ? "inline" : "fullscreen";
  app.requestDisplayMode({ mode: want }).then(
    (r) => setDisplayMode(r.mode),
    () => {},
  );
};

app.ontoolresult = (params) => onToolResult(params);
app.onhostcontextchanged = (params) => applyContext(params);
app.onteardown = () => {
  for (const t of teardown) t();
  teardown = [];
  card.classList.add("hidden");
  setState("closed", "teardown");
  return {};
};

app.connect().then(
  () => applyContext(app.getHostContext() ?? {}),
  (err: unknown) => browser(`The host did not complete the MCP Apps handshake: ${(err as Error).message}`, ""),
);
