import { randomUUID } from "node:crypto";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import type * as v1 from "@agentclientprotocol/sdk/unstable";
import type { CcbAgent, OpenRequest } from "../../agent/agent.ts";
import type { AgentPeer, ElicitationAnswer } from "../../agent/peer.ts";
import type { Session } from "../../agent/session.ts";
import { sessionOptionsFrom } from "../../agent/session-options.ts";
import { CcbError } from "../../core/errors.ts";
import { CCB_VERSION } from "../../core/version.ts";
import { ENV_METHOD_ID, ENV_TEXT, LOGIN_ARGS, LOGIN_METHOD_ID, LOGIN_TEXT } from "./auth.ts";
import { answer, toRequestError } from "./errors.ts";
import { configOptions, toolCall, V2Translator } from "./v2-updates.ts";

/** What ccb serves to a v2 client (`initialize`'s `capabilities`). */
const CAPABILITIES: acp.AgentCapabilities = {
  session: {
    prompt: { image: {}, embeddedContext: {} },
    mcp: { stdio: {}, http: {} },
    delete: {},
    additionalDirectories: {},
  },
  auth: {},
};

/** The auth methods for a v2 client: the terminal sign-in when it runs terminal methods, and the agent's own check of a configured key. */
export function v2AuthMethods(caps: acp.ClientCapabilities): acp.AuthMethod[] {
  const key: acp.AuthMethod = { type: "agent", methodId: ENV_METHOD_ID, ...ENV_TEXT };
  if (caps.auth?.terminal == null) return [key];
  return [{ type: "terminal", methodId: LOGIN_METHOD_ID, ...LOGIN_TEXT, args: LOGIN_ARGS }, key];
}

/** v2 MCP servers (tagged) in the agent's shape. */
function mcpServers(list: acp.McpServer[] | undefined): v1.McpServer[] {
  acp.assertSupportedMcpServers(list, CAPABILITIES.session?.mcp);
  return (list ?? []).map((s) => {
    if (s.type === "http") {
      const h = s as acp.McpServer & { type: "http"; name: string; url: string; headers?: v1.HttpHeader[] };
      return { type: "http", name: h.name, url: h.url, headers: h.headers ?? [] };
    }
    const d = s as acp.McpServer & { name: string; command: string; args?: string[]; env?: v1.EnvVariable[] };
    return { name: d.name, command: d.command, args: d.args ?? [], env: d.env ?? [] };
  });
}

/** One open session's v2 state: its translator, and its foreground work (prompts in flight). */
interface Live {
  translator: V2Translator;
  inFlight: number;
}

export interface V2Options {
  onClosing?: ((done: Promise<void>) => void) | undefined;
}

/**
 * ACP v2 (the SDK's experimental v2 API) over ccb's agent. `session/prompt` only acknowledges (with
 * the id of the user message it echoes); the turn reports through `session/update` and ends with an
 * idle `state_update` carrying its stop reason. Tool calls are upserts. v2 has no client
 * filesystem or terminals: the agent's tools run on ccb's own confined core and PTYs.
 */
