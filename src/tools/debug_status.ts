import { z } from "zod";
import { breakpointLine, breakpointView } from "./debug_set_breakpoints.ts";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { sessionLine } from "./shared/debug.ts";
import { callBridge } from "./shared/editor.ts";

export default defineTool({
  name: "debug_status",
  title: "Debug sessions and breakpoints",
  description:
    "The workbench's debug sessions (the ones ccb started and the ones the person started, with their state: running, " +
    "stopped, ended; launch or attach; whether ccb joined a person's) and every breakpoint with its id. The other debug " +
    "tools take a person's session only after debug_join. Needs the editor bridge.",
  input: z.object({}),
  annotations: READ_ONLY,
  needsBridge: true,
  async execute(_args, ctx) {
    ctx.core.bridge.require();
    const [s, b] = await Promise.all([callBridge(ctx, "debug.sessions", {}), callBridge(ctx, "debug.breakpoints", {})]);
    const breakpoints = b.breakpoints.map((x) => breakpointView(ctx.core, x));
    return {
      text:
        `${s.sessions.length ? `Sessions:\n${s.sessions.map((x) => `- ${sessionLine(x)}`).join("\n")}` : "No debug sessions."}\n` +
        `${breakpoints.length ? `Breakpoints:\n${breakpoints.map((x) => `- ${breakpointLine(x)}`).join("\n")}` : "No breakpoints."}`,
      structured: { sessions: s.sessions, breakpoints },
    };
  },
});
