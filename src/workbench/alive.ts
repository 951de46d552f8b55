import { createHmac } from "node:crypto";
import { request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { Logger } from "../core/log.ts";

/** Served under `/ide/<key>` (same origin as the workbench, so its CSP `script-src 'self'` allows it). */
export const ALIVE_SCRIPT_PATH = "/__ccb/alive.js";
/** The runtime's epoch (how many times it came up), beside the script: `{ "epoch": n }`. */
export const EPOCH_PATH = "/__ccb/epoch";
/** How often every workbench page asks for the epoch. */
export const EPOCH_POLL_MS = 2000;

/** The nonce a page sends with each epoch question (hex, 128 bits or more). */
const NONCE = /^[0-9a-f]{32,128}$/;

/** What the gateway signs: only it holds the key, so only it can answer a page's nonce. */
function epochProof(key: Buffer, nonce: string, epoch: number): string {
  return createHmac("sha256", key).update(`ccb-epoch:${nonce}:${epoch}`).digest("hex");
}

/**
 * Injected into every workbench page (ALIVE_KEY replaced by the gateway's proof key, aliveScript). Two jobs:
 * - framed by the MCP App: posts `{type:"ccb:workbench-alive"}` to `window.parent` once
 *   `.monaco-workbench` exists after load;
 * - every page: asks for the runtime's epoch every ${EPOCH_POLL_MS / 1000} s with a fresh nonce and
 *   reloads when it changed (the runtime restarted: the page's connection cannot resume on a new
 *   server, so VS Code would otherwise wait for a person to click Reload); when ccb itself is gone
 *   (twice no proven answer), it says so at once in a banner, with how to get a fresh link.
 * An answer counts only with an HMAC of the nonce and epoch under the key this script carries (got
 * from the gateway over the cookie session): whoever binds the port after the gateway died cannot
 * forge one, so it can neither reload the tab onto its own page nor hide the banner. Without
 * WebCrypto (not a secure context) nothing is proven: the page never reloads by itself.
 */
const ALIVE_SCRIPT = `(function () {
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
  var subtle = window.crypto && window.crypto.subtle;
  var bytes = function (hex) {
    var a = new Uint8Array(hex.length / 2);
    for (var i = 0; i < a.length; i++) a[i] = parseInt(hex.substr(i * 2, 2), 16);
    return a;
  };
  var key = subtle ? subtle.importKey("raw", bytes("ALIVE_KEY"), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]) : null;
  function nonce() {
    var b = new Uint8Array(16);
    window.crypto.getRandomValues(b);
    return Array.prototype.map.call(b, function (x) { return (x + 256).toString(16).slice(1); }).join("");
  }
  function proven(n, j) {
    if (!key || !j || typeof j.epoch !== "number" || typeof j.proof !== "string" || !/^[0-9a-f]{64}$/.test(j.proof)) return Promise.resolve(false);
    return key.then(function (k) {
      return subtle.verify("HMAC", k, bytes(j.proof), new TextEncoder().encode("ccb-epoch:" + n + ":" + j.epoch));
    });
  }
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
    var n = nonce();
    fetch(url + "?n=" + n, { cache: "no-store", credentials: "same-origin", redirect: "error" }).then(function (r) {
      if (!r.ok) throw new Error(String(r.status));
      return r.json();
    }).then(function (j) {
      return proven(n, j).then(function (ok) { if (!ok) throw new Error("unproven"); return j; });
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

/** The liveness script for a gateway whose proof key is `key`. */
export function aliveScript(key: Buffer): string {
  return ALIVE_SCRIPT.replace("ALIVE_KEY", key.toString("hex"));
}

/** `{ epoch, proof }`: the proof is the HMAC of the page's nonce (`?n=`) and the epoch under `key` (no nonce, no proof). */
export function serveEpoch(res: ServerResponse, url: URL, epoch: number, key: Buffer): void {
  const nonce = url.searchParams.get("n");
  if (nonce !== null && !NONCE.test(nonce)) {
    res.writeHead(400, { "content-type": "text/plain; charset=utf-8" }).end("?n= must be a hex nonce.\n");
    return;
  }
  res
    .writeHead(200, {
      "content-type": "application/json",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    })
    .end(JSON.stringify(nonce === null ? { epoch } : { epoch, proof: epochProof(key, nonce, epoch) }));
}

export function serveAliveScript(res: ServerResponse, key: Buffer): void {
  res
    .writeHead(200, {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    })
    .end(aliveScript(key));
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
  editHeaders: (headers: IncomingMessage["headers"]) => void = () => undefined,
): void {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && k !== "accept-encoding") headers[k] = v;
  headers["accept-encoding"] = "identity";
  const remote = req.socket.remoteAddress;
  if (remote) headers["x-forwarded-for"] = remote;
  headers["x-forwarded-host"] = String(req.headers.host ?? "");
  headers["x-forwarded-proto"] = "encrypted" in req.socket && req.socket.encrypted ? "https" : "http";
  const up = httpRequest({ socketPath: target.socketPath, method: "GET", path: target.path, headers }, (upRes) => {
    editHeaders(upRes.headers);
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
