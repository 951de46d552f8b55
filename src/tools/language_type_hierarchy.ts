import { z } from "zod";
import { callBridge, resolveForEditor, toWirePos } from "./editor_common.ts";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { HierarchyBounds, hierarchyText, hierarchyView } from "./language_hierarchy.ts";

export default defineTool({
  name: "language_type_hierarchy",
  title: "Type hierarchy",
  description:
    "The supertypes (default) or subtypes of the class or interface at a position, expanded a bounded number of levels, " +
    "according to the editor's language service (where it provides one). Needs the editor bridge.",
  input: z.object({
    ...HierarchyBounds,
    direction: z.enum(["supertypes", "subtypes"]).optional().describe("supertypes (default) or subtypes."),
  }),
  annotations: READ_ONLY,
  needsBridge: true,
  async execute(args, ctx) {
    const abs = await resolveForEditor(ctx.core, args.path);
    const direction = args.direction ?? "supertypes";
    const r = await callBridge(ctx, "language.typeHierarchy", {
      path: abs,
      position: toWirePos(args.position),
      direction,
      depth: args.depth ?? 2,
      maxNodes: args.maxNodes ?? 200,
    });
    const roots = r.roots.map((n) => hierarchyView(ctx.core, n));
    return {
      text: roots.length
        ? `${direction === "supertypes" ? "Supertypes" : "Subtypes"}${r.truncated ? " (cut at maxNodes)" : ""}:\n${hierarchyText(roots)}`
        : "No type hierarchy at that position (none there, or the language service offers none).",
      structured: { direction, roots, truncated: r.truncated },
    };
  },
});
