import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { createNodeHttpHandler } from "@agentclientprotocol/sdk/experimental/node";
import { AcpServer, DEFAULT_MAX_BUFFERED_BYTES } from "@agentclientprotocol/sdk/experimental/server";
import { type WebSocket, WebSocketServer } from "ws";
import type { Logger } from "../core/log.ts";
import { BodyTooLargeError, readBody } from "../net/body.ts";
import { cookieValues } from "../net/credentials.ts";
import { sendJson } from "../net/respond.ts";
import { echoedId, errorResponse, idMember, JsonRpcCode } from "../util/jsonrpc.ts";
import type { AgentBridge } from "./agent-bridge.ts";

/** The affinity cookie (the remote transport RFD: clients keep and return the server's cookies). */
export const AFFINITY_COOKIE = "ccb_link_affinity";
const CONNECTION_HEADER = "acp-connection-id";

export interface AcpEndpointOptions {
  /** A new, not yet started agent for one connection. */
  bridge: () => AgentBridge;
  maxMessageBytes: number;
  /** This link's name in the affinity cookie (a load balancer routes by it). */
  instance: string;
  /** Served over TLS: the cookie is `Secure`. */
  secure: boolean;
  /**
   * A Streamable HTTP connection with no open SSE stream and no request for this long is closed
   * (with its agent): a client that left without DELETE does not keep an agent running.
   */
  idleMs: number;
  log: Logger;
}

/**
 * `/acp` on ACP's remote transport, served by the SDK's `AcpServer`: Streamable HTTP (POST, GET for
 * the SSE streams, DELETE) and a WebSocket upgrade on the same path. The gateway has checked Host,
 * Origin and token before anything here runs. Added to the SDK: one agent process per connection
 * (AgentBridge), the affinity cookie on the `initialize` answer and on the `101`, a `421` for a
 * connection of another link instance, and JSON-RPC errors (with the message's id) instead of the
 * SDK's plain-text refusals of a POST.
 */
export class AcpEndpoint {
  readonly #o: AcpEndpointOptions;
  readonly #server: AcpServer;
  readonly #wss: WebSocketServer;
  readonly #sdkHttp: (req: IncomingMessage, res: ServerResponse) => void;
  /** Streamable HTTP connections this link holds, by `Acp-Connection-Id`. */
  readonly #httpConnections = new Map<string, HttpConnection>();

