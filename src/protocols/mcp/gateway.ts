import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "../../core/log.ts";
import { HostAllowList, hostForUrl, sendJson } from "./guards.ts";

export type RouteHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>;
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer, url: URL) => void | Promise<void>;

export interface RouteOptions {
  /**
   * Refuse requests whose Host header is not this server (DNS-rebinding protection). Default true;
   * turn it off only for routes that carry their own unguessable credential and are reached
   * through a proxy under another name.
   */
  checkHost?: boolean;
}

export interface GatewayOptions {
  host: string;
  port: number;
  tls?: { cert: string | Buffer; key: string | Buffer } | undefined;
  log: Logger;
}

interface Route {
  method: string;
  prefix: string;
  handler: RouteHandler;
  checkHost: boolean;
}

interface Upgrade {
  prefix: string;
  handler: UpgradeHandler;
  checkHost: boolean;
}

/**
 * The one node:http(s) server of a ccb process. Front ends mount routes on it by path prefix:
 * `/mcp` and `/healthz` here; the workbench mounts `/ide/<key>/...`, `/bridge`, `/session.json`,
 * `/app`. The longest matching prefix wins; a prefix matches itself and anything below `prefix/`.
 */
export class Gateway {
  readonly server: HttpServer;
  readonly hosts: HostAllowList;
  readonly scheme: "http" | "https";
  readonly #routes: Route[] = [];
  readonly #upgrades: Upgrade[] = [];
  readonly #options: GatewayOptions;
  #url = "";

  constructor(options: GatewayOptions) {
    this.#options = options;
    this.scheme = options.tls ? "https" : "http";
    this.hosts = new HostAllowList(options.host, Boolean(options.tls));
    const listener = (req: IncomingMessage, res: ServerResponse) => void this.#dispatch(req, res);
    this.server = options.tls
      ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, listener)
      : createHttpServer(listener);
    this.server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.#upgrade(req, socket, head));
    this.server.on("clientError", (_err, socket) => {
      if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
      else socket.destroy();
    });
  }

  /** The base URL, e.g. http://127.0.0.1:43123 (no trailing slash); set by listen(). */
  get url(): string {
    return this.#url;
  }

  addRoute(method: string, pathPrefix: string, handler: RouteHandler, options: RouteOptions = {}): void {
    this.#routes.push({ method: method.toUpperCase(), prefix: normalisePrefix(pathPrefix), handler, checkHost: options.checkHost ?? true });
  }

  addUpgrade(pathPrefix: string, handler: UpgradeHandler, options: RouteOptions = {}): void {
    this.#upgrades.push({ prefix: normalisePrefix(pathPrefix), handler, checkHost: options.checkHost ?? true });
  }

  /** Accept another Host header value (`host` or `host:port`), e.g. the host of a public URL. */
  allowHost(hostOrAuthority: string): void {
    this.hosts.allow(hostOrAuthority);
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      this.server.once("error", onError);
      this.server.listen(this.#options.port, this.#options.host, () => {
        this.server.off("error", onError);
        resolve();
      });
    });
    const port = (this.server.address() as AddressInfo).port;
    this.hosts.setPort(port);
    const shownHost = this.#options.host === "0.0.0.0" || this.#options.host === "::" ? "127.0.0.1" : this.#options.host;
    this.#url = `${this.scheme}://${hostForUrl(shownHost)}:${port}`;
    return this.#url;
  }

  async close(): Promise<void> {
    if (!this.server.listening) return;
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  async #dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://gateway.invalid");
    } catch {
      sendJson(res, 400, { error: "Bad request URL." });
      return;
    }
    const candidates = this.#routes.filter((r) => matches(url.pathname, r.prefix));
    if (candidates.length === 0) {
      if (!this.hosts.check(req.headers.host)) return hostRefused(res);
      sendJson(res, 404, { error: `Not found: ${url.pathname.slice(0, 200)}` });
      return;
    }
    const longest = Math.max(...candidates.map((r) => r.prefix.length));
    const atPrefix = candidates.filter((r) => r.prefix.length === longest);
    const route = atPrefix.find((r) => r.method === req.method || r.method === "*");
    const checkHost = route ? route.checkHost : true;
    if (checkHost && !this.hosts.check(req.headers.host)) return hostRefused(res);
    if (!route) {
      const allow = [...new Set(atPrefix.map((r) => r.method))].join(", ");
      sendJson(res, 405, { error: `Method ${req.method} not allowed here.` }, { allow });
      return;
    }
    try {
      await route.handler(req, res, url);
    } catch (err) {
      this.#options.log.error(`route ${route.prefix} failed: ${err instanceof Error ? err.message : String(err)}`);
      if (!res.headersSent) sendJson(res, 500, { error: "Internal server error." });
      else res.end();
    }
  }

  async #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on("error", () => socket.destroy());
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://gateway.invalid");
    } catch {
      return rejectUpgrade(socket, 400, "Bad Request");
    }
    const found = this.#upgrades
      .filter((u) => matches(url.pathname, u.prefix))
      .sort((a, b) => b.prefix.length - a.prefix.length)[0];
    if ((!found || found.checkHost) && !this.hosts.check(req.headers.host)) return rejectUpgrade(socket, 403, "Forbidden");
    if (!found) return rejectUpgrade(socket, 404, "Not Found");
    try {
      await found.handler(req, socket, head, url);
    } catch (err) {
      this.#options.log.error(`upgrade ${found.prefix} failed: ${err instanceof Error ? err.message : String(err)}`);
      socket.destroy();
    }
  }
}

function normalisePrefix(p: string): string {
  const withSlash = p.startsWith("/") ? p : `/${p}`;
  return withSlash.length > 1 && withSlash.endsWith("/") ? withSlash.slice(0, -1) : withSlash;
}

function matches(pathname: string, prefix: string): boolean {
  if (prefix === "/") return true;
  return pathname === prefix || pathname.startsWith(`${prefix}/`);
}

function hostRefused(res: ServerResponse): void {
  sendJson(res, 403, {
    jsonrpc: "2.0",
    id: null,
    error: { code: -32000, message: "Forbidden: this Host header is not allowed (DNS-rebinding protection). Connect to the address ccb printed." },
  });
}

function rejectUpgrade(socket: Duplex, status: number, text: string): void {
  if (socket.writable) socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  else socket.destroy();
}
