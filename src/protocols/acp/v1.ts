import type { AuthMethod, ClientCapabilities, McpServer } from "@agentclientprotocol/sdk/unstable";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { z } from "zod";
import { type AgentOptions, CcbAgent } from "../../agent/agent.ts";
import type { AgentPeer } from "../../agent/peer.ts";
import type { Session } from "../../agent/session.ts";
import { sessionOptionsFrom } from "../../agent/session-options.ts";
import { CCB_VERSION } from "../../core/version.ts";
import { ENV_METHOD_ID, ENV_TEXT, LOGIN_ARGS, LOGIN_METHOD_ID, LOGIN_TEXT, legacyTerminalAuthMeta } from "./auth.ts";
import { answer } from "./errors.ts";

export { ENV_METHOD_ID, LOGIN_METHOD_ID };

const ENV_METHOD: AuthMethod = {
  id: ENV_METHOD_ID,
  ...ENV_TEXT,
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
    ...LOGIN_TEXT,
    type: "terminal",
    args: LOGIN_ARGS,
    ...(opt.legacyMeta ? { _meta: legacyTerminalAuthMeta() } : {}),
  };
  return [login, ENV_METHOD];
}

/**
 * The agent's peer over ACP v1: events as `session/update`, asks as `session/request_permission`
 * and `elicitation/create`; the client's `fs/*` and `terminal/*` where it advertised them.
 */
function v1Peer(client: acp.AgentContext, caps: ClientCapabilities): AgentPeer {
  const cancellable = (signal: AbortSignal) => ({ cancellationSignal: signal, stopWaitingOnCancel: true });
  return {
    update: (sessionId, update) => client.notify(acp.methods.client.session.update, { sessionId, update }),
    requestPermission: async (sessionId, ask, signal) =>
      (
        await client.request(
          acp.methods.client.session.requestPermission,
          { sessionId, toolCall: ask.toolCall, options: ask.options },
          cancellable(signal),
        )
      ).outcome,
    elicit:
      caps.elicitation?.form != null
        ? (sessionId, ask, signal) =>
            // a cancelled turn withdraws the question: $/cancel_request, and the call ends now
            client.request(
              acp.methods.client.elicitation.create,
              {
                sessionId,
                toolCallId: ask.toolCallId,
                mode: "form",
                message: ask.message,
                requestedSchema: ask.requestedSchema,
              },
              cancellable(signal),
            )
        : undefined,
    files: {
      read: caps.fs?.readTextFile
        ? async (sessionId, path, signal) =>
            (
              await client.request(
                acp.methods.client.fs.readTextFile,
                { sessionId, path },
                { cancellationSignal: signal },
              )
            ).content
        : undefined,
      write: caps.fs?.writeTextFile
        ? async (sessionId, path, content, signal) => {
            await client.request(
              acp.methods.client.fs.writeTextFile,
              { sessionId, path, content },
              { cancellationSignal: signal },
            );
          }
        : undefined,
    },
    terminals: caps.terminal
      ? { create: (sessionId, c, signal) => client.createTerminal({ sessionId, ...c }, { cancellationSignal: signal }) }
      : undefined,
  };
}

export interface V1Options {
  /** Told, when the client leaves, of the closing of every session (their workbenches released). */
  onClosing?: ((done: Promise<void>) => void) | undefined;
}

type OpenParams = { cwd: string; mcpServers?: McpServer[] | null; _meta?: unknown; additionalDirectories?: unknown };
const openRequest = (p: OpenParams) => ({
  cwd: p.cwd,
  mcpServers: p.mcpServers ?? [],
  options: sessionOptionsFrom(p._meta, p.additionalDirectories),
});

