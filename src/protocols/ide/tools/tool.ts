import type { z } from "zod";
import type { CcbError } from "../../../core/errors.ts";
import type { Workspace } from "../../../core/workspace.ts";
import {
  type AnyToolDef,
  defineTool,
  runTool,
  type ToolAnnotations,
  type ToolContext,
  type ToolDef,
} from "../../../tools/kernel.ts";
import { errorResult, type IdeToolResult } from "../converters.ts";
import type { DiffRegistry } from "../diffs.ts";
import type { IdeEditor } from "../editor.ts";
import { CLAUDE_HINT_NAMES } from "../hint-names.ts";
import type { Notifier } from "../notifications.ts";

/** What the 12 Claude Code IDE tools need besides the call context. */
export interface IdeToolDeps {
  editor: IdeEditor;
  workspace: Workspace;
  diffs: DiffRegistry;
  notifier: Notifier;
  /** The connection the call came in on. */
  connectionId: number;
}

export type IdeToolContext = ToolContext<IdeToolDeps>;
export type IdeTool<S extends z.ZodObject = z.ZodObject> = ToolDef<S, IdeToolDeps, IdeToolResult>;
export type AnyIdeTool = AnyToolDef<IdeToolDeps, IdeToolResult>;

/** A kernel tool whose handler gets the IDE's editor and diff tabs and returns the CLI's content shape. */
export function defineIdeTool<S extends z.ZodObject>(tool: IdeTool<S>): IdeTool<S> {
  return defineTool(tool);
}

/**
 * The IDE adapter: runs a tool with checked arguments; a failure (the kernel's CcbError, an
 * unexpected one already sanitized) becomes the isError result the CLI shows: code, message, hint.
 */
export async function runIdeTool(tool: AnyIdeTool, args: unknown, ctx: IdeToolContext): Promise<IdeToolResult> {
  try {
    return await runTool(tool, args, ctx);
  } catch (err) {
    return errorResult((err as CcbError).toUserText(CLAUDE_HINT_NAMES));
  }
}

/** Changes what the editor shows (tabs, selection), never a file. */
export const IDE_VIEW: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
