import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import httpProxy from "http-proxy";
import type { Logger } from "../core/log.ts";
import { ALIVE_SCRIPT_PATH, proxyWorkbenchPage, serveAliveScript } from "./alive.ts";

/** The parts of ccb's HTTP server the workbench mounts routes on (src/protocols/mcp Gateway). */
export interface WorkbenchHttp {
  /** Base URL of the server, e.g. http://127.0.0.1:43123. */
  url: string;
  addRoute(method: string, pathPrefix: string, handler: (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>, options?: { checkHost?: boolean }): void;
  addUpgrade(pathPrefix: string, handler: (req: IncomingMessage, socket: Duplex, head: Buffer, url: URL) => void | Promise<void>, options?: { checkHost?: boolean }): void;
}

export interface ProxyTarget {
  /** The runtime's loopback port (0 while it is not running). */
  port(): number;
  /** Strip `/ide/<key>` before forwarding (code-server) or keep it (OpenVSCode --server-base-path). */
  stripPrefix: boolean;
}

/** A browser Origin is acceptable when it is this server itself (the Host was already checked). */
export function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true; // not a browser cross-site request
  try {
    const u = new URL(origin);
    return (u.protocol === "http:" || u.protocol === "https:") && u.host.toLowerCase() === String(req.headers.host ?? "").toLowerCase();
  } catch {
    return false;
  }
}

export function secretMatches(given: string | null | undefined, expected: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given, "utf8");
  const b = Buffer.from(expected, "utf8");
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * `/ide/<key>/...` proxied to the loopback workbench, HTTP and WebSocket, with http-proxy (request
 * bodies stream through untouched). Host is checked by the server; cross-site Origins are refused.
 */
export function mountWorkbenchProxy(http: WorkbenchHttp, basePath: string, target: ProxyTarget, log: Logger): () => void {
  const proxy = httpProxy.createProxyServer({ ws: true, xfwd: true, changeOrigin: false, proxyTimeout: 0 });
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
  const rewrite = (req: IncomingMessage, url: URL): void => {
    if (!target.stripPrefix) return;
    const rest = url.pathname.slice(basePath.length) || "/";
    req.url = `${rest}${url.search}`;
  };
  http.addRoute("*", basePath, (req, res, url) => {
    if (!sameOrigin(req)) {
      res.writeHead(403, { "content-type": "text/plain" }).end("Cross-site request refused.");
      return;
    }
    if (url.pathname === basePath) {
      res.writeHead(302, { location: `${basePath}/${url.search}` }).end();
      return;
    }
    if (url.pathname === `${basePath}${ALIVE_SCRIPT_PATH}`) return serveAliveScript(res);
    const port = target.port();
    if (!port) {
      res.writeHead(503, { "content-type": "text/plain", "retry-after": "2" }).end("The workbench is starting.");
      return;
    }
    rewrite(req, url);
    // The top-level workbench page gets the MCP App's liveness script (src/workbench/alive.ts).
    if (req.method === "GET" && url.pathname === `${basePath}/`) {
      return proxyWorkbenchPage(req, res, { port, path: req.url ?? "/" }, `${basePath}${ALIVE_SCRIPT_PATH}`, log);
    }
    proxy.web(req, res, { target: `http://127.0.0.1:${port}` });
  });
  http.addUpgrade(basePath, (req, socket, head, url) => {
    const port = target.port();
    if (!sameOrigin(req) || !port) {
      socket.end(`HTTP/1.1 ${port ? "403 Forbidden" : "503 Service Unavailable"}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    rewrite(req, url);
    proxy.ws(req, socket, head, { target: `http://127.0.0.1:${port}` });
  });
  return () => proxy.close();
}

export interface SessionInfo {
  runtime: string;
  state: string;
  /** Workbench page path on this server (secret). */
  workbenchPath: string;
  bridge: { connected: boolean; reason: string; hosts: number };
}

/** `/session.json` and `/app` (the MCP App document's debug page), token-gated when a token is set. */
export function mountSessionRoutes(http: WorkbenchHttp, authToken: string | undefined, session: () => SessionInfo): void {
  const allowed = (url: URL, res: ServerResponse): boolean => {
    if (!authToken || secretMatches(url.searchParams.get("token"), authToken)) return true;
    res.writeHead(401, { "content-type": "application/json", "cache-control": "no-store" }).end(JSON.stringify({ error: "A valid ?token= is required." }));
    return false;
  };
  http.addRoute("GET", "/session.json", (_req, res, url) => {
    if (!allowed(url, res)) return;
    const body = JSON.stringify(session());
    res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" }).end(body);
  });
  http.addRoute("GET", "/app", (_req, res, url) => {
    if (!allowed(url, res)) return;
    const s = session();
    const src = JSON.stringify(s.workbenchPath).replace(/</g, "\\u003c");
    const html = `<!doctype html><html><head><meta charset="utf-8"><title>ccb workbench</title>
<meta name="referrer" content="no-referrer">
<style>html,body{margin:0;height:100%;overflow:hidden;background:#1e1e1e;color:#ccc;font:14px sans-serif}iframe{display:block;border:0;width:100%;height:100%}</style></head>
<body><iframe id="wb" title="workbench" allow="clipboard-read; clipboard-write"></iframe>
<script>document.getElementById("wb").src = ${src};</script></body></html>`;
    res
      .writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "content-security-policy": "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; frame-src 'self'",
      })
      .end(html);
  });
}
