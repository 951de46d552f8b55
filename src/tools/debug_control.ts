import { z } from "zod";
import { defineTool } from "./kernel.ts";
import { DEBUG_RUN, SessionInput, WaitSecondsInput, waitCallTimeoutMs, waitView } from "./shared/debug.ts";
import { callBridge } from "./shared/editor.ts";

const ACTIONS = {
  continue: "continue",
  stepOver: "next",
  stepIn: "stepIn",
  stepOut: "stepOut",
  pause: "pause",
} as const;

export default defineTool({
  name: "debug_control",
  title: "Continue, step or pause",
  description:
    "Drive the debugged program: continue, stepOver (the next line), stepIn (into the call), stepOut (back to the caller), or " +
    "pause. Then waits up to `seconds` (default 10) for it to stop or end and answers where it is, as debug_wait does. " +
    "Running resumes the program's own code. Needs the editor bridge.",
  input: z.object({
    action: z.enum(["continue", "stepOver", "stepIn", "stepOut", "pause"]).describe("What to do."),
    ...SessionInput,
    threadId: z.number().int().optional().describe("Thread (default the one that stopped)."),
    seconds: WaitSecondsInput,
  }),
  annotations: DEBUG_RUN,
  needsBridge: true,
  async execute(args, ctx) {
    ctx.core.bridge.require();
    const r = await callBridge(ctx, "debug.control", {
      action: ACTIONS[args.action],
      ...(args.session ? { session: args.session } : {}),
      ...(args.threadId !== undefined ? { threadId: args.threadId } : {}),
    });
    const waitMs = Math.round((args.seconds ?? 10) * 1000);
    const w = await callBridge(
      ctx,
      "debug.wait",
      { session: r.session.id, timeoutMs: waitMs },
      { timeoutMs: waitCallTimeoutMs(waitMs) },
    );
    const view = waitView(ctx.core, w);
    return { text: `${args.action}: ${view.text}`, structured: { action: args.action, ...view.structured } };
  },
});
