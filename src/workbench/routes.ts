import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import httpProxy from "http-proxy";
import type { Logger } from "../core/log.ts";
import { MAX_FRAME_BYTES } from "../editor-wire/contract.ts";
import { type BrowserSession, FRAME_HEADERS } from "../net/browser-session.ts";
import { capabilityPrefix, type Gateway } from "../net/gateway.ts";
import { isLoopbackHost } from "../net/loopback.ts";
import type { EdgePolicy } from "../net/policy.ts";
import { refuseUpgrade } from "../net/respond.ts";
import { ALIVE_SCRIPT_PATH, EPOCH_PATH, proxyWorkbenchPage, serveAliveScript, serveEpoch } from "./alive.ts";

/**
 * `/bridge` (loopback gateway only): the extension host is not a browser, so any Origin is refused;
 * its token travels in the first frame (`hello`, checked in constant time within 5 s, else 4401/4408).
 */
export const BRIDGE_POLICY: EdgePolicy = {
  name: "bridge",
  origin: { kind: "none" },
  auth: [],
  inBand: "the bridge token in the first frame (hello)",
  maxFrameBytes: MAX_FRAME_BYTES,
};

/** A gateway (src/net) the workbench mounts its routes on, and the base URL browsers reach it at. */
export interface WorkbenchHttp {
  gateway: Gateway;
  /** Browser-facing base URL, e.g. http://127.0.0.1:43123 or the --public-url origin (no trailing slash). */
  url: string;
}

export interface ProxyTarget {
  /** The runtime's Unix socket while it runs (undefined otherwise). */
  socketPath(): string | undefined;
  /**
   * Tell the runtime the browser-facing prefix on every request (`X-Forwarded-Prefix`: OpenVSCode
   * writes absolute URLs into its pages). `/ide/<key>` is always stripped before forwarding: no
   * runtime is given the secret prefix (it would sit on its command line, readable by every account).
   */
  announcePrefix?: boolean | undefined;
  /** How many times the runtime came up (pages reload when it changes); default 0. */
  epoch?(): number;
  /** This gateway's key for proving epoch answers to its pages (src/workbench/alive.ts). */
  proofKey: Buffer;
}

/** Where the workbench's own pages live below its prefix (the cookie's only path). */
export const APP_PAGE = "/__ccb/app";
export const SESSION_PAGE = "/__ccb/session.json";

/**
 * Keep `frame-ancestors 'self'` on an answer whose credential is the cookie (not under a frame
 * capability) when the runtime sends a CSP of its own: both policies then hold.
 */
function keepFrameAncestors(req: IncomingMessage, headers: IncomingMessage["headers"]): void {
  if (capabilityPrefix(req)) return;
  const own = headers["content-security-policy"];
  const fa = FRAME_HEADERS["content-security-policy"] as string;
  headers["content-security-policy"] = (own ? [own, fa].flat().join(", ") : fa) as string;
  headers["x-frame-options"] ??= FRAME_HEADERS["x-frame-options"];
}

/** The workbench pages and sockets: same-origin browsers holding the workbench cookie only. */
export function workbenchPolicy(session: BrowserSession): EdgePolicy {
  return { name: "workbench", origin: { kind: "same" }, auth: [], session, style: "text" };
}

/**
 * `/ide/<key>/...` proxied to the runtime's Unix socket, HTTP and WebSocket, with http-proxy
 * (request bodies stream through untouched). The gateway lets through only requests carrying the
 * browser session's cookie (obtained from a one-time link), from the gateway's own origin.
 */
