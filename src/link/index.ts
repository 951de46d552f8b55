import { join } from "node:path";
import { CcbError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import { checkExposure } from "../net/exposure.ts";
import { stateDir } from "../util/paths.ts";
import { selfCommand } from "../util/self.ts";
import type { AgentCommand } from "./agent-process.ts";
import { resolveToken } from "./auth.ts";
import { FrameLog } from "./frame-log.ts";
import { localPermissionMode, type PermissionMode } from "./permission.ts";
import { connectRcs, type RcsHandle } from "./rcs.ts";
import { type LinkServer, startLinkServer } from "./server.ts";
import { loadTls } from "./tls.ts";

export interface LinkOptions {
  host: string;
  port: number;
  https: boolean;
  cert?: string | undefined;
  key?: string | undefined;
  noAuth: boolean;
  debug: boolean;
  permissionMode?: string | undefined;
  allowOrigins: string[];
  /** The agent's argv; empty = `ccb acp` itself. */
  agentArgv: string[];
  maxMessageBytes?: number;
  log: Logger;
  /** Where to tell the person things (token, URL): stderr. */
  announce: (line: string) => void;
  env?: NodeJS.ProcessEnv;
}

export interface LinkHandle {
  server: LinkServer;
  rcs: RcsHandle | undefined;
  token: string | undefined;
  close(): Promise<void>;
}

export const DEFAULT_MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

/** CCB_LINK_INSTANCE: this link's name in the affinity cookie, for a load balancer's sticky routing. */
function linkInstance(value: string): string {
  if (/^[A-Za-z0-9._-]{1,64}$/.test(value)) return value;
  throw new CcbError("CONFIG_INVALID", `CCB_LINK_INSTANCE "${value.slice(0, 80)}" is not a valid instance name.`, {
    hint: "Use 1-64 letters, digits, dots, dashes or underscores (it goes into a cookie).",
  });
}

/** `ccb link`: the WebSocket server, plus the remote control upstream when ACP_RCS_URL is set. */
export async function startLink(o: LinkOptions): Promise<LinkHandle> {
  const env = o.env ?? process.env;
  checkExposure({ listener: "link", host: o.host, token: !o.noAuth });
  const localMode: PermissionMode = localPermissionMode(o.permissionMode, env);
  const maxMessageBytes = o.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const agentFor = (mode: PermissionMode): AgentCommand => {
    const base =
      o.agentArgv.length > 0 ? { command: o.agentArgv[0] as string, args: o.agentArgv.slice(1) } : selfCommand(["acp"]);
    // The local default reaches the agent through its environment; per-session choices through _meta.
    return { ...base, env: { ACP_PERMISSION_MODE: mode } };
  };
  let frameLog: FrameLog | undefined;
  if (o.debug) {
    frameLog = new FrameLog(join(stateDir(env), `link-frames-${process.pid}.log`));
    o.announce(`debug: frames are logged (tokens redacted) to ${frameLog.path}`);
  }

  let token: string | undefined;
  if (!o.noAuth) {
    const t = resolveToken(env);
    token = t.token;
    if (t.generated) {
      o.announce(`token: ${t.token}`);
      o.announce(`(shown once; also saved with mode 0600 in ${t.file}. Set ACP_AUTH_TOKEN to choose your own.)`);
    }
  }
  const tls = o.https || o.cert || o.key ? await loadTls({ cert: o.cert, key: o.key, host: o.host, env }) : undefined;
  if (tls) o.announce(`TLS certificate: ${tls.certPath} (${tls.source})`);

  const server = await startLinkServer({
    host: o.host,
    port: o.port,
    token,
    allowOrigins: o.allowOrigins,
    tls,
    agent: agentFor,
    localMode,
    maxMessageBytes,
    log: o.log,
    frameLog,
    ...(env.CCB_LINK_INSTANCE ? { instance: linkInstance(env.CCB_LINK_INSTANCE) } : {}),
    ...(env.CCB_LINK_HTTP_IDLE_MS ? { httpIdleMs: Number(env.CCB_LINK_HTTP_IDLE_MS) } : {}),
  });
  const httpUrl = server.url.replace(/^ws/, "http");
  o.announce(
    `listening on ${server.url} (WebSocket) and ${httpUrl} (Streamable HTTP); health: ${httpUrl.replace(/\/acp$/, "/health")}; permission mode ${localMode}`,
  );

  let rcs: RcsHandle | undefined;
  if (env.ACP_RCS_URL) {
    if (!env.ACP_RCS_TOKEN)
      throw new CcbError("CONFIG_INVALID", "ACP_RCS_URL is set but ACP_RCS_TOKEN is not.", {
        hint: "Set both to register with a remote control server.",
      });
    rcs = await connectRcs({
      url: env.ACP_RCS_URL,
      token: env.ACP_RCS_TOKEN,
      agent: agentFor(localMode),
      localMode,
      maxMessageBytes,
      log: o.log.child("rcs"),
      frameLog,
      ...(env.CCB_RCS_KEEPALIVE_MS ? { keepAliveMs: Number(env.CCB_RCS_KEEPALIVE_MS) } : {}),
      ...(env.CCB_RCS_BACKOFF_MS
        ? { backoff: { initialMs: Number(env.CCB_RCS_BACKOFF_MS), maxMs: Number(env.CCB_RCS_BACKOFF_MS) * 8 } }
        : {}),
    });
  }

  return {
    server,
    rcs,
    token,
    async close() {
      await Promise.all([server.close(), rcs?.close()]);
    },
  };
}
