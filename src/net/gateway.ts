import {
  createServer as createHttpServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { Duplex } from "node:stream";
import type { Logger } from "../core/log.ts";
import { errorResponse, ServerErrorCode } from "../util/jsonrpc.ts";
import { CAPABILITY_SEGMENT, FRAME_HEADERS, ONE_TIME_QUERY } from "./browser-session.ts";
import { HostAllowList } from "./hosts.ts";
import { hostForUrl, isWildcardHost } from "./loopback.ts";
import { attachIdentity } from "./oauth/guard.ts";
import { checkEdge, type EdgePolicy, type EdgeVerdict } from "./policy.ts";
import { refuseUpgrade, sendJson } from "./respond.ts";

export type RouteHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>;
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer, url: URL) => void | Promise<void>;

/** The routes a gateway serves and their policies (what the generated edge test matrix reads). */
export interface RouteDescription {
  kind: "http" | "upgrade";
  method: string;
  prefix: string;
  policy: EdgePolicy;
}

export interface GatewayOptions {
  host: string;
  /** 0 = any free port; a function picks candidates (retried on EADDRINUSE). */
  port: number | (() => number);
  tls?: { cert: string | Buffer; key: string | Buffer } | undefined;
  log: Logger;
  /** The policy of paths with no route (default: Host checked, then 404). */
  fallback?: { status: number; text: string; policy: EdgePolicy };
  /** The scheme browsers use to reach this listener when it differs (TLS terminated by a proxy). */
  publicScheme?: "http" | "https";
}

interface Route {
  method: string;
  prefix: string;
  handler: RouteHandler;
  policy: EdgePolicy;
}

interface Upgrade {
  prefix: string;
  handler: UpgradeHandler;
  policy: EdgePolicy;
}

const OPEN: EdgePolicy = { name: "unrouted", origin: { kind: "same" }, auth: [] };

const CAPABILITY_PATH = new RegExp(`^/${CAPABILITY_SEGMENT}/([^/]*)(?=/|$)`);

/** The `/s/<capability>` a request came in under (stripped by the gateway), or "" (src/net/browser-session.ts). */
const mountedUnder = new WeakMap<IncomingMessage, string>();

/**
 * The path prefix the browser addressed this request under and that the gateway stripped
 * (`/s/<capability>` of a frame session), or "". A handler that writes absolute paths into a page or
 * a redirect puts it in front, so the frame keeps its way in. Secret: never log it.
 */
export function capabilityPrefix(req: IncomingMessage): string {
  return mountedUnder.get(req) ?? "";
}

/** A path fit for a log line: a frame capability in it is replaced. */
export function redactPath(pathname: string): string {
  return pathname.replace(CAPABILITY_PATH, `/${CAPABILITY_SEGMENT}/<capability>`);
}

/**
 * The one HTTP(S) listener type of ccb: every server (serve --http, the workbench gateway, the IDE
 * socket, ccb link, ccb stream) is a Gateway whose routes declare an EdgePolicy. The policy's checks
 * (src/net/policy.ts) run here for every request and BEFORE every WebSocket upgrade; handlers only
 * see requests that passed. The longest matching prefix wins; a prefix matches itself and anything
 * below `prefix/`.
 */
export class Gateway {
  readonly server: HttpServer;
  readonly hosts: HostAllowList;
  readonly scheme: "http" | "https";
  readonly #routes: Route[] = [];
  readonly #upgrades: Upgrade[] = [];
  readonly #options: GatewayOptions;
  readonly #ownOrigins: string[] = [];
  #url = "";
  /** Told about every refused upgrade (logs, counters). */
  onRefusedUpgrade: ((req: IncomingMessage, reason: string) => void) | undefined;

  constructor(options: GatewayOptions) {
    this.#options = options;
    this.scheme = options.tls ? "https" : "http";
    this.hosts = new HostAllowList(options.host, Boolean(options.tls));
    const listener = (req: IncomingMessage, res: ServerResponse) => void this.#dispatch(req, res);
    this.server = options.tls
      ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, listener)
      : createHttpServer(listener);
    this.server.on(
      "upgrade",
      (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.#upgrade(req, socket, head),
    );
    this.server.on("clientError", (_err, socket) => {
      if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
      else socket.destroy();
    });
  }

  /** The base URL, e.g. http://127.0.0.1:43123 (no trailing slash); set by listen(). */
  get url(): string {
    return this.#url;
  }

  get port(): number {
    const a = this.server.address();
    return typeof a === "object" && a ? a.port : 0;
  }

  addRoute(method: string, pathPrefix: string, handler: RouteHandler, policy: EdgePolicy): void {
    this.#routes.push({ method: method.toUpperCase(), prefix: normalisePrefix(pathPrefix), handler, policy });
  }

