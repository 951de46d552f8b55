import type { IncomingMessage } from "node:http";
import { type WebSocket, WebSocketServer } from "ws";
import { CcbError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import { checkExposure } from "../../net/exposure.ts";
import { Gateway } from "../../net/gateway.ts";
import { idePolicy } from "./auth.ts";

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
  readonly gateway: Gateway;
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

export async function startSocketServer(options: SocketServerOptions): Promise<SocketServer> {
  const log = options.log;
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD,
    perMessageDeflate: false,
    clientTracking: true,
    handleProtocols: (protocols) => (protocols.has("mcp") ? "mcp" : false),
  });

  const policy = idePolicy(options.authToken, options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD);
  const host = "127.0.0.1";
  checkExposure({ listener: "ide", host });
  const gateway = new Gateway({
    host,
    port: options.port ?? randomPort,
    log,
    fallback: {
      status: 426,
      text: "This is a Claude Code IDE WebSocket endpoint.",
      policy: { ...policy, name: "ide-plain", auth: [], subprotocol: undefined },
    },
  });

  const alive = new WeakMap<WebSocket, boolean>();
  let accepted = 0;
  let refused = 0;
  gateway.onRefusedUpgrade = (req, reason) => {
    log.warn(`refused IDE connection from ${req.socket.remoteAddress ?? "?"}: ${reason}`);
    refused++;
  };
  gateway.addUpgrade(
    "/",
    (req, socket, head) => {
      accepted++;
      wss.handleUpgrade(req, socket, head, (ws) => {
        alive.set(ws, true);
        ws.on("pong", () => alive.set(ws, true));
        ws.on("error", (err) => log.debug(`IDE socket error: ${err.message}`));
        options.onConnection(ws, req);
      });
    },
    policy,
  );

  try {
    await gateway.listen();
  } catch (err) {
    throw new CcbError("INTERNAL", `Could not listen on 127.0.0.1 for the IDE server: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const port = gateway.port;

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
    gateway,
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
      await gateway.close();
    },
  };
}