/** ACP v1 (SDK 2.x) over ccb's agent: today's `ccb acp`. Connect it through the router (index.ts) or in-process in tests. */
export function createV1Front(agent: CcbAgent, options: V1Options = {}): acp.AgentApp {
  const log = agent.log;
  let caps: ClientCapabilities = {};
  let offered: AuthMethod[] = authMethodsFor(caps);
  const wrap = <T>(fn: () => Promise<T> | T, sessionId?: string): Promise<T> =>
    answer(log, fn, sessionId, () => offered.map((m) => m.id));
  const announce = (s: Session) => setImmediate(() => s.announceCommands());
  const peer = (client: acp.AgentContext) => v1Peer(client, caps);

  return acp
    .agent({ name: "ccb" })
    .onConnect((conn) => {
      void conn.closed.finally(() => {
        const done = agent.closeAll();
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
        agent.requireCredentials();
        return {};
      }),
    )
    .onRequest(acp.methods.agent.logout, () =>
      wrap(() => {
        agent.logout();
        return {};
      }),
    )
    .onRequest(acp.methods.agent.session.new, ({ params, client }) =>
      wrap(async () => {
        const s = await agent.newSession(peer(client), {
          ...openRequest(params),
          initialMode: (params._meta as { permissionMode?: unknown } | null | undefined)?.permissionMode,
        });
        announce(s);
        return { sessionId: s.id, modes: s.modes(), configOptions: s.configOptions() };
      }),
    )
    .onRequest(acp.methods.agent.session.load, ({ params, client }) =>
      wrap(async () => {
        const { session: s, history } = await agent.reopen(peer(client), params.sessionId, openRequest(params));
        for (const update of history) s.notify(update);
        if (s.title) s.notify({ sessionUpdate: "session_info_update", title: s.title });
        announce(s);
        return { modes: s.modes(), configOptions: s.configOptions() };
      }, params.sessionId),
    )
    .onRequest(acp.methods.agent.session.resume, ({ params, client }) =>
      wrap(async () => {
        const { session: s } = await agent.reopen(peer(client), params.sessionId, openRequest(params));
        announce(s);
        return { modes: s.modes(), configOptions: s.configOptions() };
      }, params.sessionId),
    )
    .onRequest(acp.methods.agent.session.fork, ({ params, client }) =>
      wrap(async () => {
        const s = await agent.fork(peer(client), params.sessionId, { cwd: params.cwd, mcpServers: params.mcpServers });
        announce(s);
        return { sessionId: s.id, modes: s.modes(), configOptions: s.configOptions() };
      }, params.sessionId),
    )
    .onRequest(acp.methods.agent.session.list, ({ params }) => wrap(() => agent.list(params.cwd, params.cursor)))
    .onRequest(acp.methods.agent.session.close, ({ params }) =>
      wrap(async () => {
        await agent.close(params.sessionId);
        return {};
      }, params.sessionId),
    )
    .onRequest(acp.methods.agent.session.delete, ({ params }) =>
      wrap(async () => {
        await agent.delete(params.sessionId);
        return {};
      }, params.sessionId),
    )
    .onRequest(acp.methods.agent.session.setMode, ({ params }) =>
      wrap(() => {
        agent.active(params.sessionId).setMode(params.modeId);
        return {};
      }, params.sessionId),
    )
    .onRequest(acp.methods.agent.session.setConfigOption, ({ params }) =>
      wrap(
        () => ({
          configOptions: agent.active(params.sessionId).setConfigOption(params.configId, String(params.value)),
        }),
        params.sessionId,
      ),
    )
    .onRequest("session/set_model", z.object({ sessionId: z.string(), modelId: z.string() }), ({ params }) =>
      wrap(() => {
        agent.active(params.sessionId).setConfigOption("model", params.modelId);
        return {};
      }, params.sessionId),
    )
    .onRequest(acp.methods.agent.session.prompt, ({ params, signal }) =>
      wrap(() => agent.active(params.sessionId).prompt(params.prompt, signal), params.sessionId),
    )
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      agent.find(params.sessionId)?.cancel();
    });
}

/** The v1 front end over an agent of its own (in-process tests and the bench connect to it directly). */
export function createAcpAgent(options: AgentOptions & V1Options): acp.AgentApp {
  return createV1Front(new CcbAgent(options), options);
}
