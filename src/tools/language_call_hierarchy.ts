import { z } from "zod";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { callBridge } from "./shared/editor.ts";
import { HierarchyBounds, hierarchyRequest, hierarchyResult } from "./shared/hierarchy.ts";

export default defineTool({
  name: "language_call_hierarchy",
  title: "Call hierarchy",
  description:
    "Who calls the function at a position (incoming, the default), or what it calls (outgoing), expanded a bounded number of " +
    "levels, according to the editor's language service. Each item with path:line:column and where the calls are. Needs the editor bridge.",
  input: z.object({
    ...HierarchyBounds,
    direction: z.enum(["incoming", "outgoing"]).optional().describe("incoming: callers (default); outgoing: callees."),
  }),
  annotations: READ_ONLY,
  needsBridge: true,
  async execute(args, ctx) {
    const direction = args.direction ?? "incoming";
    const r = await callBridge(ctx, "language.callHierarchy", await hierarchyRequest(ctx.core, args, direction));
    return hierarchyResult(ctx.core, r, {
      direction,
      heading: direction === "incoming" ? "Callers" : "Callees",
      callsLabel: direction === "incoming" ? "calls at" : "called at",
      none: "No function the language service knows at that position.",
    });
  },
});
