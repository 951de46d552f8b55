import { z } from "zod";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { frameLine, frameView, SessionInput } from "./shared/debug.ts";
import { callBridge } from "./shared/editor.ts";

export default defineTool({
  name: "debug_stack",
  title: "Call stack",
  description:
    "The call stack of the stopped program (top frame first): function, workspace path:line:column and the frame id that " +
    "debug_variables and debug_evaluate take. Needs the editor bridge and a stopped program.",
  input: z.object({
    ...SessionInput,
    threadId: z.number().int().optional().describe("Thread id (default the thread that stopped)."),
    levels: z.number().int().min(1).max(200).optional().describe("How many frames (default 20)."),
  }),
  annotations: READ_ONLY,
  needsBridge: true,
  async execute(args, ctx) {
    ctx.core.bridge.require();
    const r = await callBridge(ctx, "debug.stack", {
      ...(args.session ? { session: args.session } : {}),
      ...(args.threadId !== undefined ? { threadId: args.threadId } : {}),
      levels: args.levels ?? 20,
    });
    const frames = r.frames.map((f) => frameView(ctx.core, f));
    const more =
      r.totalFrames !== undefined && r.totalFrames > frames.length
        ? `\n(+${r.totalFrames - frames.length} more frames)`
        : "";
    return {
      text: `Thread ${r.threadId}:\n${frames.map((f, i) => `#${i} ${frameLine(f)}`).join("\n")}${more}`,
      structured: {
        threadId: r.threadId,
        frames,
        ...(r.totalFrames !== undefined ? { totalFrames: r.totalFrames } : {}),
      },
    };
  },
});
