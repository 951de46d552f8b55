import { z } from "zod";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { SessionInput, WaitSecondsInput, waitCallTimeoutMs, waitView } from "./shared/debug.ts";
import { callBridge } from "./shared/editor.ts";

export default defineTool({
  name: "debug_wait",
  title: "Wait until the program stops",
  description:
    "Wait until the debugged program stops (breakpoint, step, exception, pause) or ends, at most `seconds`. Answers at once " +
    "when it is already stopped. Says why it stopped and where (the top frame), the exit code when it ended, or that it is " +
    "still running when the wait ran out. Needs the editor bridge.",
  input: z.object({ ...SessionInput, seconds: WaitSecondsInput }),
  annotations: READ_ONLY,
  needsBridge: true,
  async execute(args, ctx) {
    ctx.core.bridge.require();
    const waitMs = Math.round((args.seconds ?? 10) * 1000);
    const r = await callBridge(
      ctx,
      "debug.wait",
      { ...(args.session ? { session: args.session } : {}), timeoutMs: waitMs },
      { timeoutMs: waitCallTimeoutMs(waitMs) },
    );
    return waitView(ctx.core, r);
  },
});
