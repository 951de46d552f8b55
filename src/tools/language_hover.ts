import { z } from "zod";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { callBridge, fromWireRange, PositionInput, resolveForEditor, toWirePos } from "./shared/editor.ts";

export default defineTool({
  name: "language_hover",
  title: "Hover information",
  description:
    "What the editor shows when hovering a position: the symbol's type, signature and documentation from the language service. " +
    "Give the file and a 1-based line and column. Needs the editor bridge.",
  input: z.object({
    path: z.string().describe("File, relative to the workspace root or absolute inside it."),
    position: PositionInput.describe("The position to hover (1-based)."),
  }),
  annotations: READ_ONLY,
  needsBridge: true,
  async execute(args, ctx) {
    const abs = await resolveForEditor(ctx.core, args.path);
    const r = await callBridge(ctx, "language.hover", { path: abs, position: toWirePos(args.position) });
    return {
      text: r.contents.length ? r.contents.join("\n\n") : "Nothing to show at that position.",
      structured: { contents: r.contents, ...(r.range ? { range: fromWireRange(r.range) } : {}) },
    };
  },
});
