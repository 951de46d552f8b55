import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import { type WebSocket, WebSocketServer } from "ws";
import type { Logger } from "../core/log.ts";
import { CCB_VERSION } from "../core/version.ts";
import { Gateway } from "../net/gateway.ts";
import { hostForUrl } from "../net/loopback.ts";
import { AcpEndpoint } from "./acp-endpoint.ts";
import { AgentBridge } from "./agent-bridge.ts";
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
  /** This link's name in the affinity cookie (default: random per process). */
  instance?: string;
  /** How long a Streamable HTTP connection without stream or request lives on (default 10 minutes). */
  httpIdleMs?: number;
}

export interface LinkServer {
  readonly server: Server;
  readonly gateway: Gateway;
  readonly url: string;
  /** Live agents (one per connection that has sent its first message). */
  connections(): number;
  close(): Promise<void>;
}

/**
 * HTTP(S) gateway with `GET /health`, `/acp` on ACP's remote transport (Streamable HTTP and
 * WebSocket, src/link/acp-endpoint.ts) and `/ws`, the plain WebSocket relay of earlier versions
 * (any JSON-RPC in any order, relay.ts). Every connection gets its own agent process; Host, Origin
 * and token are checked before any handler or upgrade runs.
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
  const bridges = new Set<AgentBridge>();
  const endpoint = new AcpEndpoint({
    bridge: () =>
      new AgentBridge({
        agent: o.agent(o.localMode),
        log: o.log,
        localMode: o.localMode,
        maxMessageBytes: o.maxMessageBytes,
        frameLog: o.frameLog,
        onStart: (b) => bridges.add(b),
        onStop: (b) => bridges.delete(b),
      }),
    maxMessageBytes: o.maxMessageBytes,
    instance: o.instance ?? randomBytes(8).toString("hex"),
    secure: Boolean(o.tls),
    idleMs: o.httpIdleMs ?? 10 * 60_000,
    log: o.log,
  });

  const policy = linkPolicy({ token: o.token, allowOrigins: o.allowOrigins, maxMessageBytes: o.maxMessageBytes });
  const gateway = new Gateway({
    host: o.host,
    port: o.port,
    tls: o.tls ? { cert: o.tls.cert, key: o.tls.key } : undefined,
    log: o.log,
    fallback: {
      status: 404,
      text: "Not found. Endpoints: GET /health, /acp (ACP over Streamable HTTP or WebSocket), WebSocket /ws.",
      policy: { ...policy, name: "link-other", auth: [] },
    },
  });
  gateway.addRoute(
    "GET",
    "/health",
    (_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
      res.end(
        JSON.stringify({ ok: true, name: "ccb link", version: CCB_VERSION, connections: live.size + bridges.size }),
      );
    },
    { name: "link-health", origin: { kind: "same" }, auth: [] },
  );
  gateway.addRoute("*", "/acp", (req, res) => endpoint.handleHttp(req, res), {
    ...policy,
    name: "link-http",
    maxBodyBytes: o.maxMessageBytes,
    style: "jsonrpc",
  });
  gateway.addUpgrade("/acp", (req, socket, head) => endpoint.handleUpgrade(req, socket, head), policy);
  gateway.addRoute(
    "*",
    "/ws",
    (_req, res) => {
      res.writeHead(426, { "content-type": "text/plain", upgrade: "websocket" });
      res.end("This endpoint speaks ACP over WebSocket only; /acp speaks Streamable HTTP too.\n");
    },
    { ...policy, name: "link-plain", auth: [], inBand: "none needed: it only answers 426 (use the WebSocket)" },
  );
  gateway.addUpgrade("/ws", (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => accept(ws)), policy);
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
    connections: () => live.size + bridges.size,
    async close() {
      for (const [ws, agent] of live) {
        ws.close(1001, "ccb link is shutting down");
        agent.kill(1000);
      }
      const gone = [...bridges].map((b) => b.done);
      await Promise.all([...live.values()].map((a) => a.exited));
      await endpoint.close();
      await Promise.all(gone);
      wss.close();
      await gateway.close();
    },
  };
}
