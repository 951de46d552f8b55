import { z } from "zod";
import {
  callBridge,
  EDITOR_READ,
  locationLine,
  locationView,
  resolveForEditor,
  SymbolAtInput,
  toWirePos,
} from "./editor_common.ts";
import { defineTool } from "./kernel.ts";

export default defineTool({
  name: "language_definition",
  title: "Go to definition",
  description:
    "Where the symbol at a position is defined, according to the editor's language service (Go to Definition). " +
    "Give the file and a 1-based line and column on the symbol. Returns locations with 1-based ranges. Needs the editor bridge.",
  input: z.object(SymbolAtInput),
  annotations: EDITOR_READ,
  needsBridge: true,
  async execute(args, ctx) {
    const abs = await resolveForEditor(ctx.core, args.path);
    const r = await callBridge(ctx, "language.definition", { path: abs, position: toWirePos(args.position) });
    const locations = r.locations.map((l) => locationView(ctx.core, l));
    return {
      text: locations.length
        ? `Definition(s):\n${locations.map(locationLine).join("\n")}`
        : "No definition found at that position.",
      structured: { locations },
    };
  },
});
