import { z } from "zod";
import type { Core } from "../core/core.ts";
import { confineDebugParams } from "../core/editor/debug-confine.ts";
import type { BreakpointInfo } from "../editor-wire/contract.ts";
import { defineTool } from "./kernel.ts";
import { callBridge, displayPath, EDITOR_WRITE } from "./shared/editor.ts";

export function breakpointView(core: Core, b: BreakpointInfo) {
  return { ...b, path: displayPath(core, b.path) };
}

export function breakpointLine(b: ReturnType<typeof breakpointView>): string {
  const extra = [
    b.condition ? `if ${b.condition}` : "",
    b.hitCondition ? `hit ${b.hitCondition}` : "",
    b.logMessage ? `logs "${b.logMessage}"` : "",
  ].filter(Boolean);
  return `${b.path}:${b.line}${b.column ? `:${b.column}` : ""}${extra.length ? ` (${extra.join(", ")})` : ""} [id ${b.id}]`;
}

export default defineTool({
  name: "debug_set_breakpoints",
  title: "Set breakpoints",
  description:
    "Add breakpoints in the workbench (the person sees them in the gutter), for current and future debug sessions: a file and " +
    'a 1-based line, optionally a `condition` (an expression: stops only when true), a `hitCondition` (e.g. ">= 3") or a ' +
    "`logMessage` (a logpoint: logs the message, {expressions} interpolated, to the debug console instead of stopping; read it " +
    "with debug_output). Needs the editor bridge.",
  input: z.object({
    breakpoints: z
      .array(
        z.object({
          path: z.string().min(1).describe("File, relative to the workspace root or absolute inside it."),
          line: z.number().int().min(1).describe("1-based line."),
          column: z.number().int().min(1).optional().describe("1-based column, for a breakpoint inside a line."),
          condition: z.string().max(2000).optional().describe("Stop only when this expression is true."),
          hitCondition: z
            .string()
            .max(200)
            .optional()
            .describe('Stop only when the hit count matches, e.g. "3" or ">= 3".'),
          logMessage: z
            .string()
            .max(2000)
            .optional()
            .describe("Log this instead of stopping (a logpoint); {expr} is interpolated."),
        }),
      )
      .min(1)
      .max(100)
      .describe("The breakpoints to add."),
  }),
  annotations: EDITOR_WRITE,
  needsBridge: true,
  async execute(args, ctx) {
    ctx.core.bridge.require();
    const params = (await confineDebugParams(ctx.core.workspace, "debug.setBreakpoints", args)) as typeof args;
    const r = await callBridge(ctx, "debug.setBreakpoints", params);
    const breakpoints = r.breakpoints.map((b) => breakpointView(ctx.core, b));
    return {
      text: `Added ${breakpoints.length} breakpoint(s):\n${breakpoints.map(breakpointLine).join("\n")}`,
      structured: { breakpoints },
    };
  },
});
