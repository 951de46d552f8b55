import { isAbsolute, resolve } from "node:path";
import type {
  CreateElicitationResponse,
  ElicitationSchema,
  PermissionOption,
  ToolCallContent,
  ToolCallLocation,
  ToolKind,
} from "@agentclientprotocol/sdk/unstable";
import type { z } from "zod";
import type { Core } from "../../core/core.ts";
import { type WorkspaceTool, workspaceTools } from "../../tools/catalog.ts";
import { type AnyToolDef, type ToolContext, type ToolDef, toolFailure } from "../../tools/kernel.ts";
import type { Todo } from "../converters.ts";
import type { ModeId } from "../modes.ts";
import type { ToolAccess } from "../permissions.ts";
import type { ClientIO } from "./io.ts";

/** What the agent's tools need besides the call context: the session's project and file access. */
export interface AcpToolDeps {
  sessionId: string;
  cwd: string;
  core: Core;
  io: ClientIO;
  setPlan(todos: Todo[]): void;
  /** Ask the person through the client (ACP elicitation, form mode), when the client supports it. */
  elicit?: ((message: string, schema: ElicitationSchema) => Promise<CreateElicitationResponse>) | undefined;
}

/** A tool_call_update with these fields for the running call (e.g. an embedded terminal). */
export interface AcpProgress {
  content?: ToolCallContent[];
  title?: string;
  locations?: ToolCallLocation[];
}

/** The kernel's call context as the ACP agent fills it. */
export type AgentToolContext = ToolContext<AcpToolDeps, AcpProgress>;

export interface ToolOutcome {
  /** What the model sees. */
  text: string;
  isError?: boolean;
  /** What the editor shows in the final tool_call_update (default: the text). */
  content?: ToolCallContent[];
  /** Where the call landed, with lines (grep hits, the first changed line), replacing the initial locations. */
  locations?: ToolCallLocation[];
  rawOutput?: unknown;
}

/** What a gate may do while the call waits: read the mode, show content, ask the user, switch the mode. */
export interface GateContext {
  mode: ModeId;
  show(content: ToolCallContent[]): void;
  /** The chosen optionId, "cancelled" when the turn was cancelled, or undefined for an unknown answer. */
  ask(options: PermissionOption[]): Promise<string | "cancelled" | undefined>;
  setMode(mode: ModeId): void;
}

export type GateResult =
  /** Go on as if permission was granted: the tool runs. */
  | { kind: "run" }
  /** The call ends here, completed, with this text for the model (and content for the client when given). */
  | { kind: "done"; outcome: ToolOutcome }
  /** The call fails with this text for the model. */
  | { kind: "reject"; text: string }
  | { kind: "cancelled" };

/**
 * How the ACP client shows a call of a tool (kind, title, locations, the diff of a pending edit) and
 * what permission it needs; the runner honours these without knowing any tool by name.
 */
export interface AcpPresentation<I> {
  kind: ToolKind;
  /** Title of the tool call, from its input. */
  title(input: I): string;
  /** Absolute paths the call touches. */
  locations(input: I, ctx: Pick<AgentToolContext, "cwd">): ToolCallLocation[];
  access(input: I): ToolAccess;
  /** Content shown with the pending tool call (before permission), e.g. the diff of an edit. */
  preview?(input: I, ctx: AgentToolContext): Promise<ToolCallContent[]>;
  /** Replaces the mode/rule permission step (and may end the call without running it). */
  gate?(input: I, ctx: GateContext): Promise<GateResult>;
  /** The JSON Schema offered to the model when it is not the kernel's (a remote MCP tool's own). */
  jsonSchema?: Record<string, unknown>;
}

/** The one shape of an agent tool: a kernel tool definition plus its ACP presentation. */
// biome-ignore lint/suspicious/noExplicitAny: erased schema type in heterogeneous tool lists
export type AcpTool<S extends z.ZodObject = any> = ToolDef<S, AcpToolDeps, ToolOutcome, AcpProgress> & {
  acp: AcpPresentation<z.infer<S>>;
};

/** Identity helper that keeps the schema's type attached to `execute` and the presentation. */
export function defineAcpTool<S extends z.ZodObject>(def: AcpTool<S>): AcpTool<S> {
  return def;
}

/** The content shown with a pending call; a failing preview is sanitized as a failing run is. */
export async function previewOf<I>(tool: AcpTool, input: I, ctx: AgentToolContext): Promise<ToolCallContent[]> {
  if (!tool.acp.preview) return [];
  try {
    return await tool.acp.preview(input, ctx);
  } catch (err) {
    throw toolFailure(tool.name, err, ctx.log);
  }
}

/** The tools of one model request: bridge-needing ones only while the bridge is connected. */
export function offeredTools(tools: readonly AcpTool[], bridgeConnected: boolean): AcpTool[] {
  return tools.filter((t) => !t.needsBridge || bridgeConnected);
}

/** The absolute form of a tool's path argument (for locations; confinement happens in ClientIO.resolve). */
export function absPath(cwd: string, p: string): string {
  return isAbsolute(p) ? resolve(p) : resolve(cwd, p);
}

/**
 * A workspace tool of the catalog (src/tools) for the agent: the same definition and handler, run
 * with the session's core; its text is what the model sees, its structured result the raw output.
 */
function fromWorkspaceTool(def: AnyToolDef, acp: AcpPresentation<Record<string, unknown>>): AcpTool {
  return {
    ...def,
    acp,
    async execute(args, ctx) {
      const r = await def.execute(args, { core: ctx.core, signal: ctx.signal, log: ctx.log });
      return { text: truncateForModel(r.text), rawOutput: r.structured ?? { output: r.text } };
    },
  };
}

/** The parsed input of the catalog's tool named `N`. */
export type CatalogInput<N extends WorkspaceTool["name"]> = z.infer<Extract<WorkspaceTool, { name: N }>["input"]>;

/**
 * The catalog's tools a presentation table names, in the table's order, for the agent. The table is
 * typed by the front end against the catalog's names and each tool's own input.
 */
export function presentCatalog<N extends WorkspaceTool["name"]>(
  table: {
    [K in N]: AcpPresentation<CatalogInput<K>>;
  },
): AcpTool[] {
  return (Object.keys(table) as N[]).map((name) => {
    const def = workspaceTools.find((t) => t.name === name);
    if (!def) throw new Error(`The tool catalog has no ${name}`);
    return fromWorkspaceTool(def, table[name] as AcpPresentation<Record<string, unknown>>);
  });
}

const MAX_TOOL_TEXT = 40_000;

/** Central truncation of what a tool returns to the model. */
export function truncateForModel(text: string): string {
  if (text.length <= MAX_TOOL_TEXT) return text;
  return `${text.slice(0, MAX_TOOL_TEXT)}\n[... truncated ${text.length - MAX_TOOL_TEXT} characters; narrow the request (a line range, a path, a pattern) to see more]`;
}
