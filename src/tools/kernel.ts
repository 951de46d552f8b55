import type { z } from "zod";
import type { Core } from "../core/core.ts";
import type { Logger } from "../core/log.ts";

/** MCP-style behaviour hints; every tool states all four. */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface ToolContext {
  core: Core;
  /** Fires when the caller cancels (MCP cancel, ACP cancel, closed socket). Pass it down. */
  signal: AbortSignal;
  log: Logger;
}

export interface ToolResult {
  /** Model-visible text. Never put secrets, tokens or private URLs here. */
  text: string;
  /** Machine-readable result (MCP structuredContent). Model-visible too: no secrets. */
  structured?: Record<string, unknown>;
  /** Host-only metadata (MCP `_meta`), e.g. the workbench URL for an MCP App. */
  meta?: Record<string, unknown>;
}

export interface ToolDef<S extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  /** What it does, when to use it, what it returns. */
  description: string;
  /** Every field described with `.describe()`. */
  input: S;
  annotations: ToolAnnotations;
  /** True for tools that need the live editor bridge (they fail with BRIDGE_UNAVAILABLE without it). */
  needsBridge?: boolean;
  /** Static tool metadata for hosts (MCP tools/list `_meta`), e.g. `{ ui: { resourceUri } }` for an MCP App. */
  meta?: Record<string, unknown>;
  execute(args: z.infer<S>, ctx: ToolContext): Promise<ToolResult>;
}

/**
 * A tool of any input schema, as registries hold it. Front ends parse the arguments with
 * `def.input` before calling `execute`, so the erased type is never trusted blindly.
 */
// biome-ignore lint/suspicious/noExplicitAny: erased schema type in heterogeneous registries
export type AnyToolDef = ToolDef<any>;

/** Identity helper that keeps the schema's type attached to `execute`. */
export function defineTool<S extends z.ZodObject>(def: ToolDef<S>): ToolDef<S> {
  return def;
}

/** Convenience annotation presets. */
export const READ_ONLY: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
