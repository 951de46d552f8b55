import { z } from "zod";
import { defineTool, READ_ONLY } from "../kernel.ts";
import { callBridge, locationLine, locationView, resolveForEditor, SymbolAtInput, toWirePos } from "./editor.ts";

/** A tool that asks one location provider about the symbol at a position (definition, implementations, type definition). */
export function locationsTool<const N extends string>(o: {
  name: N;
  title: string;
  description: string;
  method: "language.definition" | "language.implementations" | "language.typeDefinition";
  heading: string;
  none: string;
}) {
  return defineTool({
    name: o.name,
    title: o.title,
    description: `${o.description} Give the file and a 1-based line and column on the symbol. Returns locations with 1-based ranges. Needs the editor bridge.`,
    input: z.object(SymbolAtInput),
    annotations: READ_ONLY,
    needsBridge: true,
    async execute(args, ctx) {
      const abs = await resolveForEditor(ctx.core, args.path);
      const r = await callBridge(ctx, o.method, { path: abs, position: toWirePos(args.position) });
      const locations = r.locations.map((l) => locationView(ctx.core, l));
      return {
        text: locations.length ? `${o.heading}:\n${locations.map(locationLine).join("\n")}` : o.none,
        structured: { locations },
      };
    },
  });
}
