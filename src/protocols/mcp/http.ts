import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ErrorCode, isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Core } from "../../core/core.ts";
import type { Logger } from "../../core/log.ts";
import { CCB_VERSION } from "../../core/version.ts";
import { connectValidated } from "./edge.ts";
import type { Gateway } from "./gateway.ts";
import { BodyTooLargeError, bearerMatches, normaliseOrigin, readBody, sendJson, sendJsonRpcError } from "./guards.ts";
import { createMcpServer } from "./server.ts";

export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;
const DEFAULT_MAX_SESSIONS = 256;

export interface McpHttpOptions {
  core: Core;
  log: Logger;
  /** Bearer token required on /mcp (undefined = none, only allowed on loopback). */
  authToken?: string | undefined;
  /** Browser origins allowed besides the server's own (exact scheme://host[:port]). */
  allowOrigins?: readonly string[];
  maxBodyBytes?: number;
  sessionIdleMs?: number;
  maxSessions?: number;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  lastSeen: number;
}

/**
 * Streamable HTTP at /mcp with sessions (one MCP Server per session), /healthz and /readyz. Every /mcp
 * request passes, in order: Host (gateway), Origin, bearer token, body cap, JSON parse; only then
 * does the SDK's transport see it.
 */
export class McpHttpEndpoint {
  readonly #sessions = new Map<string, Session>();
  readonly #options: McpHttpOptions;
  readonly #gateway: Gateway;
  readonly #maxBody: number;
  readonly #sweep: NodeJS.Timeout;

  constructor(gateway: Gateway, options: McpHttpOptions) {
    this.#gateway = gateway;
    this.#options = options;
    this.#maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    gateway.addRoute("*", "/mcp", (req, res) => this.#handle(req, res));
    gateway.addRoute("GET", "/healthz", (_req, res) => this.#health(res));
    gateway.addRoute("GET", "/readyz", (_req, res) => this.#ready(res));
    const idle = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
    this.#sweep = setInterval(() => this.#closeIdle(idle), Math.min(idle, 60_000));
    this.#sweep.unref();
  }

  get sessionCount(): number {
    return this.#sessions.size;
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
    const all = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.allSettled(all.map((s) => s.transport.close()));
  }

  #health(res: ServerResponse): void {
    const bridge = this.#options.core.bridge.status();
    sendJson(res, 200, { ok: true, name: "ccb", version: CCB_VERSION, bridge: { connected: bridge.connected, reason: bridge.reason }, sessions: this.#sessions.size });
  }

  /** Readiness: 200 while the live editor bridge is connected, 503 (with the reason) otherwise. */
  #ready(res: ServerResponse): void {
    const bridge = this.#options.core.bridge.status();
    sendJson(res, bridge.connected ? 200 : 503, { ready: bridge.connected, bridge: { connected: bridge.connected, reason: bridge.reason } });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!this.#originAllowed(req.headers.origin)) {
      sendJsonRpcError(res, 403, -32000, "Forbidden: browser Origin not allowed. Start ccb with --allow-origin <origin> to allow it.");
      return;
    }
    const token = this.#options.authToken;
    if (token !== undefined && !bearerMatches(req.headers.authorization, token)) {
      const given = req.headers.authorization !== undefined;
      sendJsonRpcError(res, 401, -32001, given ? "Unauthorized: wrong bearer token." : "Unauthorized: send Authorization: Bearer <token> (the --auth-token / CCB_AUTH_TOKEN value).", {
        "www-authenticate": given ? 'Bearer realm="ccb", error="invalid_token"' : 'Bearer realm="ccb"',
      });
      return;
    }
    const sessionId = header(req, "mcp-session-id");
    if (req.method === "POST") return this.#post(req, res, sessionId);
    if (req.method === "GET" || req.method === "DELETE") {
      const session = sessionId ? this.#sessions.get(sessionId) : undefined;
      if (!session) return this.#noSession(res, sessionId);
      session.lastSeen = Date.now();
      await session.transport.handleRequest(req, res);
      return;
    }
    sendJsonRpcError(res, 405, -32000, `Method ${req.method} not allowed on /mcp (use POST, GET or DELETE).`, { allow: "GET, POST, DELETE" });
  }

  async #post(req: IncomingMessage, res: ServerResponse, sessionId: string | undefined): Promise<void> {
    let body: Buffer;
    try {
      body = await readBody(req, this.#maxBody);
    } catch (err) {
      if (err instanceof BodyTooLargeError) {
        sendJsonRpcError(res, 413, ErrorCode.InvalidRequest, `Request too large: the body limit is ${err.limit} bytes. Send smaller requests (or raise --max-body-bytes).`, { connection: "close" });
        return;
      }
      throw err;
    }
    let message: unknown;
    try {
      message = JSON.parse(body.toString("utf8"));
    } catch {
      sendJsonRpcError(res, 400, ErrorCode.ParseError, "Parse error: the request body is not valid JSON.");
      return;
    }
    if (sessionId !== undefined) {
      const session = this.#sessions.get(sessionId);
      if (!session) return this.#noSession(res, sessionId);
      session.lastSeen = Date.now();
      await session.transport.handleRequest(req, res, message);
      return;
    }
    if (!isInitializeRequest(message)) {
      sendJsonRpcError(res, 400, -32000, "Bad Request: no Mcp-Session-Id header. Send an initialize request first to open a session.");
      return;
    }
    if (this.#sessions.size >= (this.#options.maxSessions ?? DEFAULT_MAX_SESSIONS)) {
      sendJsonRpcError(res, 503, -32000, "Too many open MCP sessions; close one (HTTP DELETE /mcp) and retry.");
      return;
    }
    await this.#openSession(req, res, message);
  }

  async #openSession(req: IncomingMessage, res: ServerResponse, message: unknown): Promise<void> {
    const log = this.#options.log;
    const server = createMcpServer({ core: this.#options.core, log });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.#sessions.set(id, { transport, server, lastSeen: Date.now() });
        log.debug(`session opened (${this.#sessions.size} open)`);
      },
      onsessionclosed: (id) => {
        this.#sessions.delete(id);
      },
    });
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id !== undefined && this.#sessions.get(id)?.transport === transport) this.#sessions.delete(id);
      void server.close().catch(() => {});
    };
    await connectValidated(server, transport);
    await transport.handleRequest(req, res, message);
  }

  #noSession(res: ServerResponse, sessionId: string | undefined): void {
    if (sessionId === undefined) {
      sendJsonRpcError(res, 400, -32000, "Bad Request: no Mcp-Session-Id header. Send an initialize request first to open a session.");
    } else {
      sendJsonRpcError(res, 404, -32001, "Session not found: it was closed or has expired. Send a new initialize request.");
    }
  }

  #originAllowed(origin: string | undefined): boolean {
    if (origin === undefined) return true;
    const o = normaliseOrigin(origin);
    const same = this.#gateway.hosts.sameOrigins(this.#gateway.scheme);
    const allowed = [...same, ...(this.#options.allowOrigins ?? []).map(normaliseOrigin)];
    return allowed.includes(o);
  }

  #closeIdle(idleMs: number): void {
    const now = Date.now();
    for (const [id, s] of this.#sessions) {
      if (now - s.lastSeen > idleMs) {
        this.#sessions.delete(id);
        this.#options.log.debug("closing idle MCP session");
        void s.transport.close().catch(() => {});
      }
    }
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
