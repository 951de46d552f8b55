import { z } from "zod";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { callBridge, resolveForEditor, SymbolAtInput, toWirePos } from "./shared/editor.ts";

export default defineTool({
  name: "language_signature_help",
  title: "Signature help",
  description:
    "The signature(s) of the call at a position (inside its parentheses): parameters, the active one, documentation. " +
    "Give the file and a 1-based line and column inside the call's argument list. Needs the editor bridge.",
  input: z.object(SymbolAtInput),
  annotations: READ_ONLY,
  needsBridge: true,
  async execute(args, ctx) {
    const abs = await resolveForEditor(ctx.core, args.path);
    const r = await callBridge(ctx, "language.signatureHelp", { path: abs, position: toWirePos(args.position) });
    const lines = r.signatures.map((s, i) => {
      const mark = i === r.activeSignature ? "*" : " ";
      const param = i === r.activeSignature ? s.parameters[r.activeParameter] : undefined;
      return `${mark} ${s.label}${param ? `  (active parameter: ${param})` : ""}${s.documentation ? `\n    ${s.documentation}` : ""}`;
    });
    return {
      text: lines.length ? `Signature(s):\n${lines.join("\n")}` : "No call with a known signature at that position.",
      structured: r,
    };
  },
});
