import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import { type WebSocket, WebSocketServer } from "ws";
import type { Logger } from "../core/log.ts";
import { CCB_VERSION } from "../core/version.ts";
import { Gateway } from "../net/gateway.ts";
import { hostForUrl } from "../net/loopback.ts";
import { type AgentCommand, AgentProcess } from "./agent-process.ts";
import { linkPolicy } from "./auth.ts";
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
  readonly gateway: Gateway;
  readonly url: string;
  /** Live connections (each with its own agent). */
  connections(): number;
  close(): Promise<void>;
}

const PATHS = ["/acp", "/ws"];

/**
 * HTTP(S) gateway with `GET /health` and the WebSocket endpoint `/acp` (alias `/ws`). Every
 * connection gets its own agent process; Host, Origin and token are checked before the upgrade.
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

  const policy = linkPolicy({ token: o.token, allowOrigins: o.allowOrigins, maxMessageBytes: o.maxMessageBytes });
  const gateway = new Gateway({
    host: o.host,
    port: o.port,
    tls: o.tls ? { cert: o.tls.cert, key: o.tls.key } : undefined,
    log: o.log,
    fallback: {
      status: 404,
      text: "Not found. Endpoints: GET /health, WebSocket /acp (alias /ws).",
      policy: { ...policy, name: "link-other", auth: [] },
    },
  });
  gateway.addRoute(
    "GET",
    "/health",
    (_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
      res.end(JSON.stringify({ ok: true, name: "ccb link", version: CCB_VERSION, connections: live.size }));
    },
    { name: "link-health", origin: { kind: "same" }, auth: [] },
  );
  for (const path of PATHS) {
    gateway.addRoute(
      "*",
      path,
      (_req, res) => {
        res.writeHead(426, { "content-type": "text/plain", upgrade: "websocket" });
        res.end("This endpoint speaks ACP over WebSocket (one JSON-RPC message per text frame).\n");
      },
      { ...policy, name: "link-plain", auth: [] },
    );
    gateway.addUpgrade(path, (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => accept(ws)), policy);
  }
  gateway.hosts.allowMachineNames();
  const server = gateway.server;

  const accept = (ws: WebSocket) => {
    const id = randomBytes(4).toString("hex");
    const agent = new AgentProcess(o.agent(o.localMode), o.log);
    live.set(ws, agent);
    o.log.info(`connection ${id}: agent started (pid ${agent.pid ?? "?"})`);
    o.frameLog?.event(id, `connected; agent pid ${agent.pid ?? "?"}`);
    const relay = new Relay(
      {
        agent,
        log: o.log,
        localMode: o.localMode,
        maxMessageBytes: o.maxMessageBytes,
        frameLog: o.frameLog,
        connectionId: id,
      },
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

  await gateway.listen();
  const url = `${o.tls ? "wss" : "ws"}://${hostForUrl(o.host)}:${gateway.port}/acp`;

  return {
    server,
    gateway,
    url,
    connections: () => live.size,
    async close() {
      for (const [ws, agent] of live) {
        ws.close(1001, "ccb link is shutting down");
        agent.kill(1000);
      }
      await Promise.all([...live.values()].map((a) => a.exited));
      wss.close();
      await gateway.close();
    },
  };
}
