import { randomBytes } from "node:crypto";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import type { Logger } from "../core/log.ts";
import { CCB_VERSION } from "../core/version.ts";
import { AgentProcess, type AgentCommand } from "./agent-process.ts";
import { authorizeUpgrade } from "./auth.ts";
import type { FrameLog } from "./frame-log.ts";
import type { PermissionMode } from "./permission.ts";
import { Relay } from "./relay.ts";
import type { TlsMaterial } from "./tls.ts";

export interface LinkServerOptions {
  host: string;
  port: number;
  token: string | undefined;
  allowOrigins: readonly string[];
  tls: TlsMaterial | undefined;
  agent: (mode: PermissionMode) => AgentCommand;
  localMode: PermissionMode;
  maxMessageBytes: number;
  log: Logger;
  frameLog?: FrameLog | undefined;
}

export interface LinkServer {
  readonly server: Server;
  readonly url: string;
  /** Live connections (each with its own agent). */
  connections(): number;
  close(): Promise<void>;
}

const PATHS = new Set(["/acp", "/ws"]);

/**
 * HTTP(S) server with `GET /health` and the WebSocket endpoint `/acp` (alias `/ws`). Every
 * connection gets its own agent process; auth and Origin are checked before the upgrade.
 */
export async function startLinkServer(o: LinkServerOptions): Promise<LinkServer> {
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: o.maxMessageBytes,
    perMessageDeflate: false,
    // Echo the chosen subprotocol: the auth one when offered, else the client's first.
    handleProtocols: (protocols) => {
      for (const p of protocols) if (p.startsWith("rcs.auth.")) return p;
      const first = protocols.values().next();
      return first.done ? false : first.value;
    },
  });
  const live = new Map<WebSocket, AgentProcess>();

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://link.invalid");
    if (req.method === "GET" && url.pathname === "/health") {
      res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
      res.end(JSON.stringify({ ok: true, name: "ccb link", version: CCB_VERSION, connections: live.size }));
      return;
    }
    if (PATHS.has(url.pathname)) {
      res.writeHead(426, { "content-type": "text/plain", upgrade: "websocket" });
      res.end("This endpoint speaks ACP over WebSocket (one JSON-RPC message per text frame).\n");
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("Not found. Endpoints: GET /health, WebSocket /acp (alias /ws).\n");
  };

  const server = o.tls ? createHttpsServer({ cert: o.tls.cert, key: o.tls.key }, onRequest) : createHttpServer(onRequest);

  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    const url = new URL(req.url ?? "/", "http://link.invalid");
    if (!PATHS.has(url.pathname)) return refuse(socket, 404, "Not found. The WebSocket endpoint is /acp (alias /ws).");
    const auth = authorizeUpgrade(req, url, { token: o.token, allowOrigins: o.allowOrigins });
    if (!auth.ok) {
      o.log.warn(`refused a connection from ${req.socket.remoteAddress}: ${auth.status} ${auth.message}`);
      return refuse(socket, auth.status, auth.message);
    }
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws));
  });
  const accept = (ws: WebSocket) => {
    const id = randomBytes(4).toString("hex");
    const agent = new AgentProcess(o.agent(o.localMode), o.log);
    live.set(ws, agent);
    o.log.info(`connection ${id}: agent started (pid ${agent.pid ?? "?"})`);
    o.frameLog?.event(id, `connected; agent pid ${agent.pid ?? "?"}`);
    const relay = new Relay(
      { agent, log: o.log, localMode: o.localMode, maxMessageBytes: o.maxMessageBytes, frameLog: o.frameLog, connectionId: id },
      {
        send: (text, done) => ws.send(text, done),
        get bufferedAmount() {
          return ws.bufferedAmount;
        },
        pause: () => ws.pause(),
        resume: () => ws.resume(),
      },
    );
    ws.on("message", (data, isBinary) => {
      if (isBinary) {
        ws.close(1003, "binary frames are not supported: send JSON-RPC as text");
        return;
      }
      relay.fromClient(data.toString());
    });
    ws.on("error", (err) => o.log.debug(`connection ${id}: ${err.message}`));
    ws.on("close", (code) => {
      live.delete(ws);
      o.frameLog?.event(id, `closed (${code})`);
      o.log.info(`connection ${id}: closed (${code}); stopping its agent`);
      agent.kill();
    });
    void agent.exited.then(({ code, signal }) => {
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) {
        const reason = `agent exited (${signal ?? `code ${code}`})`;
        ws.close(code === 0 ? 1000 : 1011, reason);
      }
    });
  };

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : o.port;
  const hostForUrl = o.host.includes(":") ? `[${o.host}]` : o.host;
  const url = `${o.tls ? "wss" : "ws"}://${hostForUrl}:${port}/acp`;

  return {
    server,
    url,
    connections: () => live.size,
    async close() {
      for (const [ws, agent] of live) {
        ws.close(1001, "ccb link is shutting down");
        agent.kill(1000);
      }
      await Promise.all([...live.values()].map((a) => a.exited));
      wss.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function refuse(socket: Duplex, status: number, message: string): void {
  const reason = { 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found" }[status] ?? "Error";
  const body = `${message}\n`;
  const extra = status === 401 ? 'WWW-Authenticate: Bearer realm="ccb link"\r\n' : "";
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`);
}
