import { z } from "zod";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { callBridge, locationLine, locationView, resolveForEditor, SymbolAtInput, toWirePos } from "./shared/editor.ts";

export default defineTool({
  name: "language_references",
  title: "Find references",
  description:
    "Every place the symbol at a position is used, according to the editor's language service (Find All References). " +
    "Give the file and a 1-based line and column on the symbol. Needs the editor bridge.",
  input: z.object({
    ...SymbolAtInput,
    includeDeclaration: z.boolean().optional().describe("Also list the declaration itself (default true)."),
    limit: z.number().int().min(1).max(5000).optional().describe("Most locations to return (default 200)."),
  }),
  annotations: READ_ONLY,
  needsBridge: true,
  async execute(args, ctx) {
    const abs = await resolveForEditor(ctx.core, args.path);
    const r = await callBridge(ctx, "language.references", {
      path: abs,
      position: toWirePos(args.position),
      includeDeclaration: args.includeDeclaration ?? true,
    });
    const all = r.locations.map((l) => locationView(ctx.core, l));
    const locations = all.slice(0, args.limit ?? 200);
    return {
      text: all.length
        ? `${all.length} reference(s):\n${locations.map(locationLine).join("\n")}`
        : "No references found at that position.",
      structured: { total: all.length, locations },
    };
  },
});
