import { z } from "zod";
import { defineTool } from "./kernel.ts";
import { SessionInput, sessionLine } from "./shared/debug.ts";
import { callBridge } from "./shared/editor.ts";

export default defineTool({
  name: "debug_stop",
  title: "Stop debugging",
  description:
    "Stop a debug session and end its program (the adapter kills the process it launched). Needs the editor bridge.",
  input: z.object({ ...SessionInput }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  needsBridge: true,
  async execute(args, ctx) {
    ctx.core.bridge.require();
    const r = await callBridge(ctx, "debug.stop", args.session ? { session: args.session } : {});
    return {
      text: r.stopped
        ? `Stopped ${r.session ? sessionLine(r.session) : "the session"}.`
        : `Nothing to stop: ${r.session ? sessionLine(r.session) : "no session"}.`,
      structured: { stopped: r.stopped, ...(r.session ? { session: r.session } : {}) },
    };
  },
});
