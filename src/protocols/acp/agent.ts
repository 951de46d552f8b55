import { randomUUID } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { isAbsolute } from "node:path";
import type { AuthMethod, ClientCapabilities, McpServer } from "@agentclientprotocol/sdk/unstable";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { z } from "zod";
import { CredentialStore } from "../../core/credentials.ts";
import { CcbError, isCcbError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import { CCB_VERSION } from "../../core/version.ts";
import { JsonRpcCode } from "../../util/jsonrpc.ts";
import { selfCommand } from "../../util/self.ts";
import { replayUpdates } from "../../agent/history.ts";
import { ModelError, type ModelErrorKind, missingCredentials } from "../../agent/model-error.ts";
import { type SandboxFacts, sandboxFacts } from "../../agent/modes.ts";
import type { Session } from "../../agent/session.ts";
import { type SessionOptions, sessionOptionsFrom } from "../../agent/session-options.ts";
import { type AgentEnv, loadModelSettings } from "../../agent/settings.ts";
import { SessionStore } from "../../agent/store.ts";
import type { AcpWorkbenchOptions } from "../../agent/workbench.ts";

export interface AcpAgentOptions {
  env: AgentEnv;
  log: Logger;
  facts?: SandboxFacts;
  /** How sessions get a live editor (default: attach to a workbench only, never start one). */
  workbench?: AcpWorkbenchOptions | undefined;
  /** Told, when the client leaves, of the closing of every session (their workbenches released). */
  onClosing?: ((done: Promise<void>) => void) | undefined;
}

const PAGE_SIZE = 50;

const MODEL_ERROR_CODES: Record<ModelErrorKind, string> = {
  auth: "AUTH_REQUIRED",
  unavailable: "MODEL_UNAVAILABLE",
  rejected: "MODEL_REJECTED",
};

/** Sign-in in a terminal the client opens: it runs this agent's own program with these args (`ccb acp --login`). */
export const LOGIN_METHOD_ID = "ccb-login";
/** The key in the agent's environment (the draft "env_var" type, for clients that show a key field). */
export const ENV_METHOD_ID = "anthropic-api-key";

const ENV_METHOD: AuthMethod = {
  id: ENV_METHOD_ID,
  name: "Anthropic API key",
  description:
    'Set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN; ANTHROPIC_BASE_URL for another endpoint) in the agent\'s environment, or in the "env" object of ~/.config/ccb/settings.json, then restart the agent.',
  // the "env_var" auth method fields (type, vars, link); the SDK's 2.4 types do not name them
  ...{
    type: "env_var",
    vars: [{ name: "ANTHROPIC_API_KEY", label: "Anthropic API key", secret: true, optional: false }],
    link: "https://console.anthropic.com/settings/keys",
  },
};

/** Whether the client runs terminal auth methods: v1's `auth.terminal`, or the older `_meta["terminal-auth"]`. */
export function terminalAuthOptIn(caps: ClientCapabilities): { terminal: boolean; legacyMeta: boolean } {
  const legacyMeta = (caps._meta as Record<string, unknown> | null | undefined)?.["terminal-auth"] === true;
  return { terminal: caps.auth?.terminal === true || legacyMeta, legacyMeta };
}

/**
 * The auth methods offered to a client: the terminal sign-in only to one that opted in (with the
 * older `_meta["terminal-auth"]` command for clients that asked that way), then the env_var method.
 */
export function authMethodsFor(caps: ClientCapabilities): AuthMethod[] {
  const opt = terminalAuthOptIn(caps);
  if (!opt.terminal) return [ENV_METHOD];
  const login: AuthMethod = {
    id: LOGIN_METHOD_ID,
    name: "Sign in with an Anthropic API key",
    description:
      "Opens a terminal that asks for your Anthropic API key (input hidden), checks it with the API and stores it for ccb, readable only by you. ANTHROPIC_API_KEY in the environment still wins.",
    type: "terminal",
    args: ["--login"],
    ...(opt.legacyMeta
      ? { _meta: { "terminal-auth": { ...selfCommand(["acp", "--login"]), label: "ccb sign-in" } } }
      : {}),
  };
  return [login, ENV_METHOD];
}

const loadSession = () => import("../../agent/session.ts");
const newSessionId = () => `ccb-${randomUUID()}`;

/** CcbError codes -> JSON-RPC errors, in one place. AUTH_REQUIRED names the auth methods offered to this client. */
export function toRequestError(err: unknown, sessionId?: string, authMethods: AuthMethod[] = [ENV_METHOD]): Error {
  if (err instanceof acp.RequestError) return err;
  if (err instanceof ModelError) {
    const data = { code: MODEL_ERROR_CODES[err.kind], ...(err.status !== undefined ? { status: err.status } : {}) };
    if (err.kind === "auth")
      return acp.RequestError.authRequired({ ...data, authMethods: authMethods.map((m) => m.id) }, err.message);
    return acp.RequestError.internalError(data, err.message);
  }
  if (isCcbError(err)) {
    switch (err.code) {
      case "NOT_FOUND":
        return sessionId ? acp.RequestError.sessionNotFound(sessionId) : acp.RequestError.resourceNotFound();
      case "INVALID_ARGUMENT":
      case "INVALID_PATH":
      case "PATH_TOO_LONG":
      case "PATH_OUTSIDE_WORKSPACE":
      case "NOT_DIRECTORY":
        return acp.RequestError.invalidParams({ code: err.code }, err.message);
      case "PERMISSION_DENIED":
        return new acp.RequestError(JsonRpcCode.InternalError, err.message, { code: err.code });
      default:
        return acp.RequestError.internalError({ code: err.code }, err.message);
    }
  }
  return acp.RequestError.internalError(undefined, (err as Error)?.message ?? String(err));
}

/** An API key or auth token is configured (environment or settings files of this project). */
function hasCredentials(env: AgentEnv, cwd: string): boolean {
  const settings = loadModelSettings(env, cwd);
  return Boolean(settings.apiKey ?? settings.authToken);
}

function checkCwd(cwd: string): string {
  if (!isAbsolute(cwd)) throw new CcbError("INVALID_ARGUMENT", `cwd must be an absolute path: ${cwd}`);
  if (!existsSync(cwd) || !statSync(cwd).isDirectory())
    throw new CcbError("INVALID_ARGUMENT", `cwd is not an existing directory: ${cwd}`);
  return cwd;
}

/** The ACP agent app (SDK 2.x). Connect it to stdio with `startAcpAgent`, or in-process in tests. */
export function createAcpAgent(options: AcpAgentOptions): acp.AgentApp {
  const log = options.log;
  const facts = options.facts ?? sandboxFacts();
  const store = new SessionStore(options.env.dataDir);
  const sessions = new Map<string, Session>();
  let caps: ClientCapabilities = {};
  let offered: AuthMethod[] = authMethodsFor(caps);

  const wrap = async <T>(fn: () => Promise<T> | T, sessionId?: string): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      // expected failures (typed, with a message for the user) are not logged as crashes
      if (!isCcbError(err) && !(err instanceof ModelError) && !(err instanceof acp.RequestError))
        log.error(`request failed: ${(err as Error)?.stack ?? String(err)}`);
      throw toRequestError(err, sessionId, offered);
    }
  };
  const active = (sessionId: string): Session => {
    const s = sessions.get(sessionId);
    if (!s) throw new CcbError("NOT_FOUND", `Session not found: ${sessionId}`);
    return s;
  };
  const open = async (
    client: acp.AgentContext,
    id: string,
    cwd: string,
    mcpServers: McpServer[],
    fromStore: boolean,
    sessionOptions: SessionOptions = {},
  ) => {
    const previous = sessions.get(id);
    if (previous) {
      sessions.delete(id);
      await previous.close();
    }
    const stored = fromStore ? store.read(id) : undefined;
    const { Session } = await loadSession(); // loaded on first use: initialize stays fast
    const s = await Session.open(
      { client, caps, env: options.env, store, log, facts, workbench: options.workbench },
      {
        id,
        cwd,
        mcpServers,
        options: sessionOptions,
        writer: fromStore ? store.writer(id) : store.create(id, cwd),
        ...(stored ? { records: stored.records, title: stored.title } : {}),
      },
    );
    sessions.set(id, s);
    return { s, stored };
  };
  /** session/load and session/resume: a stored session, opened again with the client's cwd, MCP servers and options. */
  const reopen = (
    client: acp.AgentContext,
    params: {
      sessionId: string;
      cwd: string;
      mcpServers?: McpServer[] | null;
      _meta?: unknown;
      additionalDirectories?: unknown;
    },
  ) => {
    const cwd = checkCwd(params.cwd);
    if (!store.exists(params.sessionId)) throw new CcbError("NOT_FOUND", `Session not found: ${params.sessionId}`);
    return open(
      client,
      params.sessionId,
      cwd,
      params.mcpServers ?? [],
      true,
      sessionOptionsFrom(params._meta, params.additionalDirectories),
    );
  };
  const announce = (s: Session) => setImmediate(() => s.announceCommands());

  return acp
    .agent({ name: "ccb" })
    .onConnect((conn) => {
      void conn.closed.finally(() => {
        const all = [...sessions.values()];
        sessions.clear();
        const done = Promise.all(all.map((s) => s.close().catch(() => undefined))).then(() => undefined);
        options.onClosing?.(done);
        return done;
      });
    })
    .onRequest(acp.methods.agent.initialize, ({ params }) => {
      caps = params.clientCapabilities ?? {};
      offered = authMethodsFor(caps);
      return {
        protocolVersion: acp.PROTOCOL_VERSION,
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { image: true, embeddedContext: true },
          mcpCapabilities: { http: true, sse: true },
          sessionCapabilities: { list: {}, resume: {}, close: {}, fork: {}, delete: {}, additionalDirectories: {} },
          auth: { logout: {} },
        },
        agentInfo: { name: "ccb", title: "ccb", version: CCB_VERSION },
        authMethods: offered,
      };
    })
    .onRequest(acp.methods.agent.authenticate, ({ params }) =>
      wrap(() => {
        if (!offered.some((m) => m.id === params.methodId)) {
          throw acp.RequestError.invalidParams(
            { methodId: params.methodId, authMethods: offered.map((m) => m.id) },
            `Unknown auth method "${params.methodId}"; this agent offers ${offered.map((m) => `"${m.id}"`).join(", ")}.`,
          );
        }
        // the credentials come from the environment the client started the agent with, or from a
        // sign-in (a client should not send the terminal method here, but asking is harmless)
        if (!hasCredentials(options.env, process.cwd())) throw missingCredentials();
        return {};
      }),
    )
    .onRequest(acp.methods.agent.logout, () =>
      wrap(async () => {
        if (options.env.configDir) new CredentialStore(options.env.configDir).remove();
        // open sessions stop using the stored key (a key from the environment stays theirs)
        for (const s of sessions.values()) s.signedOut();
        log.info("logout: the stored sign-in key was removed");
        return {};
      }),
    )
    .onRequest(acp.methods.agent.session.new, ({ params, client }) =>
      wrap(async () => {
        const cwd = checkCwd(params.cwd);
        if (!hasCredentials(options.env, cwd)) throw missingCredentials();
        const { s } = await open(
          client,
          newSessionId(),
          cwd,
          params.mcpServers ?? [],
          false,
          sessionOptionsFrom(params._meta, params.additionalDirectories),
        );
        s.requestInitialMode((params._meta as { permissionMode?: unknown } | null | undefined)?.permissionMode);
        announce(s);
        return { sessionId: s.id, modes: s.modes(), configOptions: s.configOptions() };
      }),
    )
    .onRequest(acp.methods.agent.session.load, ({ params, client }) =>
      wrap(async () => {
        const { s, stored } = await reopen(client, params);
        for (const update of replayUpdates(stored?.records ?? [])) s.notify(update);
        if (s.title) s.notify({ sessionUpdate: "session_info_update", title: s.title });
        announce(s);
        return { modes: s.modes(), configOptions: s.configOptions() };
      }, params.sessionId),
    )
    .onRequest(acp.methods.agent.session.resume, ({ params, client }) =>
      wrap(async () => {
        const { s } = await reopen(client, params);
        announce(s);
        return { modes: s.modes(), configOptions: s.configOptions() };
      }, params.sessionId),
    )
    .onRequest(acp.methods.agent.session.fork, ({ params, client }) =>
      wrap(async () => {
        const cwd = checkCwd(params.cwd);
        if (!store.exists(params.sessionId)) throw new CcbError("NOT_FOUND", `Session not found: ${params.sessionId}`);
        const id = newSessionId();
        store.fork(params.sessionId, id, cwd).append({
          t: "title",
          title: `Fork of ${store.read(params.sessionId).title ?? params.sessionId}`.slice(0, 80),
        });
        const { s } = await open(client, id, cwd, params.mcpServers ?? [], true);
        announce(s);
        return { sessionId: id, modes: s.modes(), configOptions: s.configOptions() };
      }, params.sessionId),
    )
    .onRequest(acp.methods.agent.session.list, ({ params }) =>
      wrap(() => {
        const all = store.list(params.cwd ?? undefined);
        const offset = params.cursor ? Number(Buffer.from(params.cursor, "base64url").toString("utf8")) : 0;
        if (!Number.isInteger(offset) || offset < 0) throw new CcbError("INVALID_ARGUMENT", "Invalid cursor.");
        const page = all.slice(offset, offset + PAGE_SIZE);
        const next =
          offset + PAGE_SIZE < all.length ? Buffer.from(String(offset + PAGE_SIZE)).toString("base64url") : undefined;
        return {
          sessions: page.map((p) => ({
            sessionId: p.sessionId,
            cwd: p.cwd,
            title: p.title ?? null,
            updatedAt: p.updatedAt,
          })),
          ...(next ? { nextCursor: next } : {}),
        };
      }),
    )
    .onRequest(acp.methods.agent.session.close, ({ params }) =>
      wrap(async () => {
        const s = active(params.sessionId);
        sessions.delete(params.sessionId);
        await s.close();
        return {};
      }, params.sessionId),
    )
    .onRequest(acp.methods.agent.session.delete, ({ params }) =>
      wrap(async () => {
        const s = sessions.get(params.sessionId);
        if (s) {
          sessions.delete(params.sessionId);
          await s.close();
        }
        if (!store.delete(params.sessionId) && !s)
          throw new CcbError("NOT_FOUND", `Session not found: ${params.sessionId}`);
        return {};
      }, params.sessionId),
    )
    .onRequest(acp.methods.agent.session.setMode, ({ params }) =>
      wrap(() => {
        active(params.sessionId).setMode(params.modeId);
        return {};
      }, params.sessionId),
    )
    .onRequest(acp.methods.agent.session.setConfigOption, ({ params }) =>
      wrap(
        () => ({ configOptions: active(params.sessionId).setConfigOption(params.configId, String(params.value)) }),
        params.sessionId,
      ),
    )
    .onRequest("session/set_model", z.object({ sessionId: z.string(), modelId: z.string() }), ({ params }) =>
      wrap(() => {
        active(params.sessionId).setConfigOption("model", params.modelId);
        return {};
      }, params.sessionId),
    )
    .onRequest(acp.methods.agent.session.prompt, ({ params, signal }) =>
      wrap(() => active(params.sessionId).prompt(params.prompt, signal), params.sessionId),
    )
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      sessions.get(params.sessionId)?.cancel();
    });
}
