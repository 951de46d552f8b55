import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import WebSocket from "ws";
import { z } from "zod";
import { CcbError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import { type AgentCommand, AgentProcess } from "./agent-process.ts";
import { encodeSubprotocolToken } from "./auth.ts";
import type { FrameLog } from "./frame-log.ts";
import type { PermissionMode } from "./permission.ts";
import { Relay } from "./relay.ts";

const registrationSchema = z.object({
  environment_id: z.string().min(1),
  environment_secret: z.string().min(1),
  status: z.string().optional(),
  session_id: z.string().nullish(),
});
export type Registration = z.infer<typeof registrationSchema>;

const controlSchema = z.object({ type: z.string() }).passthrough();

export interface RcsOptions {
  url: string;
  token: string;
  agent: AgentCommand;
  localMode: PermissionMode;
  maxMessageBytes: number;
  log: Logger;
  frameLog?: FrameLog | undefined;
  keepAliveMs?: number;
  backoff?: { initialMs: number; maxMs: number };
  /** Identity of this bridge across reconnects. */
  bridgeId?: string;
}

export interface RcsHandle {
  readonly registration: Registration;
  /** Resolves when the link to the RCS has ended for good (agent exit or close()). */
  readonly done: Promise<void>;
  close(): Promise<void>;
}

/** Register this machine with the Remote Control Server. Refusals become clear errors. */
export async function register(o: Pick<RcsOptions, "url" | "token" | "bridgeId">): Promise<Registration> {
  const endpoint = new URL("v1/environments/bridge", o.url.endsWith("/") ? o.url : `${o.url}/`);
  let res: Response;
  try {
    res = await fetch(endpoint, {
      method: "POST",
      headers: { authorization: `Bearer ${o.token}`, "content-type": "application/json" },
      body: JSON.stringify({
        machine_name: hostname(),
        worker_type: "acp",
        bridge_id: o.bridgeId ?? randomUUID(),
        max_sessions: 1,
        capabilities: { acp: { transport: "websocket", jsonrpc: true } },
      }),
    });
  } catch (err) {
    throw new CcbError(
      "UNSUPPORTED",
      `Cannot reach the remote control server at ${endpoint.origin}: ${(err as Error).message}`,
      {
        hint: "Check ACP_RCS_URL and the network.",
      },
    );
  }
  const text = await res.text();
  if (!res.ok) {
    const hint =
      res.status === 401 || res.status === 403
        ? "The server refused ACP_RCS_TOKEN: check that it is current and allowed to register bridges."
        : "Check ACP_RCS_URL; the server answered with an error.";
    throw new CcbError(
      "PERMISSION_DENIED",
      `The remote control server refused the registration (HTTP ${res.status}): ${text.slice(0, 200)}`,
      { hint },
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CcbError("INTERNAL", "The remote control server answered the registration with invalid JSON.");
  }
  const r = registrationSchema.safeParse(parsed);
  if (!r.success)
    throw new CcbError("INTERNAL", `Unexpected registration answer: ${r.error.issues[0]?.message ?? "invalid"}`);
  return r.data;
}

/**
 * Keep one agent connected to the RCS: register once, connect the WebSocket with the
 * `rcs.auth.*` subprotocol, identify, relay both ways with keep-alives, and reconnect with
 * exponential backoff and jitter, reusing the registration (re-registering only when the server
 * says the environment is gone).
 */
export async function connectRcs(o: RcsOptions): Promise<RcsHandle> {
  const bridgeId = o.bridgeId ?? randomUUID();
  let registration = await register({ url: o.url, token: o.token, bridgeId });
  o.log.info(`registered with the remote control server as environment ${registration.environment_id}`);
  const agent = new AgentProcess(o.agent, o.log);
  const relay = new Relay({
    agent,
    log: o.log,
    localMode: o.localMode,
    maxMessageBytes: o.maxMessageBytes,
    frameLog: o.frameLog,
    connectionId: "rcs",
  });
  const keepAliveMs = o.keepAliveMs ?? 20_000;
  const backoff = o.backoff ?? { initialMs: 1000, maxMs: 30_000 };
  let attempt = 0;
  let closed = false;
  let ws: WebSocket | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));

  const wsUrl = new URL("acp/ws", o.url.endsWith("/") ? o.url : `${o.url}/`);
  wsUrl.protocol = wsUrl.protocol === "https:" ? "wss:" : "ws:";

  const scheduleReconnect = (why: string) => {
    if (closed) return;
    const base = Math.min(backoff.maxMs, backoff.initialMs * 2 ** attempt);
    const delay = Math.round(base / 2 + Math.random() * (base / 2));
    attempt++;
    o.log.warn(`remote control connection lost (${why}); reconnecting in ${delay} ms`);
    retryTimer = setTimeout(connect, delay);
  };

  const connect = () => {
    if (closed) return;
    const socket = new WebSocket(wsUrl, [encodeSubprotocolToken(registration.environment_secret)], {
      maxPayload: o.maxMessageBytes,
      perMessageDeflate: false,
    });
    ws = socket;
    let keepAlive: NodeJS.Timeout | undefined;
    let identified = false;
    socket.on("open", () => {
      socket.send(JSON.stringify({ type: "identify", agent_id: registration.environment_id }));
    });
    socket.on("unexpected-response", (_req, res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      if (status === 404 || status === 410) {
        o.log.warn("the remote control server no longer knows this environment; registering again");
        void register({ url: o.url, token: o.token, bridgeId })
          .then((r) => {
            registration = r;
            scheduleReconnect("environment re-registered");
          })
          .catch((err: Error) => {
            o.log.error(err.message);
            scheduleReconnect("registration failed");
          });
        socket.removeAllListeners("close");
        return;
      }
      scheduleReconnect(`HTTP ${status}`);
      socket.removeAllListeners("close");
    });
    socket.on("message", (data, isBinary) => {
      if (isBinary) return;
      const text = data.toString();
      let msg: unknown;
      try {
        msg = JSON.parse(text);
      } catch {
        o.log.warn("the remote control server sent invalid JSON (ignored)");
        return;
      }
      if (typeof msg === "object" && msg !== null && (msg as { jsonrpc?: unknown }).jsonrpc === "2.0") {
        relay.fromClient(text);
        return;
      }
      const control = controlSchema.safeParse(msg);
      if (!control.success) return;
      if (control.data.type === "identified") {
        identified = true;
        attempt = 0;
        o.log.info("identified with the remote control server");
        relay.setSink({
          send: (t, cb) => socket.send(t, cb),
          get bufferedAmount() {
            return socket.bufferedAmount;
          },
          pause: () => socket.pause(),
          resume: () => socket.resume(),
        });
        keepAlive = setInterval(() => {
          if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "keep_alive" }));
        }, keepAliveMs);
      } else if (control.data.type === "error") {
        o.log.error(`remote control server: ${String(control.data.message ?? "error")}`);
      }
    });
    socket.on("error", (err) => o.log.debug(`rcs socket: ${err.message}`));
    socket.on("close", (code) => {
      if (keepAlive) clearInterval(keepAlive);
      relay.setSink(undefined);
      scheduleReconnect(identified ? `closed ${code}` : `closed ${code} before identify`);
    });
  };

  void agent.exited.then(({ code, signal }) => {
    o.log.error(`the agent exited (${signal ?? `code ${code}`}); closing the remote control link`);
    closed = true;
    if (retryTimer) clearTimeout(retryTimer);
    ws?.close(1000, "agent exited");
    resolveDone();
  });

  connect();
  return {
    get registration() {
      return registration;
    },
    done,
    async close() {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      ws?.close(1001, "ccb link is shutting down");
      agent.kill(1000);
      await agent.exited;
      resolveDone();
    },
  };
}
