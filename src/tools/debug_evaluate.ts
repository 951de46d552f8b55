import { z } from "zod";
import { defineTool } from "./kernel.ts";
import { DEBUG_RUN, FrameInput, SessionInput } from "./shared/debug.ts";
import { callBridge } from "./shared/editor.ts";

export default defineTool({
  name: "debug_evaluate",
  title: "Evaluate in the debugger",
  description:
    "Evaluate an expression in the debugged program, in a frame of the stopped program (default the top frame) or globally " +
    "while it runs, as the debug console does. The expression runs inside the program: it can call functions and change " +
    "state. Needs the editor bridge.",
  input: z.object({
    expression: z.string().min(1).max(10_000).describe('The expression, e.g. "items.length" or "total / count".'),
    ...SessionInput,
    ...FrameInput,
    maxValueChars: z
      .number()
      .int()
      .min(16)
      .max(100_000)
      .optional()
      .describe("Cut the result at this length (default 2000)."),
  }),
  annotations: DEBUG_RUN,
  needsBridge: true,
  async execute(args, ctx) {
    ctx.core.bridge.require();
    const r = await callBridge(ctx, "debug.evaluate", {
      expression: args.expression,
      ...(args.session ? { session: args.session } : {}),
      ...(args.frameId !== undefined ? { frameId: args.frameId } : {}),
      maxValueChars: args.maxValueChars ?? 2000,
    });
    return {
      text: `${args.expression} = ${r.result}${r.type ? ` (${r.type})` : ""}${r.ref ? ` [ref ${r.ref}: expand with debug_variables]` : ""}`,
      structured: { result: r.result, ...(r.type ? { type: r.type } : {}), ...(r.ref ? { ref: r.ref } : {}) },
    };
  },
});
