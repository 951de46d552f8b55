import { z } from "zod";
import { defineTool } from "./kernel.ts";
import { SessionInput, sessionLine } from "./shared/debug.ts";
import { callBridge } from "./shared/editor.ts";

export default defineTool({
  name: "debug_output",
  title: "Debug console output",
  description:
    "What the debugged program and the debugger wrote to the debug console (stdout, stderr, console.log, logpoints) since the " +
    "last debug_output of the session. At most `maxChars` (the latest); older text beyond the workbench's 1 MB buffer is " +
    "dropped and counted. Needs the editor bridge.",
  input: z.object({
    ...SessionInput,
    maxChars: z
      .number()
      .int()
      .min(100)
      .max(1_000_000)
      .optional()
      .describe("At most this many characters, the latest (default 20000)."),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  needsBridge: true,
  async execute(args, ctx) {
    ctx.core.bridge.require();
    const r = await callBridge(ctx, "debug.output", {
      ...(args.session ? { session: args.session } : {}),
      maxChars: args.maxChars ?? 20_000,
    });
    const dropped = r.dropped ? `(${r.dropped} earlier characters dropped)\n` : "";
    return {
      text: `${r.output ? `${dropped}${r.output}` : `${dropped}(no new output)`}\n-- session ${sessionLine(r.session)}`,
      structured: { output: r.output, dropped: r.dropped, session: r.session },
    };
  },
});
