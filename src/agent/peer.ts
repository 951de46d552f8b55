import type {
  CreateElicitationResponse,
  ElicitationSchema,
  PermissionOption,
  SessionUpdate,
  TerminalExitStatus,
  ToolCallUpdate,
} from "@agentclientprotocol/sdk/unstable";

/**
 * The person on the other side of one connection, as the agent sees it: where a session's events go
 * and what the agent may ask. A front end (src/protocols/acp/v1.ts, v2.ts) implements it over its
 * protocol version; the agent never sees a method name, a request id or a protocol version.
 *
 * The events' shapes are ccb's event vocabulary (the shapes of ACP's session updates, the richest
 * common form): message and thought chunks, tool call starts and upserts, plan, usage, config and
 * title changes, commands. v1 sends them as they are; v2 translates each one.
 */
export interface AgentPeer {
  /** One event of a session (a front end that cannot say it drops it). */
  update(sessionId: string, update: SessionUpdate): Promise<void>;
  /** Ask the person whether a tool call may run; "cancelled" when the turn was cancelled or the ask withdrawn. */
  requestPermission(sessionId: string, ask: PermissionAsk, signal: AbortSignal): Promise<PermissionAnswer>;
  /** Ask the person to fill a form (present only when the client renders forms). */
  readonly elicit?:
    | ((sessionId: string, ask: ElicitationAsk, signal: AbortSignal) => Promise<ElicitationAnswer>)
    | undefined;
  /** The client's own file access (v1 clients that advertise `fs`): reads see unsaved buffers, writes land in the editor. */
  readonly files?: ClientFiles | undefined;
  /** The client's own terminals (v1 clients that advertise `terminal`): the editor shows the live output. */
  readonly terminals?: ClientTerminals | undefined;
}

export interface PermissionAsk {
  toolCall: ToolCallUpdate;
  options: PermissionOption[];
}

export type PermissionAnswer = { outcome: "cancelled" } | { outcome: "selected"; optionId: string };

export interface ElicitationAsk {
  toolCallId: string;
  message: string;
  requestedSchema: ElicitationSchema;
}

export type ElicitationAnswer = CreateElicitationResponse;

export interface ClientFiles {
  readonly read?: ((sessionId: string, path: string, signal: AbortSignal) => Promise<string>) | undefined;
  readonly write?: ((sessionId: string, path: string, text: string, signal: AbortSignal) => Promise<void>) | undefined;
}

export interface ClientTerminals {
  create(
    sessionId: string,
    command: { command: string; args: string[]; cwd: string; outputByteLimit: number },
    signal: AbortSignal,
  ): Promise<ClientTerminal>;
}

/** A terminal the client runs for the agent. */
export interface ClientTerminal {
  readonly id: string;
  waitForExit(): Promise<TerminalExitStatus>;
  currentOutput(): Promise<{ output: string; exitStatus?: TerminalExitStatus | null }>;
  kill(): Promise<unknown>;
  release(): Promise<unknown>;
}