  constructor(options: AcpEndpointOptions) {
    this.#o = options;
    this.#server = new AcpServer({
      createAgent: options.bridge,
      // A WebSocket connection closes when its waiting client frames pass this: keep frames below it.
      maxBufferedBytes: Math.max(DEFAULT_MAX_BUFFERED_BYTES, 2 * options.maxMessageBytes),
    });
    this.#sdkHttp = createNodeHttpHandler(this.#server, { maxRequestBodyBytes: options.maxMessageBytes });
    this.#wss = new WebSocketServer({
      noServer: true,
      maxPayload: options.maxMessageBytes,
      perMessageDeflate: false,
      // Echo the chosen subprotocol: the auth one when offered, else the client's first.
      handleProtocols: (protocols) => {
        for (const p of protocols) if (p.startsWith("rcs.auth.")) return p;
        const first = protocols.values().next();
        return first.done ? false : first.value;
      },
    });
  }

  get cookie(): string {
    return `${AFFINITY_COOKIE}=${this.#o.instance}; Path=/acp; HttpOnly; SameSite=Strict${this.#o.secure ? "; Secure" : ""}`;
  }

  /** A Streamable HTTP request to `/acp` (past the gateway's checks). */
  async handleHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const connectionId = single(req.headers[CONNECTION_HEADER]);
    const held = connectionId === undefined ? undefined : this.#httpConnections.get(connectionId);
    if (connectionId !== undefined && !held && this.#misdirected(req)) {
      this.#refuse(res, 421, null, this.#misdirectedMessage());
      return;
    }
    if (connectionId !== undefined && held) this.#busy(connectionId, held, res);
    if (req.method === "GET" || req.method === "DELETE") {
      // The SSE streams (and their backpressure) as the SDK's node adapter writes them.
      this.#sdkHttp(req, res);
      return;
    }
    if (req.method !== "POST") {
      sendJson(res, 405, { error: `Method ${req.method} not allowed here.` }, { allow: "GET, POST, DELETE" });
      return;
    }
    await this.#post(req, res);
  }

  async #post(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: Buffer;
    try {
      body = await readBody(req, this.#o.maxMessageBytes);
    } catch (err) {
      if (err instanceof BodyTooLargeError) {
        req.resume();
        this.#refuse(res, 413, null, `${err.message} Send one JSON-RPC message of at most that size per POST.`);
      } else res.destroy();
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(body.toString("utf8"));
    } catch {
      this.#refuse(
        res,
        400,
        null,
        "Parse error: the body is not valid JSON (one JSON-RPC message per POST).",
        JsonRpcCode.ParseError,
      );
      return;
    }
    const abort = new AbortController();
    res.once("close", () => {
      if (!res.writableFinished) abort.abort();
    });
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers))
      if (v !== undefined) for (const one of Array.isArray(v) ? v : [v]) headers.append(k, one);
    // An initialize opens a connection: with an agent of its own, known here until it ends.
    const opening =
      isInitialize(message) && req.headers[CONNECTION_HEADER] === undefined ? this.#o.bridge() : undefined;
    const response = await this.#server.handleRequest(
      new Request(`http://link.invalid${req.url ?? "/acp"}`, {
        method: "POST",
        headers,
        body: JSON.stringify(message),
        signal: abort.signal,
      }),
      opening ? { agent: opening } : {},
    );
    const id = echoedId(idMember(message));
    const opened = response.headers.get(CONNECTION_HEADER);
    if (opening && opened) this.#hold(opened, opening);
    const type = response.headers.get("content-type") ?? "";
    if (response.status >= 400 && !type.startsWith("application/json")) {
      // The SDK refuses in plain text; a JSON-RPC client gets a JSON-RPC error with its id.
      this.#refuse(res, response.status, id, explain(await response.text()));
      return;
    }
    const out: Record<string, string | string[]> = { "cache-control": "no-store" };
    response.headers.forEach((v, k) => {
      out[k] = v;
    });
    if (opened) out["set-cookie"] = this.cookie;
    res.writeHead(response.status, out).end(Buffer.from(await response.arrayBuffer()));
  }

  #hold(id: string, bridge: AgentBridge): void {
    const c: HttpConnection = { requests: 0, timer: undefined };
    this.#httpConnections.set(id, c);
    this.#idle(id, c);
    void bridge.done.then(() => {
      clearTimeout(c.timer);
      this.#httpConnections.delete(id);
    });
  }

  /** A request (or SSE stream) of a connection is open until `res` closes; the idle clock waits. */
  #busy(id: string, c: HttpConnection, res: ServerResponse): void {
    c.requests++;
    clearTimeout(c.timer);
    res.once("close", () => {
      c.requests--;
      if (this.#httpConnections.get(id) === c) this.#idle(id, c);
    });
  }

  #idle(id: string, c: HttpConnection): void {
    clearTimeout(c.timer);
    if (c.requests > 0) return;
    c.timer = setTimeout(() => {
      this.#o.log.info(`Streamable HTTP connection idle for ${this.#o.idleMs} ms (no stream, no request): closing it`);
      void this.#server
        .handleRequest(
          new Request("http://link.invalid/acp", { method: "DELETE", headers: { [CONNECTION_HEADER]: id } }),
        )
        .catch(() => {});
    }, this.#o.idleMs);
    c.timer.unref();
  }

  /** A WebSocket upgrade of `/acp` (past the gateway's checks): a new connection with its own agent. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const bridge = this.#o.bridge();
    const upgrade = this.#server.prepareWebSocketUpgrade({ agent: bridge });
    let accepted = false;
    const onHeaders = (headers: string[], request: IncomingMessage) => {
      if (request === req) headers.push(`Acp-Connection-Id: ${upgrade.connectionId}`, `Set-Cookie: ${this.cookie}`);
    };
    const cleanup = () => {
      this.#wss.off("headers", onHeaders);
      socket.off("close", failed);
      socket.off("error", failed);
    };
    const failed = () => {
      if (accepted) return;
      cleanup();
      upgrade.reject();
    };
    this.#wss.on("headers", onHeaders);
    socket.once("close", failed);
    socket.once("error", failed);
    try {
      this.#wss.handleUpgrade(req, socket, head, (ws) => {
        accepted = true;
        cleanup();
        upgrade.accept(new BridgeSocket(ws, bridge));
      });
    } catch (err) {
      cleanup();
      upgrade.reject();
      this.#o.log.debug(`upgrade failed: ${(err as Error).message}`);
      socket.destroy();
    }
  }

  async close(): Promise<void> {
    for (const c of this.#httpConnections.values()) clearTimeout(c.timer);
    await this.#server.close();
    this.#wss.close();
  }

  #misdirected(req: IncomingMessage): boolean {
    const names = cookieValues(req, AFFINITY_COOKIE);
    return names.length > 0 && !names.includes(this.#o.instance);
  }

  #misdirectedMessage(): string {
    return `This Acp-Connection-Id belongs to another ccb link instance (the ${AFFINITY_COOKIE} cookie names it; this is ${this.#o.instance}). Route requests by that cookie (sticky sessions) to reach its instance.`;
  }

  #refuse(
    res: ServerResponse,
    status: number,
    id: ReturnType<typeof echoedId>,
    message: string,
    code: number = JsonRpcCode.InvalidRequest,
  ): void {
    sendJson(res, status, errorResponse(id, code, message, { status }));
  }
}

interface HttpConnection {
  /** Requests and SSE streams open now. */
  requests: number;
  timer: NodeJS.Timeout | undefined;
}

