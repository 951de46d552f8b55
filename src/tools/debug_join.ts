import { z } from "zod";
import { confineJoinedSession } from "../core/editor/debug-confine.ts";
import { defineTool } from "./kernel.ts";
import { DEBUG_RUN, sessionLine, waitCallTimeoutMs, waitView } from "./shared/debug.ts";
import { callBridge } from "./shared/editor.ts";

export default defineTool({
  name: "debug_join",
  title: "Join the person's debug session",
  description:
    "Join a debug session the person started in the workbench (debug_status lists every session and marks theirs), so the " +
    "other debug tools take its id: stack, variables, evaluate, output, stepping, stop. Only a session whose program, cwd " +
    "and envFile lie in the workspace (as debug_start requires) can be joined. The person sees every step live. Joining " +
    "exposes what that program holds (its variables, environment and console output since it started) and evaluate runs " +
    "code inside it. Answers where it is now. Needs the editor bridge.",
  input: z.object({
    session: z.string().min(1).describe("The session's id, from debug_status."),
  }),
  annotations: DEBUG_RUN,
  needsBridge: true,
  async execute(args, ctx) {
    ctx.core.bridge.require();
    const d = await callBridge(ctx, "debug.describe", { session: args.session });
    if (d.session.byCcb) {
      const where = waitView(
        ctx.core,
        await callBridge(
          ctx,
          "debug.wait",
          { session: args.session, timeoutMs: 0 },
          { timeoutMs: waitCallTimeoutMs(0) },
        ),
      );
      return {
        text: `ccb started this session already; the debug tools take it.\n${where.text}`,
        structured: { joined: false, ...where.structured },
      };
    }
    await confineJoinedSession(ctx.core.workspace, d.paths);
    const j = await callBridge(ctx, "debug.join", { session: args.session });
    const where = waitView(
      ctx.core,
      await callBridge(ctx, "debug.wait", { session: j.session.id, timeoutMs: 0 }, { timeoutMs: waitCallTimeoutMs(0) }),
    );
    return {
      text: `Joined ${sessionLine(j.session)}: the debug tools take session ${j.session.id} now.\n${where.text}`,
      structured: { joined: true, ...where.structured },
    };
  },
});
