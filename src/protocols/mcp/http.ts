import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { NodeStreamableHTTPServerTransport, toNodeHandler, toWebRequest } from "@modelcontextprotocol/node";
import {
  createMcpHandler,
  isInitializeRequest,
  isLegacyRequest,
  type McpHttpHandler,
  type Server,
} from "@modelcontextprotocol/server";
import type { Core } from "../../core/core.ts";
import type { Logger } from "../../core/log.ts";
import { CCB_VERSION } from "../../core/version.ts";
import { BodyTooLargeError, readBody } from "../../net/body.ts";
import type { Gateway } from "../../net/gateway.ts";
import type { OAuthGuard } from "../../net/oauth/guard.ts";
import { type EdgePolicy, TOKEN_QUERY_KEYS } from "../../net/policy.ts";
import { sendJson, sendJsonRpcError } from "../../net/respond.ts";
import { workspaceTools } from "../../tools/catalog.ts";
import type { AnyToolDef } from "../../tools/kernel.ts";
import { errorResponse, ServerErrorCode } from "../../util/jsonrpc.ts";
import type { AppState } from "./app/app-state.ts";
import { claimedVersion, isRequest, RpcCode, refuseRequest, ValidatingTransport } from "./edge.ts";
import { refuseByScope } from "./scopes.ts";
import { createMcpServer } from "./server.ts";

/** The largest MCP message, over HTTP (request body) and stdio (one frame) alike: --max-body-bytes. */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
/** A session with no request in flight and no open stream is closed after this long. */
export const DEFAULT_SESSION_IDLE_MS = 5 * 60_000;
export const DEFAULT_MAX_SESSIONS = 256;

export interface McpHttpOptions {
  core: Core;
  log: Logger;
  /** Bearer token required on /mcp (undefined = none, only allowed on loopback). */
  authToken?: string | undefined;
  /** OAuth 2.1 access tokens for this resource accepted on /mcp (src/net/oauth). */
  oauth?: OAuthGuard | undefined;
  /** Browser origins allowed besides the server's own (exact scheme://host[:port]). */
  allowOrigins?: readonly string[];
  maxBodyBytes?: number;
  sessionIdleMs?: number;
  maxSessions?: number;
  /** The MCP App every session offers (`ccb serve` with a workbench). */
  app?: AppState | undefined;
  /** The tools to offer (default: every workspace tool). */
  tools?: readonly AnyToolDef[] | undefined;
}

interface Session {
  transport: ValidatingTransport;
  http: NodeStreamableHTTPServerTransport;
  server: Server;
  lastSeen: number;
  /** Requests in flight, open GET streams included: a session with any is never idle. */
  open: number;
}

/**
 * Streamable HTTP at /mcp, in both protocol eras, with /healthz and /readyz. The gateway checks every
 * /mcp request against its declared policy (Host, Origin, bearer token) whatever its era; here come
 * the body cap, the JSON parse and the edge check of the request (`refuseRequest`); then the era:
 *
 * - 2026-07-28 (a request that claims a version in its `_meta` envelope, or names one in the
 *   MCP-Protocol-Version header): no session. Each POST is answered on its own by the SDK's
 *   `createMcpHandler` (a fresh server from the same factory per request; the SDK checks the
 *   Mcp-Method / Mcp-Name headers against the body, -32020 / 400, and the version, -32022 / 400).
 * - 2025-11-25 and older (the `initialize` handshake): sessions as before, one server per session.
 *
 * Legacy sessions cannot be exhausted: a session with nothing in flight and no open stream expires after
 * `sessionIdleMs`, and a new session at the cap evicts the least recently used idle one (503 only
 * when every session is busy), so memory stays bounded by `maxSessions`.
 */
export class McpHttpEndpoint {
  readonly #sessions = new Map<string, Session>();
  readonly #options: McpHttpOptions;
  readonly #maxBody: number;
  readonly #sweep: NodeJS.Timeout;
  /** The stateless era: one SDK handler, a server per request, no session state. */
  readonly #modern: McpHttpHandler;
  readonly #modernNode: ReturnType<typeof toNodeHandler>;
  readonly #offApp: (() => void) | undefined;

