import { request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { Logger } from "../core/log.ts";

/** Served under `/ide/<key>` (same origin as the workbench, so its CSP `script-src 'self'` allows it). */
export const ALIVE_SCRIPT_PATH = "/__ccb/alive.js";
/** The runtime's epoch (how many times it came up), beside the script: `{ "epoch": n }`. */
export const EPOCH_PATH = "/__ccb/epoch";
/** How often every workbench page asks for the epoch. */
export const EPOCH_POLL_MS = 2000;

/**
 * Injected into every workbench page. Two jobs, carrying nothing secret:
 * - framed by the MCP App: posts `{type:"ccb:workbench-alive"}` to `window.parent` once
 *   `.monaco-workbench` exists after load;
 * - every page: asks for the runtime's epoch every ${EPOCH_POLL_MS / 1000} s and reloads when it
 *   changed (the runtime restarted: the page's connection cannot resume on a new server, so VS Code
 *   would otherwise wait for a person to click Reload); when ccb itself is gone (twice no answer),
 *   it says so at once in a banner, with how to get a fresh link.
 */
export const ALIVE_SCRIPT = `(function () {
  var me = document.currentScript && document.currentScript.src;
  if (window.parent !== window) {
    var sent = false;
    var check = function () {
      if (sent || !document.querySelector(".monaco-workbench")) return false;
      sent = true;
      window.parent.postMessage({ type: "ccb:workbench-alive" }, "*");
      return true;
    };
    var watch = function () {
      if (check()) return;
      var mo = new MutationObserver(function () { if (check()) mo.disconnect(); });
      mo.observe(document.documentElement, { childList: true, subtree: true });
    };
    if (document.readyState === "complete") watch(); else window.addEventListener("load", watch);
  }
  if (!me) return;
  var url = me.slice(0, me.indexOf("${ALIVE_SCRIPT_PATH}")) + "${EPOCH_PATH}";
  var first = null, misses = 0, banner = null;
  function tell(gone) {
    if (!gone) { if (banner) { banner.remove(); banner = null; } return; }
    if (banner) return;
    banner = document.createElement("div");
    banner.id = "ccb-gone";
    banner.setAttribute("role", "alert");
    banner.style.cssText = "position:fixed;z-index:2147483647;left:0;right:0;top:0;padding:10px 14px;background:#a1260d;color:#fff;font:14px sans-serif";
    banner.textContent = "This ccb workbench has stopped: what you type here is no longer kept. Get a fresh link with \u0060ccb workbench link\u0060 (or from your agent's vscode_open).";
    document.documentElement.appendChild(banner);
  }
  function poll() {
    fetch(url, { cache: "no-store", credentials: "same-origin" }).then(function (r) {
      if (!r.ok) throw new Error(String(r.status));
      return r.json();
    }).then(function (j) {
      misses = 0; tell(false);
      if (first === null) first = j.epoch;
      else if (j.epoch !== first && j.epoch > 0) { location.reload(); return; }
      setTimeout(poll, ${EPOCH_POLL_MS});
    }, function () {
      if (++misses >= 2) tell(true);
      setTimeout(poll, ${EPOCH_POLL_MS});
    });
  }
  poll();
})();
`;

export function serveEpoch(res: ServerResponse, epoch: number): void {
  res
    .writeHead(200, {
      "content-type": "application/json",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    })
    .end(JSON.stringify({ epoch }));
}

export function serveAliveScript(res: ServerResponse): void {
  res
    .writeHead(200, {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    })
    .end(ALIVE_SCRIPT);
}

/** Insert the liveness script tag into an HTML document (before </head>, else at the start). */
export function injectAliveTag(html: string, scriptSrc: string): string {
  const tag = `<script src="${scriptSrc}"></script>`;
  const i = html.search(/<\/head>/i);
  return i >= 0 ? `${html.slice(0, i)}${tag}${html.slice(i)}` : `${tag}${html}`;
}

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "content-encoding",
  "upgrade",
]);

/**
 * Proxy the workbench's top-level page (a GET of `/ide/<key>/`) and add the liveness script.
 * Asks upstream for identity encoding so the body can be edited; Content-Length is recomputed.
 * Anything but a 200 text/html answer passes through unchanged (redirects, errors).
 */
export function proxyWorkbenchPage(
  req: IncomingMessage,
  res: ServerResponse,
  target: { socketPath: string; path: string },
  scriptSrc: string,
  log: Logger,
): void {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && k !== "accept-encoding") headers[k] = v;
  headers["accept-encoding"] = "identity";
  const remote = req.socket.remoteAddress;
  if (remote) headers["x-forwarded-for"] = remote;
  headers["x-forwarded-host"] = String(req.headers.host ?? "");
  headers["x-forwarded-proto"] = "encrypted" in req.socket && req.socket.encrypted ? "https" : "http";
  const up = httpRequest({ socketPath: target.socketPath, method: "GET", path: target.path, headers }, (upRes) => {
    const status = upRes.statusCode ?? 502;
    const type = String(upRes.headers["content-type"] ?? "");
    const encoding = String(upRes.headers["content-encoding"] ?? "identity");
    if (status !== 200 || !/^text\/html/i.test(type) || encoding !== "identity") {
      res.writeHead(status, upRes.headers);
      upRes.pipe(res);
      return;
    }
    const chunks: Buffer[] = [];
    upRes.on("data", (c: Buffer) => chunks.push(c));
    upRes.on("error", () => res.destroy());
    upRes.on("end", () => {
      const body = Buffer.from(injectAliveTag(Buffer.concat(chunks).toString("utf8"), scriptSrc), "utf8");
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(upRes.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
      out["content-length"] = String(body.length);
      res.writeHead(200, out).end(body);
    });
  });
  up.on("error", (err) => {
    log.debug(`workbench page proxy: ${err.message}`);
    if (!res.headersSent)
      res
        .writeHead(502, { "content-type": "text/plain; charset=utf-8" })
        .end("The workbench is not reachable right now (starting or restarting). Reload in a moment.");
    else res.destroy();
  });
  req.on("aborted", () => up.destroy());
  up.end();
}
