import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import { CcbError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import { verifyUpgrade } from "./auth.ts";

/**
 * The WebSocket listener of the IDE server: 127.0.0.1 only, random port in 10000-65535, every
 * upgrade checked (Origin, Host, token, subprotocol) BEFORE the WebSocket handshake, the `mcp`
 * subprotocol echoed, frames capped (close 1009), dead peers found by ping/pong.
 */

export interface SocketServerOptions {
  authToken: string;
  log: Logger;
  /** Fixed port (tests); default: random in [10000, 65535] with retries. */
  port?: number;
  maxPayloadBytes?: number;
  pingIntervalMs?: number;
  onConnection(ws: WebSocket, req: IncomingMessage): void;
}

export interface SocketServer {
  readonly port: number;
  readonly clients: ReadonlySet<WebSocket>;
  /** Upgrades accepted and refused since start. */
  stats(): { accepted: number; refused: number };
  close(): Promise<void>;
}

export const DEFAULT_MAX_PAYLOAD = 64 * 1024 * 1024;
const PORT_MIN = 10000;
const PORT_MAX = 65535;

function randomPort(): number {
  return PORT_MIN + Math.floor(Math.random() * (PORT_MAX - PORT_MIN + 1));
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => {
      server.off("listening", onListening);
      reject(err);
    };
    const onListening = () => {
      server.off("error", onError);
      resolve();
    };
    server.once("error", onError);
    server.once("listening", onListening);
    server.listen(port, "127.0.0.1");
  });
}

function refuse(socket: Socket, status: number, reason: string): void {
  const phrase = { 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 426: "Upgrade Required" }[status] ?? "Error";
  const body = `${reason}\n`;
  socket.end(`HTTP/1.1 ${status} ${phrase}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  socket.destroySoon?.();
}

export async function startSocketServer(options: SocketServerOptions): Promise<SocketServer> {
  const log = options.log;
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD,
    perMessageDeflate: false,
    clientTracking: true,
    handleProtocols: (protocols) => (protocols.has("mcp") ? "mcp" : false),
  });

  const http = createServer((_req, res) => {
    res.writeHead(426, { "content-type": "text/plain", connection: "close" });
    res.end("This is a Claude Code IDE WebSocket endpoint.\n");
  });
  http.on("clientError", (_err, socket) => socket.destroy());

  const alive = new WeakMap<WebSocket, boolean>();
  let accepted = 0;
  let refused = 0;
  http.on("upgrade", (req: IncomingMessage, socket: Socket, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    const verdict = verifyUpgrade(req.headers, options.authToken, port);
    if (!verdict.ok) {
      log.warn(`refused IDE connection from ${req.socket.remoteAddress ?? "?"}: ${verdict.reason}`);
      refused++;
      refuse(socket, verdict.status, verdict.reason);
      return;
    }
    accepted++;
    wss.handleUpgrade(req, socket, head, (ws) => {
      alive.set(ws, true);
      ws.on("pong", () => alive.set(ws, true));
      ws.on("error", (err) => log.debug(`IDE socket error: ${err.message}`));
      options.onConnection(ws, req);
    });
  });

  let port = 0;
  if (options.port !== undefined) {
    await listen(http, options.port);
  } else {
    let lastErr: unknown;
    for (let attempt = 0; attempt < 25; attempt++) {
      try {
        await listen(http, randomPort());
        lastErr = undefined;
        break;
      } catch (err) {
        lastErr = err;
        if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE" && (err as NodeJS.ErrnoException).code !== "EACCES") break;
      }
    }
    if (lastErr !== undefined) {
      throw new CcbError("INTERNAL", `Could not listen on 127.0.0.1 for the IDE server: ${(lastErr as Error).message}`, { cause: lastErr });
    }
  }
  port = (http.address() as AddressInfo).port;

  const pingMs = options.pingIntervalMs ?? 30_000;
  const pinger = setInterval(() => {
    for (const ws of wss.clients) {
      if (alive.get(ws) === false) {
        log.info("IDE client stopped answering pings; dropping it");
        ws.terminate();
        continue;
      }
      alive.set(ws, false);
      ws.ping();
    }
  }, pingMs);
  pinger.unref();

  return {
    port,
    clients: wss.clients,
    stats: () => ({ accepted, refused }),
    async close() {
      clearInterval(pinger);
      const open = [...wss.clients];
      const closed = Promise.all(open.map((ws) => new Promise<void>((resolve) => ws.once("close", () => resolve()))));
      for (const ws of open) ws.close(1001, "IDE server shutting down");
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, 1000)))]);
      clearTimeout(timer);
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      const httpClosed = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeAllConnections();
      await httpClosed;
    },
  };
}