  addUpgrade(pathPrefix: string, handler: UpgradeHandler, policy: EdgePolicy): void {
    this.#upgrades.push({ prefix: normalisePrefix(pathPrefix), handler, policy });
  }

  /** Accept another Host header value (`host` or `host:port`), e.g. the host of a public URL. */
  allowHost(hostOrAuthority: string): void {
    this.hosts.allow(hostOrAuthority);
  }

  /** Accept another origin as this listener's own (e.g. the public URL's origin). */
  allowOwnOrigin(origin: string): void {
    this.#ownOrigins.push(new URL(origin).origin);
  }

  routes(): RouteDescription[] {
    return [
      ...this.#routes.map((r) => ({ kind: "http" as const, method: r.method, prefix: r.prefix, policy: r.policy })),
      ...this.#upgrades.map((u) => ({ kind: "upgrade" as const, method: "GET", prefix: u.prefix, policy: u.policy })),
    ];
  }

  async listen(): Promise<string> {
    const pick = this.#options.port;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.#listenOnce(typeof pick === "function" ? pick() : pick);
        break;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (typeof pick !== "function" || attempt >= 24 || (code !== "EADDRINUSE" && code !== "EACCES")) throw err;
      }
    }
    const port = this.port;
    this.hosts.setPort(port);
    const shownHost = isWildcardHost(this.#options.host) ? "127.0.0.1" : this.#options.host;
    this.#url = `${this.scheme}://${hostForUrl(shownHost)}:${port}`;
    return this.#url;
  }

  #listenOnce(port: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      this.server.once("error", onError);
      this.server.listen(port, this.#options.host, () => {
        this.server.off("error", onError);
        resolve();
      });
    });
  }

  async close(): Promise<void> {
    if (!this.server.listening) return;
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  async #check(req: IncomingMessage, url: URL, policy: EdgePolicy, authenticated = false): Promise<EdgeVerdict> {
    const verdict = await checkEdge(req, url, policy, {
      hosts: this.hosts,
      scheme: this.#options.publicScheme ?? this.scheme,
      ownOrigins: this.#ownOrigins,
      authenticated,
    });
    // The handler (and the MCP SDK's transports, as `req.auth`) see who an access token belongs to.
    if (verdict.ok && verdict.identity && policy.oauth) attachIdentity(req, verdict.identity, policy.oauth);
    return verdict;
  }

  /**
   * A path under `/s/<capability>`: valid only when the route of the rest of the path has a browser
   * session that minted this capability; then the prefix is stripped (req.url, and `url` returned)
   * and remembered for capabilityPrefix(). `undefined` = no capability in the path; `false` = refused.
   */
  #capability(
    req: IncomingMessage,
    url: URL,
    policyOf: (pathname: string) => EdgePolicy | undefined,
  ): URL | false | undefined {
    const m = CAPABILITY_PATH.exec(url.pathname);
    // A refused Host is refused as such (DNS rebinding) by the usual checks, capability or not.
    if (!m || !this.hosts.check(single(req.headers.host))) return undefined;
    const prefix = m[0];
    const rest = url.pathname.slice(prefix.length) || "/";
    const session = policyOf(rest)?.session;
    if (!session?.frameAllowed(m[1] as string)) return false;
    // What is routed is what is forwarded: the normalised path below the prefix.
    req.url = `${rest}${url.search}`;
    mountedUnder.set(req, prefix);
    return new URL(`${rest}${url.search}`, "http://gateway.invalid");
  }

  /** The routes of the longest prefix that matches `pathname` (one per method), or none. */
  #routesAt(pathname: string): Route[] {
    const candidates = this.#routes.filter((r) => matches(pathname, r.prefix));
    if (candidates.length === 0) return [];
    const longest = Math.max(...candidates.map((r) => r.prefix.length));
    return candidates.filter((r) => r.prefix.length === longest);
  }

  /** The upgrade of the longest prefix that matches `pathname`. */
  #upgradeAt(pathname: string): Upgrade | undefined {
    return this.#upgrades
      .filter((u) => matches(pathname, u.prefix))
      .sort((a, b) => b.prefix.length - a.prefix.length)[0];
  }

  async #dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://gateway.invalid");
    } catch {
      sendJson(res, 400, { error: "Bad request URL." });
      return;
    }
    const stripped = this.#capability(req, url, (p) => this.#routesAt(p)[0]?.policy);
    if (stripped === false) return refuseCapability(res);
    const authenticated = stripped !== undefined;
    if (stripped) {
      url = stripped;
      res.setHeader("referrer-policy", "no-referrer");
    }
    const atPrefix = this.#routesAt(url.pathname);
    if (atPrefix.length === 0) {
      const fb = this.#options.fallback;
      const verdict = await this.#check(req, url, fb?.policy ?? OPEN);
      if (!verdict.ok) return writeRefusal(res, verdict, fb?.policy ?? OPEN);
      if (fb) res.writeHead(fb.status, { "content-type": "text/plain; charset=utf-8" }).end(`${fb.text}\n`);
      else sendJson(res, 404, { error: `Not found: ${url.pathname.slice(0, 200)}` });
      return;
    }
    const route = atPrefix.find((r) => r.method === req.method || r.method === "*");
    const policy = route?.policy ?? (atPrefix[0] as Route).policy;
    if (!authenticated && policy.session && req.method === "GET" && url.searchParams.has(ONE_TIME_QUERY)) {
      // The one-time link is the credential here; the Host is still checked first.
      const verdict = this.hosts.check(single(req.headers.host)) ? undefined : await this.#check(req, url, policy);
      if (verdict && !verdict.ok) return writeRefusal(res, verdict, policy);
      return policy.session.exchange(req, res, url);
    }
    // Where the cookie is the credential, only the gateway's own pages may frame the answer (or its refusal).
    if (policy.session && !authenticated) for (const [k, v] of Object.entries(FRAME_HEADERS)) res.setHeader(k, v);
    const verdict = await this.#check(req, url, policy, authenticated);
    if (!verdict.ok) return writeRefusal(res, verdict, policy);
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
      return refuseUpgrade(socket, 400, "Bad request URL.");
    }
    const stripped = this.#capability(req, url, (p) => this.#upgradeAt(p)?.policy);
    if (stripped === false) {
      this.#options.log.debug(`refused an upgrade of ${redactPath(url.pathname).slice(0, 60)}: frame capability`);
      return refuseUpgrade(socket, 401, CAPABILITY_REFUSED);
    }
    const authenticated = stripped !== undefined;
    if (stripped) url = stripped;
    const found = this.#upgradeAt(url.pathname);
    const verdict = await this.#check(req, url, found?.policy ?? this.#options.fallback?.policy ?? OPEN, authenticated);
    if (!verdict.ok) {
      this.#options.log.debug(`refused an upgrade of ${redactPath(url.pathname).slice(0, 60)}: ${verdict.code}`);
      this.onRefusedUpgrade?.(req, verdict.message);
      return refuseUpgrade(
        socket,
        verdict.status,
        verdict.message,
        verdict.status === 401
          ? { "WWW-Authenticate": verdict.challenge ?? `Bearer realm="${found?.policy.realm ?? "ccb"}"` }
          : {},
      );
    }
    if (!found) return refuseUpgrade(socket, 404, "Not found.");
    try {
      await found.handler(req, socket, head, url);
    } catch (err) {
      this.#options.log.error(`upgrade ${found.prefix} failed: ${err instanceof Error ? err.message : String(err)}`);
      socket.destroy();
    }
  }
}