export function mountWorkbenchProxy(
  http: WorkbenchHttp,
  basePath: string,
  target: ProxyTarget,
  session: BrowserSession,
  log: Logger,
  /** Which clients get the runtime's files uncompressed (plainFor; default every loopback client). */
  plain: PlainFor = "loopback",
  /** Told when a page's WebSocket to the runtime closed (its tab closed, reloaded or lost its browser). */
  onPageSocketClosed?: () => void,
): () => void {
  // toProxy keeps req.url as the outgoing path: otherwise http-proxy runs the deprecated url.parse
  // (DEP0169) on every request path.
  const proxy = httpProxy.createProxyServer({
    ws: true,
    xfwd: true,
    changeOrigin: false,
    proxyTimeout: 0,
    toProxy: true,
  });
  proxy.on("proxyRes", (proxyRes, req) => keepFrameAncestors(req, proxyRes.headers));
  proxy.on("error", (err, _req, resOrSocket) => {
    log.debug(`workbench proxy: ${err.message}`);
    if (resOrSocket && "writeHead" in resOrSocket) {
      const res = resOrSocket as ServerResponse;
      if (!res.headersSent) {
        res.writeHead(502, { "content-type": "text/plain; charset=utf-8" });
        res.end("The workbench is not reachable right now (starting or restarting). Reload in a moment.");
      } else res.end();
    } else (resOrSocket as Duplex | undefined)?.destroy();
  });
  const forward = (path: string): string => {
    const u = new URL(path, "http://x");
    return `${u.pathname.slice(basePath.length) || "/"}${u.search}`;
  };
  const policy = workbenchPolicy(session);
  http.gateway.addRoute(
    "*",
    basePath,
    (req, res, url) => {
      // Under a frame capability (`/s/<capability>`, stripped by the gateway) absolute paths keep it.
      const under = capabilityPrefix(req);
      if (url.pathname === basePath) {
        res.writeHead(302, { location: `${under}${basePath}/${url.search}` }).end();
        return;
      }
      if (url.pathname === `${basePath}${ALIVE_SCRIPT_PATH}`) return serveAliveScript(res, target.proofKey);
      if (url.pathname === `${basePath}${EPOCH_PATH}`)
        return serveEpoch(res, url, target.epoch?.() ?? 0, target.proofKey);
      const socketPath = target.socketPath();
      if (!socketPath) {
        res.writeHead(503, { "content-type": "text/plain", "retry-after": "2" }).end("The workbench is starting.");
        return;
      }
      req.url = forward(req.url ?? "/");
      announcePrefix(req, target, basePath);
      plainFor(req, plain);
      // The top-level workbench page gets the MCP App's liveness script (src/workbench/alive.ts).
      if (req.method === "GET" && url.pathname === `${basePath}/`) {
        return proxyWorkbenchPage(
          req,
          res,
          { socketPath, path: req.url },
          `${under}${basePath}${ALIVE_SCRIPT_PATH}`,
          log,
          (headers) => keepFrameAncestors(req, headers),
        );
      }
      proxy.web(req, res, { target: { socketPath } as unknown as string });
    },
    policy,
  );
  http.gateway.addUpgrade(
    basePath,
    (req, socket, head) => {
      const socketPath = target.socketPath();
      if (!socketPath) return refuseUpgrade(socket, 503, "The workbench is starting.");
      req.url = forward(req.url ?? "/");
      announcePrefix(req, target, basePath);
      if (onPageSocketClosed) socket.once("close", onPageSocketClosed);
      proxy.ws(req, socket, head, { target: { socketPath } as unknown as string });
    },
    policy,
  );
  return () => proxy.close();
}

/** Who gets uncompressed files: nobody, ccb's headless client (loopback and HeadlessChrome), every loopback client. */
export type PlainFor = "none" | "headless" | "loopback";

/**
 * A client on this machine gets the runtime's files uncompressed: code-server compresses every
 * response with Brotli as it sends it (its 19 MB workbench.js costs 2-3 s of CPU per page load, on
 * the critical path of a cold start), for bytes that never leave the machine. `headless`: only
 * ccb's own headless client (a loopback connection whose User-Agent is HeadlessChrome's), since a
 * person on an SSH tunnel also arrives from loopback and keeps what their browser accepts. A
 * browser that claims to be headless only gets bigger answers.
 */