/**
 * The accepted `ws` socket as the SDK's WebSocket session sees it. When the agent has exited, the
 * SDK's plain close becomes 1000 or 1011 with the exit as its reason (`agent exited (code 3)`).
 */
class BridgeSocket {
  readonly #ws: WebSocket;
  readonly #bridge: AgentBridge;

  constructor(ws: WebSocket, bridge: AgentBridge) {
    this.#ws = ws;
    this.#bridge = bridge;
  }

  get readyState(): number {
    return this.#ws.readyState;
  }

  get bufferedAmount(): number {
    return this.#ws.bufferedAmount;
  }

  send(data: string): void {
    this.#ws.send(data);
  }

  close(code?: number, reason?: string): void {
    const exit = this.#bridge.exit;
    if (exit && (code === undefined || code === 1000)) this.#ws.close(exit.code === 0 ? 1000 : 1011, exit.reason);
    else this.#ws.close(code, reason);
  }

  on(type: string, listener: (...args: unknown[]) => void): void {
    this.#ws.on(type, listener);
  }

  off(type: string, listener: (...args: unknown[]) => void): void {
    this.#ws.off(type, listener);
  }
}

/** The SDK's plain-text refusals, with what to do about them. */
function explain(text: string): string {
  const t = text.trim();
  if (t === "Unknown Acp-Connection-Id")
    return `${t}: the connection has ended (DELETE, or its agent exited). Start a new one with initialize.`;
  if (t === "Missing Acp-Connection-Id")
    return `${t}: send the Acp-Connection-Id header that the initialize answer carried.`;
  if (t === "Unsupported Media Type") return `${t}: POST with Content-Type: application/json.`;
  return t;
}

function isInitialize(message: unknown): boolean {
  return typeof message === "object" && message !== null && (message as { method?: unknown }).method === "initialize";
}

function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
