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
  name: "language_definition",
  title: "Go to definition",
  description:
    "Where the symbol at a position is defined, according to the editor's language service (Go to Definition). " +
    "Give the file and a 1-based line and column on the symbol. Returns locations with 1-based ranges. Needs the editor bridge.",
  input: z.object({
    path: z.string().describe("File containing the symbol, relative to the workspace root or absolute inside it."),
    position: PositionInput.describe("A position on the symbol (1-based)."),
  }),
  annotations: EDITOR_READ,
  needsBridge: true,
  async execute(args, ctx) {
    const abs = await resolveForEditor(ctx.core, args.path);
    const r = await callBridge(ctx, "language.definition", { path: abs, position: toWirePos(args.position) });
    const locations = r.locations.map((l) => ({ path: displayPath(ctx.core, l.path), range: fromWireRange(l.range) }));
    const lines = locations.map((l) => `${l.path}:${l.range.start.line}:${l.range.start.column}`);
    return {
      text: locations.length ? `Definition(s):\n${lines.join("\n")}` : "No definition found at that position.",
      structured: { locations },
    };
  },
});
