import { z } from "zod";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { FrameInput, SessionInput, variableLines } from "./shared/debug.ts";
import { callBridge } from "./shared/editor.ts";

export default defineTool({
  name: "debug_variables",
  title: "Variables",
  description:
    "The variables of a frame of the stopped program, by scope (Local, Closure, Block...; Global only when asked by `scope`), " +
    "expanded `depth` levels, at most `maxItems` per level, values cut at `maxValueChars`. Expand one variable further with " +
    "its `ref`. Needs the editor bridge and a stopped program.",
  input: z.object({
    ...SessionInput,
    ...FrameInput,
    ref: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Expand this variable (its ref from an earlier answer) instead of a frame's scopes."),
    scope: z
      .string()
      .min(1)
      .optional()
      .describe('Only the scope whose name starts with this, e.g. "Local" or "Global".'),
    depth: z
      .number()
      .int()
      .min(1)
      .max(4)
      .optional()
      .describe("Levels to expand (default 1: the variables themselves)."),
    maxItems: z.number().int().min(1).max(500).optional().describe("Variables per level (default 50)."),
    maxValueChars: z
      .number()
      .int()
      .min(16)
      .max(10_000)
      .optional()
      .describe("Cut each value at this length (default 200)."),
  }),
  annotations: READ_ONLY,
  needsBridge: true,
  async execute(args, ctx) {
    ctx.core.bridge.require();
    const r = await callBridge(ctx, "debug.variables", {
      ...(args.session ? { session: args.session } : {}),
      ...(args.frameId !== undefined ? { frameId: args.frameId } : {}),
      ...(args.ref !== undefined ? { ref: args.ref } : {}),
      ...(args.scope ? { scope: args.scope } : {}),
      depth: args.depth ?? 1,
      maxItems: args.maxItems ?? 50,
      maxValueChars: args.maxValueChars ?? 200,
    });
    const text = r.scopes
      .map((s) => [`${s.name}:`, ...variableLines(s.variables), ...(s.more ? [`  (+${s.more} more)`] : [])].join("\n"))
      .join("\n");
    return { text: text || "No variables.", structured: { scopes: r.scopes } };
  },
});
