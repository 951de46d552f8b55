import { z } from "zod";
import { CcbError } from "../core/errors.ts";
import { breakpointLine, breakpointView } from "./debug_set_breakpoints.ts";
import { defineTool } from "./kernel.ts";
import { callBridge, EDITOR_WRITE, resolveForEditor } from "./shared/editor.ts";

export default defineTool({
  name: "debug_clear_breakpoints",
  title: "Clear breakpoints",
  description:
    "Remove breakpoints from the workbench: by id (from debug_set_breakpoints or debug_status), every one of a file (or of " +
    "one line of it), or all. Answers the breakpoints that remain. Needs the editor bridge.",
  input: z.object({
    ids: z.array(z.string()).max(100).optional().describe("Breakpoint ids to remove."),
    path: z.string().min(1).optional().describe("Remove the breakpoints of this file (workspace path)."),
    line: z.number().int().min(1).optional().describe("With `path`: only the breakpoint(s) on this 1-based line."),
    all: z.boolean().optional().describe("Remove every breakpoint."),
  }),
  annotations: { ...EDITOR_WRITE, idempotentHint: true },
  needsBridge: true,
  async execute(args, ctx) {
    ctx.core.bridge.require();
    if (!args.ids?.length && args.path === undefined && args.all !== true)
      throw new CcbError("INVALID_ARGUMENT", "Say which breakpoints: `ids`, `path` (and `line`), or `all: true`.");
    if (args.line !== undefined && args.path === undefined)
      throw new CcbError("INVALID_ARGUMENT", "`line` needs `path`.");
    const path = args.path === undefined ? undefined : await resolveForEditor(ctx.core, args.path, false);
    const r = await callBridge(ctx, "debug.clearBreakpoints", {
      ...(args.ids ? { ids: args.ids } : {}),
      ...(path !== undefined ? { path } : {}),
      ...(args.line !== undefined ? { line: args.line } : {}),
      ...(args.all ? { all: true } : {}),
    });
    const left = r.breakpoints.map((b) => breakpointView(ctx.core, b));
    return {
      text: `Removed ${r.removed} breakpoint(s). ${left.length ? `Left:\n${left.map(breakpointLine).join("\n")}` : "None left."}`,
      structured: { removed: r.removed, breakpoints: left },
    };
  },
});
