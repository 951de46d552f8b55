import { z } from "zod";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { callBridge } from "./shared/editor.ts";
import { HierarchyBounds, hierarchyRequest, hierarchyResult } from "./shared/hierarchy.ts";

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
    const direction = args.direction ?? "supertypes";
    const r = await callBridge(ctx, "language.typeHierarchy", await hierarchyRequest(ctx.core, args, direction));
    return hierarchyResult(ctx.core, r, {
      direction,
      heading: direction === "supertypes" ? "Supertypes" : "Subtypes",
      none: "No type hierarchy at that position (none there, or the language service offers none).",
    });
  },
});