function plainFor(req: IncomingMessage, who: PlainFor): void {
  if (who === "none") return;
  const remote = (req.socket.remoteAddress ?? "").replace(/^::ffff:/, "");
  if (!remote || !isLoopbackHost(remote)) return;
  if (who === "headless" && !/\bHeadlessChrome\//.test(String(req.headers["user-agent"] ?? ""))) return;
  req.headers["accept-encoding"] = "identity";
}

/**
 * A runtime that writes absolute URLs into its pages (OpenVSCode) runs at "/" on its socket and is
 * told the browser-facing prefix of each request (`X-Forwarded-Prefix`, which VS Code's server
 * honours for the page's URLs and its `serverBasePath`): `/ide/<key>`, under a frame capability
 * `/s/<capability>/ide/<key>`. The prefix travels over the runtime's 0600 Unix socket only, never on
 * a command line. A client's own X-Forwarded-Prefix never reaches the runtime. code-server answers
 * with relative URLs.
 */
function announcePrefix(req: IncomingMessage, target: ProxyTarget, basePath: string): void {
  delete req.headers["x-forwarded-prefix"];
  if (target.announcePrefix) req.headers["x-forwarded-prefix"] = `${capabilityPrefix(req)}${basePath}`;
}

export interface SessionInfo {
  runtime: string;
  state: string;
  /** Workbench page path on this server (needs the workbench cookie to open). */
  workbenchPath: string;
  bridge: { connected: boolean; reason: string; hosts: number };
}

/**
 * `/session.json` and the App page (a page framing the workbench): for browsers below the cookie's
 * prefix (`<basePath>/__ccb/session.json`, `<basePath>/__ccb/app`), the only place the cookie goes.
 * The fixed `/app` and `/session.json` stay as entries: a one-time link there (`/app?ccb_ott=...`)
 * lands on the page below the prefix; `/session.json` answers programs holding the bearer token
 * (when one is set); a browser's cookie is never sent to either.
 */
export function mountSessionRoutes(
  http: WorkbenchHttp,
  basePath: string,
  session: BrowserSession,
  authToken: string | undefined,
  info: () => SessionInfo,
): void {
  const policy: EdgePolicy = {
    name: "session",
    origin: { kind: "same" },
    auth: [{ places: [{ in: "bearer" }], expected: () => authToken }],
    session,
    refuseQueryKeys: ["token"],
  };
  const sessionJson = (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" }).end(JSON.stringify(info()));
  };
  const appPage = (req: IncomingMessage, res: ServerResponse) => {
    const src = JSON.stringify(`${capabilityPrefix(req)}${info().workbenchPath}`).replace(/</g, "\\u003c");
    const html = `<!doctype html><html><head><meta charset="utf-8"><title>ccb workbench</title>
<meta name="referrer" content="no-referrer">
<style>html,body{margin:0;height:100%;overflow:hidden;background:#1e1e1e;color:#ccc;font:14px sans-serif}iframe{display:block;border:0;width:100%;height:100%}</style></head>
<body><iframe id="wb" title="workbench" allow="clipboard-read; clipboard-write"></iframe>
<script>document.getElementById("wb").src = ${src};</script></body></html>`;
    // Under a frame capability (an MCP host's frame) any ancestor may frame it; with the cookie only this origin.
    const ancestors = capabilityPrefix(req) ? "" : "; frame-ancestors 'self'";
    res
      .writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "content-security-policy": `default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; frame-src 'self'${ancestors}`,
      })
      .end(html);
  };
  http.gateway.addRoute("GET", "/session.json", sessionJson, policy);
  http.gateway.addRoute("GET", "/app", appPage, policy);
  const own: EdgePolicy = { ...policy, name: "session-page" };
  http.gateway.addRoute("GET", `${basePath}${SESSION_PAGE}`, sessionJson, own);
  http.gateway.addRoute("GET", `${basePath}${APP_PAGE}`, appPage, own);
}
