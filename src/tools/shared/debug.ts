import { basename } from "node:path";
import { z } from "zod";
import type { Core } from "../../core/core.ts";
import {
  type DebugFrame,
  type DebugSessionInfo,
  type DebugVariableT,
  extensionMethods,
  type WaitResult,
} from "../../editor-wire/contract.ts";
import type { ToolAnnotations } from "../kernel.ts";
import { displayPath } from "./editor.ts";

/**
 * Shared by the debug tools: what they take (the session, a frame) and how they show what the
 * workbench's debugger answers: workspace paths (a frame outside the workspace shows only its
 * file name), 1-based lines, compact text with the structured form beside it.
 */

/** A launch runs any program the configuration names, and stepping runs the debuggee: like the terminal tools. */
export const DEBUG_RUN: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
};

export const SessionInput = {
  session: z
    .string()
    .optional()
    .describe(
      "Debug session id from debug_start, debug_join or debug_status; default the latest live session ccb started or joined.",
    ),
};

export const FrameInput = {
  frameId: z
    .number()
    .int()
    .optional()
    .describe("Frame id from debug_stack (valid while the program stays stopped); default the top frame."),
};

export interface FrameView {
  id: number;
  name: string;
  /** Workspace path of the frame's file; for files outside the workspace only their name. */
  path?: string;
  outside?: boolean;
  source?: string;
  line: number;
  column: number;
}

export function frameView(core: Core, f: DebugFrame): FrameView {
  const view: FrameView = { id: f.id, name: f.name, line: f.line, column: f.column };
  if (f.path !== undefined) {
    const shown = displayPath(core, f.path);
    if (shown === f.path) {
      view.path = basename(f.path);
      view.outside = true;
    } else view.path = shown;
  } else if (f.source !== undefined) view.source = f.source;
  return view;
}

export function frameLine(f: FrameView): string {
  const where = f.path
    ? `${f.outside ? "(outside the workspace) " : ""}${f.path}:${f.line}:${f.column}`
    : `${f.source ?? "(no source)"}:${f.line}`;
  return `${f.name || "(anonymous)"} at ${where} [frame ${f.id}]`;
}

export function sessionLine(s: DebugSessionInfo): string {
  const who = s.byCcb ? "" : s.joined ? ", the person's, joined" : ", the person's: debug_join to use it";
  return `"${s.name}" (${s.type}${s.request ? ` ${s.request}` : ""}, session ${s.id}, ${s.state}${who})`;
}

/** What debug_wait and the control tools answer about where the program is. */
export function waitView(core: Core, w: WaitResult) {
  const frame = w.frame ? frameView(core, w.frame) : undefined;
  let text: string;
  if (w.state === "stopped")
    text =
      `Stopped (${w.reason ?? "unknown"}${w.description && w.description !== w.reason ? `: ${w.description}` : ""})` +
      `${frame ? ` in ${frameLine(frame)}` : ""}${w.threadId !== undefined ? `, thread ${w.threadId}` : ""}.`;
  else if (w.state === "ended")
    text = `The debug session has ended${w.exitCode !== null ? `; the program exited with code ${w.exitCode}` : " (no exit code reported: js-debug reports non-zero codes only)"}.`;
  else text = "Still running: it has not stopped within the wait.";
  return {
    text: `${text}\nSession ${sessionLine(w.session)}`,
    structured: {
      session: w.session,
      state: w.state,
      timedOut: w.timedOut,
      ...(w.reason ? { reason: w.reason } : {}),
      ...(w.threadId !== undefined ? { threadId: w.threadId } : {}),
      ...(frame ? { frame } : {}),
      exitCode: w.exitCode,
    },
  };
}

/**
 * The bound of a debug.wait call: its wait, then as long as debug.stack may take for the stopped
 * thread's top frame (the extension no longer bounds a request to a stopped member).
 */
export function waitCallTimeoutMs(waitMs: number): number {
  return waitMs + extensionMethods["debug.stack"].timeoutMs;
}

export const WaitSecondsInput = z
  .number()
  .min(0)
  .max(300)
  .optional()
  .describe("How long to wait for the program to stop or end, in seconds (default 10, at most 300).");

/** An indented listing of variables: `name: type = value`, children below, `(+N more)` when cut. */
export function variableLines(vars: DebugVariableT[], indent = "  ", out: string[] = []): string[] {
  for (const v of vars) {
    const ref = v.ref && !v.children ? ` [ref ${v.ref}]` : "";
    out.push(`${indent}${v.name}${v.type ? `: ${v.type}` : ""} = ${v.value}${ref}`);
    if (v.children) variableLines(v.children, `${indent}  `, out);
    if (v.more) out.push(`${indent}  (+${v.more} more)`);
  }
  return out;
}
