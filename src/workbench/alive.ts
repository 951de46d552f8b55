import { createHmac } from "node:crypto";
import { request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { Logger } from "../core/log.ts";
import { pageScript } from "../platform/page-scripts.ts";

/** Served under `/ide/<key>` (same origin as the workbench, so its CSP `script-src 'self'` allows it). */
export const ALIVE_SCRIPT_PATH = "/__ccb/alive.js";
/** The runtime's epoch (how many times it came up), beside the script: `{ "epoch": n }`. */
export const EPOCH_PATH = "/__ccb/epoch";

/** The nonce a page sends with each epoch question (hex, 128 bits or more). */
const NONCE = /^[0-9a-f]{32,128}$/;

/** What the gateway signs: only it holds the key, so only it can answer a page's nonce. */
function epochProof(key: Buffer, nonce: string, epoch: number): string {
  return createHmac("sha256", key).update(`ccb-epoch:${nonce}:${epoch}`).digest("hex");
}

/**
 * The liveness script every workbench page gets (alive-page.ts, bundled at build) for a gateway whose
 * proof key is `key`: it proves the epoch answers of this gateway only.
 */
export function aliveScript(key: Buffer): string {
  return pageScript("workbench-alive").replace("ALIVE_KEY", key.toString("hex"));
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
