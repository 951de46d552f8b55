import type { ToolCallContent, ToolCallLocation, ToolKind } from "@agentclientprotocol/sdk/unstable";
import type { z } from "zod";
import type { Core } from "../../../core/core.ts";
import type { Todo } from "../converters.ts";
import type { ToolAccess } from "../permissions.ts";
import type { ClientIO } from "./io.ts";

/** What a tool gets to do its work. */
export interface ToolContext {
  sessionId: string;
  cwd: string;
  core: Core;
  io: ClientIO;
  signal: AbortSignal;
  /** Send a tool_call_update with these fields for the running call (e.g. an embedded terminal). */
  progress(fields: { content?: ToolCallContent[]; title?: string; locations?: ToolCallLocation[] }): void;
  setPlan(todos: Todo[]): void;
}

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

export interface AgentTool<I = any> {
  name: string;
  description: string;
  schema: z.ZodType<I>;
  /** JSON Schema offered to the model when it is not derived from `schema` (MCP tools). */
  jsonSchema?: Record<string, unknown>;
  kind: ToolKind;
  title(input: I): string;
  /** Absolute paths the call touches. */
  locations(input: I, ctx: Pick<ToolContext, "cwd">): ToolCallLocation[];
  access(input: I): ToolAccess;
  /** Content shown with the pending tool call (before permission), e.g. the diff of an edit. */
  preview?(input: I, ctx: ToolContext): Promise<ToolCallContent[]>;
  run(input: I, ctx: ToolContext): Promise<ToolOutcome>;
}

export function defineAgentTool<I>(tool: AgentTool<I>): AgentTool<I> {
  return tool;
}

const MAX_TOOL_TEXT = 40_000;

/** Central truncation of what a tool returns to the model. */
export function truncateForModel(text: string): string {
  if (text.length <= MAX_TOOL_TEXT) return text;
  return `${text.slice(0, MAX_TOOL_TEXT)}\n[... truncated ${text.length - MAX_TOOL_TEXT} characters; narrow the request (a line range, a path, a pattern) to see more]`;
}
