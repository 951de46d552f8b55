import { z } from "zod";
import { callBridge, resolveForEditor, toWirePos } from "./editor_common.ts";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { HierarchyBounds, hierarchyText, hierarchyView } from "./language_hierarchy.ts";

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
    const abs = await resolveForEditor(ctx.core, args.path);
    const direction = args.direction ?? "incoming";
    const r = await callBridge(ctx, "language.callHierarchy", {
      path: abs,
      position: toWirePos(args.position),
      direction,
      depth: args.depth ?? 2,
      maxNodes: args.maxNodes ?? 200,
    });
    const roots = r.roots.map((n) => hierarchyView(ctx.core, n));
    const label = direction === "incoming" ? "calls at" : "called at";
    return {
      text: roots.length
        ? `${direction === "incoming" ? "Callers" : "Callees"}${r.truncated ? " (cut at maxNodes)" : ""}:\n${hierarchyText(roots, label)}`
        : "No function the language service knows at that position.",
      structured: { direction, roots, truncated: r.truncated },
    };
  },
});