export function createV2Front(agent: CcbAgent, options: V2Options = {}): acp.AgentApp {
  const log = agent.log;
  let caps: acp.ClientCapabilities = {};
  let offered: acp.AuthMethod[] = v2AuthMethods(caps);
  const live = new Map<string, Live>();
  const wrap = <T>(fn: () => Promise<T> | T, sessionId?: string): Promise<T> =>
    answer(log, fn, sessionId, () => offered.map((m) => m.methodId));

  const send = (client: acp.AgentContext, sessionId: string, update: acp.SessionUpdate) =>
    client
      .notify(acp.methods.client.session.update, { sessionId, update })
      .catch((err: Error) => log.debug(`update not sent: ${err.message}`));
  const state = (client: acp.AgentContext, sessionId: string, update: acp.StateUpdate) =>
    send(client, sessionId, { sessionUpdate: "state_update", ...update } as acp.SessionUpdate);

  /** A session's v2 state, made on its first event or request. */
  const liveOf = (sessionId: string, cwd: string): Live => {
    let l = live.get(sessionId);
    if (!l) {
      l = { translator: new V2Translator(cwd), inFlight: 0 };
      live.set(sessionId, l);
    }
    return l;
  };

  const peer = (client: acp.AgentContext, cwd: string): AgentPeer => {
    const cancellable = (signal: AbortSignal) => ({ cancellationSignal: signal, stopWaitingOnCancel: true });
    return {
      update: async (id, update) => {
        for (const u of liveOf(id, cwd).translator.translate(update)) await send(client, id, u);
      },
      requestPermission: async (id, ask, signal) => {
        const blocked = (live.get(id)?.inFlight ?? 0) > 0;
        if (blocked) await state(client, id, { state: "requires_action" });
        try {
          const r = await client.request(
            acp.methods.client.session.requestPermission,
            {
              sessionId: id,
              title: ask.toolCall.title ?? "Allow this tool call?",
              subject: { type: "tool_call", toolCall: toolCall(ask.toolCall, cwd) },
              options: ask.options,
            },
            cancellable(signal),
          );
          return r.outcome.outcome === "selected" && "optionId" in r.outcome
            ? { outcome: "selected", optionId: String(r.outcome.optionId) }
            : { outcome: "cancelled" };
        } finally {
          if (blocked && !signal.aborted) await state(client, id, { state: "running" });
        }
      },
      elicit:
        caps.elicitation?.form != null
          ? async (id, ask, signal) =>
              (await client.request(
                acp.methods.client.elicitation.create,
                {
                  mode: "form",
                  sessionId: id,
                  toolCallId: ask.toolCallId,
                  message: ask.message,
                  requestedSchema: ask.requestedSchema as acp.CreateElicitationRequest extends infer R
                    ? R extends { requestedSchema: infer S }
                      ? S
                      : never
                    : never,
                },
                cancellable(signal),
              )) as ElicitationAnswer
          : undefined,
    };
  };

  const openRequest = (p: {
    cwd: string;
    mcpServers?: acp.McpServer[];
    additionalDirectories?: string[];
    _meta?: unknown;
  }): OpenRequest => ({
    cwd: p.cwd,
    mcpServers: mcpServers(p.mcpServers),
    options: sessionOptionsFrom(p._meta, p.additionalDirectories),
  });

  const commands = (s: Session): acp.AvailableCommand[] => {
    const [u] = new V2Translator(s.cwd).translate({
      sessionUpdate: "available_commands_update",
      availableCommands: s.availableCommands(),
    });
    return (u as { availableCommands: acp.AvailableCommand[] } | undefined)?.availableCommands ?? [];
  };

  /** Run a prompt in the background: running → the turn's updates → idle with its stop reason. */
  const run = (client: acp.AgentContext, s: Session, l: Live, prompt: acp.ContentBlock[]) => {
    const first = l.inFlight === 0;
    l.inFlight++;
    const started = first ? state(client, s.id, { state: "running" }) : Promise.resolve();
    void started
      .then(() => s.prompt(prompt as v1.ContentBlock[], new AbortController().signal))
      .then(
        (r): Record<string, unknown> => ({ stopReason: r.stopReason }),
        (err: unknown) => {
          const e = toRequestError(
            err,
            s.id,
            offered.map((m) => m.methodId),
          ) as acp.RequestError;
          return { stopReason: "error", error: { code: e.code, message: e.message } };
        },
      )
      .then(async (end) => {
        l.inFlight--;
        l.translator.breakMessages();
        if (l.inFlight === 0) await state(client, s.id, { state: "idle", ...end } as acp.StateUpdate);
      });
  };

  return acp
    .agent({ name: "ccb" })
    .onConnect((conn) => {
      void conn.closed.finally(() => {
        live.clear();
        const done = agent.closeAll();
        options.onClosing?.(done);
        return done;
      });
    })
    .onRequest(acp.methods.agent.initialize, ({ params }) => {
      caps = params.capabilities ?? {};
      offered = v2AuthMethods(caps);
      return {
        protocolVersion: acp.PROTOCOL_VERSION,
        info: { name: "ccb", title: "ccb", version: CCB_VERSION },
        capabilities: CAPABILITIES,
        authMethods: offered,
      };
    })
    .onRequest(acp.methods.agent.auth.login, ({ params }) =>
      wrap(() => {
        const method = offered.find((m) => m.methodId === params.methodId);
        if (!method || method.type === "terminal") {
          throw acp.RequestError.invalidParams(
            {
              methodId: params.methodId,
              authMethods: offered.filter((m) => m.type !== "terminal").map((m) => m.methodId),
            },
            method
              ? `"${params.methodId}" is a terminal method: run it in a terminal (ccb acp --login), not through auth/login.`
              : `Unknown auth method "${params.methodId}"; this agent offers ${offered.map((m) => `"${m.methodId}"`).join(", ")}.`,
          );
        }
        agent.requireCredentials();
        return {};
      }),
    )
    .onRequest(acp.methods.agent.auth.logout, () =>
      wrap(() => {
        agent.logout();
        return {};
      }),
    )
    .onRequest(acp.methods.agent.session.new, ({ params, client }) =>
      wrap(async () => {
        const s = await agent.newSession(peer(client, params.cwd), {
          ...openRequest(params),
          initialMode: (params._meta as { permissionMode?: unknown } | null | undefined)?.permissionMode,
        });
        return {
          sessionId: s.id,
          configOptions: configOptions(s.configOptions()),
          availableCommands: commands(s),
        };
      }),
    )
    .onRequest(acp.methods.agent.session.resume, ({ params, client }) =>
      wrap(async () => {
        const { session: s, history } = await agent.reopen(
          peer(client, params.cwd),
          params.sessionId,
          openRequest(params),
        );
        live.delete(s.id);
        const l = liveOf(s.id, params.cwd);
        if (params.replayFrom?.type === "start") {
          for (const u of history) for (const t of l.translator.translate(u)) await send(client, s.id, t);
          if (s.title) await send(client, s.id, { sessionUpdate: "session_info_update", title: s.title });
        }
        l.translator.breakMessages();
        await state(client, s.id, { state: "idle" });
        return { configOptions: configOptions(s.configOptions()), availableCommands: commands(s) };
      }, params.sessionId),
    )
    .onRequest(acp.methods.agent.session.list, ({ params }) => wrap(() => agent.list(params.cwd, params.cursor)))
    .onRequest(acp.methods.agent.session.close, ({ params }) =>
      wrap(async () => {
        live.delete(params.sessionId);
        await agent.close(params.sessionId);
        return {};
      }, params.sessionId),
    )
    .onRequest(acp.methods.agent.session.delete, ({ params }) =>
      wrap(async () => {
        live.delete(params.sessionId);
        await agent.delete(params.sessionId);
        return {};
      }, params.sessionId),
    )
    .onRequest(acp.methods.agent.session.setConfigOption, ({ params }) =>
      wrap(() => {
        if (params.type !== "id" && params.type !== undefined)
          throw new CcbError("INVALID_ARGUMENT", `Config option "${params.configId}" takes an id value.`);
        const list = agent.active(params.sessionId).setConfigOption(params.configId, String(params.value));
        return { configOptions: configOptions(list) };
      }, params.sessionId),
    )
    .onRequest(acp.methods.agent.session.prompt, ({ params, client }) =>
      wrap(async () => {
        const s = agent.active(params.sessionId);
        const l = liveOf(s.id, s.cwd);
        const messageId = randomUUID();
        l.translator.breakMessages();
        await send(client, s.id, { sessionUpdate: "user_message", messageId, content: params.prompt });
        run(client, s, l, params.prompt);
        return { messageId };
      }, params.sessionId),
    )
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      agent.find(params.sessionId)?.cancel();
    });
}
