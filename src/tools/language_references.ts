import { z } from "zod";
import {
  callBridge,
  displayPath,
  EDITOR_READ,
  fromWireRange,
  PositionInput,
  resolveForEditor,
  toWirePos,
} from "./editor_common.ts";
import { defineTool } from "./kernel.ts";

export default defineTool({
  name: "language_references",
  title: "Find references",
  description:
    "Every place the symbol at a position is used, according to the editor's language service (Find All References). " +
    "Give the file and a 1-based line and column on the symbol. Needs the editor bridge.",
  input: z.object({
    path: z.string().describe("File containing the symbol, relative to the workspace root or absolute inside it."),
    position: PositionInput.describe("A position on the symbol (1-based)."),
    includeDeclaration: z.boolean().optional().describe("Also list the declaration itself (default true)."),
    limit: z.number().int().min(1).max(5000).optional().describe("Most locations to return (default 200)."),
  }),
  annotations: EDITOR_READ,
  needsBridge: true,
  async execute(args, ctx) {
    const abs = await resolveForEditor(ctx.core, args.path);
    const r = await callBridge(ctx, "language.references", {
      path: abs,
      position: toWirePos(args.position),
      includeDeclaration: args.includeDeclaration ?? true,
    });
    const all = r.locations.map((l) => ({ path: displayPath(ctx.core, l.path), range: fromWireRange(l.range) }));
    const locations = all.slice(0, args.limit ?? 200);
    const lines = locations.map((l) => `${l.path}:${l.range.start.line}:${l.range.start.column}`);
    return {
      text: all.length ? `${all.length} reference(s):\n${lines.join("\n")}` : "No references found at that position.",
      structured: { total: all.length, locations },
    };
  },
});