  constructor(gateway: Gateway, options: McpHttpOptions) {
    this.#options = options;
    this.#maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.#modern = createMcpHandler(() => this.#server({ idleMs: options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS }), {
      legacy: "reject",
      maxRequestBodySize: this.#maxBody,
      onerror: (err) => options.log.debug(`mcp (2026-07-28): ${err.message}`),
    });
    this.#modernNode = toNodeHandler(this.#modern, { maxRequestBodySize: this.#maxBody });
    // The App's resource changes (its origins become known, it goes away): every open
    // subscriptions/listen stream that asked for resource list changes hears it.
    this.#offApp = options.app?.onChange(() => this.#modern.notify.resourcesChanged());
    gateway.addRoute("*", "/mcp", (req, res) => this.#handle(req, res), mcpPolicy(options, this.#maxBody));
    gateway.addRoute("GET", "/healthz", (_req, res) => this.#health(res), {
      name: "healthz",
      origin: { kind: "same" },
      auth: [],
    });
    gateway.addRoute("GET", "/readyz", (_req, res) => this.#ready(res), {
      name: "readyz",
      origin: { kind: "same" },
      auth: [],
    });
    const idle = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
    this.#sweep = setInterval(() => this.#closeIdle(idle), Math.max(1_000, Math.min(idle / 2, 30_000)));
    this.#sweep.unref();
  }

  get sessionCount(): number {
    return this.#sessions.size;
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
    this.#offApp?.();
    const all = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.allSettled([this.#modern.close(), ...all.map((s) => s.transport.close())]);
  }

  /** One MCP server, for a legacy session or for one stateless-era request (`perRequest`). */
  #server(perRequest?: { idleMs: number }): Server {
    return createMcpServer({
      core: this.#options.core,
      log: this.#options.log,
      app: this.#options.app,
      ...(this.#options.tools ? { tools: this.#options.tools } : {}),
      ...(perRequest ? { perRequest } : {}),
    });
  }

  #health(res: ServerResponse): void {
    const bridge = this.#options.core.bridge.status();
    sendJson(res, 200, {
      ok: true,
      name: "ccb",
      version: CCB_VERSION,
      bridge: { connected: bridge.connected, reason: bridge.reason },
      sessions: this.#sessions.size,
    });
  }

  /** Readiness: 200 while the live editor bridge is connected, 503 (with the reason) otherwise. */
  #ready(res: ServerResponse): void {
    const bridge = this.#options.core.bridge.status();
    sendJson(res, bridge.connected ? 200 : 503, {
      ready: bridge.connected,
      bridge: { connected: bridge.connected, reason: bridge.reason },
    });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sessionId = header(req, "mcp-session-id");
    if (req.method === "POST") return this.#post(req, res, sessionId);
    if (req.method === "GET" || req.method === "DELETE") {
      const session = sessionId ? this.#sessions.get(sessionId) : undefined;
      if (!session) {
        // The stateless era has no GET stream (subscriptions/listen is a POST) and no session to end.
        if (sessionId === undefined && isModernVersion(header(req, "mcp-protocol-version"))) {
          await this.#modernNode(req, res);
          return;
        }
        return this.#noSession(res, sessionId);
      }
      await this.#serve(session, req, res);
      return;
    }
    sendJsonRpcError(
      res,
      405,
      ServerErrorCode.Refused,
      `Method ${req.method} not allowed on /mcp (use POST, GET or DELETE).`,
      {
        allow: "GET, POST, DELETE",
      },
    );
  }

  async #post(req: IncomingMessage, res: ServerResponse, sessionId: string | undefined): Promise<void> {
    let body: Buffer;
    try {
      body = await readBody(req, this.#maxBody);
    } catch (err) {
      if (err instanceof BodyTooLargeError) {
        sendJsonRpcError(
          res,
          413,
          RpcCode.InvalidRequest,
          `Request too large: the body limit is ${err.limit} bytes. Send smaller requests (or raise --max-body-bytes).`,
          { connection: "close" },
        );
        return;
      }
      throw err;
    }
    let message: unknown;
    try {
      message = JSON.parse(body.toString("utf8"));
    } catch {
      sendJsonRpcError(res, 400, RpcCode.ParseError, "Parse error: the request body is not valid JSON.");
      return;
    }
    // OAuth scopes (ccb:read / ccb:write), for either era, before anything runs.
    if (refuseByScope(req, res, message, this.#options.tools ?? workspaceTools, this.#options.log)) return;
    if (sessionId === undefined && !(await isLegacyRequest(await toWebRequest(req, message), message))) {
      await this.#postModern(req, res, message);
      return;
    }
    if (sessionId !== undefined) {
      const session = this.#sessions.get(sessionId);
      if (!session) return this.#noSession(res, sessionId);
      await this.#serve(session, req, res, message);
      return;
    }
    if (!isInitializeRequest(message)) {
      sendJsonRpcError(
        res,
        400,
        ServerErrorCode.Refused,
        "Bad Request: no Mcp-Session-Id header. Send an initialize request first to open a session.",
      );
      return;
    }
    if (this.#sessions.size >= (this.#options.maxSessions ?? DEFAULT_MAX_SESSIONS) && !this.#evictIdle()) {
      sendJsonRpcError(
        res,
        503,
        ServerErrorCode.Refused,
        "Too many busy MCP sessions (every one has a request or stream open); retry in a moment.",
        { "retry-after": "5" },
      );
      return;
    }
    await this.#openSession(req, res, message);
  }

  /**
   * A stateless-era POST: the edge check (a version ccb does not speak: 400 / -32022; bad params of
   * a known method: -32602 saying which field) where the headers agree with the body (where they
   * do not, the SDK answers 400 / -32020), then the SDK's per-request handler.
   */
  async #postModern(req: IncomingMessage, res: ServerResponse, message: unknown): Promise<void> {
    if (
      isRequest(message) &&
      header(req, "mcp-method") === message.method &&
      header(req, "mcp-protocol-version") === claimedVersion(message)
    ) {
      const refusal = refuseRequest(message);
      if (refusal) {
        const status = refusal.code === RpcCode.UnsupportedProtocolVersion ? 400 : 200;
        sendJson(res, status, errorResponse(message.id, refusal.code, refusal.message, refusal.data));
        return;
      }
    }
    await this.#modernNode(req, res, message);
  }

  /** Pass a request to its session, counting it as open until its response ends (streams included). */
  async #serve(session: Session, req: IncomingMessage, res: ServerResponse, body?: unknown): Promise<void> {
    session.open++;
    session.lastSeen = Date.now();
    res.once("close", () => {
      session.open--;
      session.lastSeen = Date.now();
    });
    await session.http.handleRequest(req, res, body);
  }

  /** Close the least recently used idle session; false when every session is busy. */
  #evictIdle(): boolean {
    let victim: [string, Session] | undefined;
    for (const entry of this.#sessions) {
      if (entry[1].open > 0) continue;
      if (!victim || entry[1].lastSeen < victim[1].lastSeen) victim = entry;
    }
    if (!victim) return false;
    this.#sessions.delete(victim[0]);
    this.#options.log.debug("session cap reached: closing the least recently used idle session");
    void victim[1].transport.close().catch(() => {});
    return true;
  }

  async #openSession(req: IncomingMessage, res: ServerResponse, message: unknown): Promise<void> {
    const log = this.#options.log;
    const server = this.#server();
    const http = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.#sessions.set(id, { transport, http, server, lastSeen: Date.now(), open: 0 });
        log.debug(`session opened (${this.#sessions.size} open)`);
      },
      onsessionclosed: (id) => {
        this.#sessions.delete(id);
      },
    });
    const transport = new ValidatingTransport(http);
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id !== undefined && this.#sessions.get(id)?.transport === transport) this.#sessions.delete(id);
      void server.close().catch(() => {});
    };
    await server.connect(transport);
    await http.handleRequest(req, res, message);
  }

  #noSession(res: ServerResponse, sessionId: string | undefined): void {
    if (sessionId === undefined) {
      sendJsonRpcError(
        res,
        400,
        ServerErrorCode.Refused,
        "Bad Request: no Mcp-Session-Id header. Send an initialize request first to open a session.",
      );
    } else {
      sendJsonRpcError(
        res,
        404,
        ServerErrorCode.NotAuthorized,
        "Session not found: it was closed or has expired. Send a new initialize request.",
      );
    }
  }

  #closeIdle(idleMs: number): void {
    const now = Date.now();
    for (const [id, s] of this.#sessions) {
      if (s.open === 0 && now - s.lastSeen > idleMs) {
        this.#sessions.delete(id);
        this.#options.log.debug("closing idle MCP session");
        void s.transport.close().catch(() => {});
      }
    }
  }
}

/** /mcp: Host, Origin (own or --allow-origin), bearer token when set, body cap; refusals as JSON-RPC errors. */
function mcpPolicy(options: McpHttpOptions, maxBody: number): EdgePolicy {
  const allow = options.allowOrigins ?? [];
  return {
    name: "mcp",
    origin: { kind: "same", allow: () => allow },
    auth: [{ places: [{ in: "bearer" }], expected: () => options.authToken }],
    oauth: options.oauth,
    refuseQueryKeys: TOKEN_QUERY_KEYS,
    maxBodyBytes: maxBody,
    style: "jsonrpc",
    realm: "ccb",
    messages: {
      ORIGIN_REFUSED: "Forbidden: browser Origin not allowed. Start ccb with --allow-origin <origin> to allow it.",
      ...(options.oauth
        ? {}
        : {
            TOKEN_MISSING:
              "Unauthorized: send Authorization: Bearer <token> (the --auth-token / CCB_AUTH_TOKEN value).",
            TOKEN_WRONG: "Unauthorized: wrong bearer token.",
          }),
    },
  };
}

function isModernVersion(version: string | undefined): boolean {
  return version !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(version) && version >= "2026-01-01";
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
