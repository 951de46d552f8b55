import type { z } from "zod";
import type { Logger } from "../../../core/log.ts";
import type { Workspace } from "../../../core/workspace.ts";
import type { IdeToolResult } from "../converters.ts";
import type { DiffRegistry } from "../diffs.ts";
import type { IdeEditor } from "../editor.ts";
import type { Notifier } from "../notifications.ts";

export interface IdeToolContext {
  editor: IdeEditor;
  workspace: Workspace;
  diffs: DiffRegistry;
  notifier: Notifier;
  /** The connection the call came in on. */
  connectionId: number;
  /** Fires when the client cancels the call or leaves. */
  signal: AbortSignal;
  log: Logger;
}

export interface IdeTool<S extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  input: S;
  run(args: z.infer<S>, ctx: IdeToolContext): Promise<IdeToolResult>;
}

// biome-ignore lint/suspicious/noExplicitAny: erased schema type in the registry; args are parsed with `input` first
export type AnyIdeTool = IdeTool<any>;

export function defineIdeTool<S extends z.ZodObject>(tool: IdeTool<S>): IdeTool<S> {
  return tool;
}