const CAPABILITY_REFUSED =
  "This workbench address is not valid (any more): it belongs to an embedded workbench of an earlier session. Ask ccb for a new one (vscode_open).";

function refuseCapability(res: ServerResponse): void {
  res
    .writeHead(401, {
      "content-type": "text/plain; charset=utf-8",
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
    })
    .end(`${CAPABILITY_REFUSED}\n`);
}

function writeRefusal(res: ServerResponse, verdict: Extract<EdgeVerdict, { ok: false }>, policy: EdgePolicy): void {
  const headers: Record<string, string> = {};
  if (verdict.status === 401) {
    const realm = policy.realm ?? "ccb";
    headers["www-authenticate"] =
      verdict.challenge ??
      (verdict.code === "TOKEN_WRONG" ? `Bearer realm="${realm}", error="invalid_token"` : `Bearer realm="${realm}"`);
  }
  const style = policy.style ?? "json";
  if (style === "text") {
    res
      .writeHead(verdict.status, {
        "content-type": "text/plain; charset=utf-8",
        "cache-control": "no-store",
        ...headers,
      })
      .end(`${verdict.message}\n`);
    return;
  }
  const value =
    style === "jsonrpc"
      ? errorResponse(
          null,
          verdict.status === 401 ? ServerErrorCode.NotAuthorized : ServerErrorCode.Refused,
          verdict.message,
          { code: verdict.code },
        )
      : { error: verdict.message, code: verdict.code };
  sendJson(res, verdict.status, value, headers);
}

function normalisePrefix(p: string): string {
  const withSlash = p.startsWith("/") ? p : `/${p}`;
  return withSlash.length > 1 && withSlash.endsWith("/") ? withSlash.slice(0, -1) : withSlash;
}

function matches(pathname: string, prefix: string): boolean {
  if (prefix === "/") return true;
  return pathname === prefix || pathname.startsWith(`${prefix}/`);
}

function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? (v.length === 1 ? v[0] : undefined) : v;
}
