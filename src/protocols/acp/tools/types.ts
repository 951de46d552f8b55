import type { ToolCallContent, ToolCallLocation, ToolKind } from "@agentclientprotocol/sdk/unstable";
import type { z } from "zod";
import type { Core } from "../../../core/core.ts";
import {
  type AnyToolDef,
  defineTool,
  inputSchema,
  runTool,
  type ToolContext,
  type ToolDef,
  toolFailure,
} from "../../../tools/kernel.ts";
import type { Todo } from "../converters.ts";
import type { ToolAccess } from "../permissions.ts";
import type { ClientIO } from "./io.ts";

/** What the agent's tools need besides the call context: the session's project and file access. */
export interface AcpToolDeps {
  sessionId: string;
  cwd: string;
  core: Core;
  io: ClientIO;
  setPlan(todos: Todo[]): void;
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

/** How the ACP client shows a call of a tool, and what permission it needs. */
export interface AcpPresentation<I> {
  kind: ToolKind;
  /** Title of the tool call, from its input. */
  title(input: I): string;
  /** Absolute paths the call touches. */
  locations(input: I, ctx: Pick<AgentToolContext, "cwd">): ToolCallLocation[];
  access(input: I): ToolAccess;
  /** Content shown with the pending tool call (before permission), e.g. the diff of an edit. */
  preview?(input: I, ctx: AgentToolContext): Promise<ToolCallContent[]>;
}

/** A kernel tool of the agent, with its ACP presentation. */
export type AcpToolDef<S extends z.ZodObject> = ToolDef<S, AcpToolDeps, ToolOutcome, AcpProgress> & {
  acp: AcpPresentation<z.infer<S>>;
};

/**
 * A tool as the ACP turn runs it (the adapter's form): built from a kernel definition by
 * `defineAcpTool` / `fromWorkspaceTool`, or by hand for a remote MCP server's tool (JSON Schema).
 */
// biome-ignore lint/suspicious/noExplicitAny: erased input type in heterogeneous tool lists
export interface AgentTool<I = any> {
  name: string;
  description: string;
  schema: z.ZodType<I>;
  /** JSON Schema offered to the model (the kernel's, or a remote MCP tool's own). */
  jsonSchema?: Record<string, unknown>;
  /** Offer it only while the editor bridge is connected (it fails with BRIDGE_UNAVAILABLE without it). */
  needsBridge?: boolean;
  kind: ToolKind;
  title(input: I): string;
  /** Absolute paths the call touches. */
  locations(input: I, ctx: Pick<AgentToolContext, "cwd">): ToolCallLocation[];
  access(input: I): ToolAccess;
  /** Content shown with the pending tool call (before permission), e.g. the diff of an edit. */
  preview?(input: I, ctx: AgentToolContext): Promise<ToolCallContent[]>;
  run(input: I, ctx: AgentToolContext): Promise<ToolOutcome>;
}

/** The ACP form of a hand-built tool (a remote MCP server's): identity, for the types. */
export function defineAgentTool<I>(tool: AgentTool<I>): AgentTool<I> {
  return tool;
}

/**
 * The ACP adapter of a kernel tool: the kernel's schema and failure sanitizing (a failing preview
 * too), the definition's ACP presentation.
 */
export function defineAcpTool<S extends z.ZodObject>(def: AcpToolDef<S>): AgentTool<z.infer<S>> {
  const { acp } = defineTool(def) as AcpToolDef<S>;
  const preview = acp.preview;
  return {
    name: def.name,
    description: def.description,
    schema: def.input as unknown as z.ZodType<z.infer<S>>,
    jsonSchema: inputSchema(def.input),
    needsBridge: def.needsBridge === true,
    kind: acp.kind,
    title: (i) => acp.title(i),
    locations: (i, ctx) => acp.locations(i, ctx),
    access: (i) => acp.access(i),
    ...(preview
      ? {
          async preview(i: z.infer<S>, ctx: AgentToolContext) {
            try {
              return await preview(i, ctx);
            } catch (err) {
              throw toolFailure(def.name, err, ctx.log);
            }
          },
        }
      : {}),
    run: (i, ctx) => runTool(def, i, ctx),
  };
}

/**
 * A workspace tool of the catalog (src/tools) for the agent: the same definition and handler, run
 * with the session's core; its text is what the model sees, its structured result the raw output.
 */
export function fromWorkspaceTool(
  def: AnyToolDef,
  acp: AcpPresentation<Record<string, unknown>>,
): AgentTool<Record<string, unknown>> {
  return defineAcpTool({
    name: def.name,
    title: def.title,
    description: def.description,
    input: def.input,
    annotations: def.annotations,
    needsBridge: def.needsBridge === true,
    acp,
    async execute(args, ctx) {
      const r = await def.execute(args, { core: ctx.core, signal: ctx.signal, log: ctx.log });
      return { text: truncateForModel(r.text), rawOutput: r.structured ?? { output: r.text } };
    },
  });
}

const MAX_TOOL_TEXT = 40_000;

/** Central truncation of what a tool returns to the model. */
export function truncateForModel(text: string): string {
  if (text.length <= MAX_TOOL_TEXT) return text;
  return `${text.slice(0, MAX_TOOL_TEXT)}\n[... truncated ${text.length - MAX_TOOL_TEXT} characters; narrow the request (a line range, a path, a pattern) to see more]`;
}
