import { z } from "zod";
import type { SymbolNodeT } from "../editor-wire/contract.ts";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { callBridge, fromWireRange, resolveForEditor } from "./shared/editor.ts";

interface SymbolView {
  name: string;
  kind: string;
  detail?: string;
  line: number;
  endLine: number;
  children: SymbolView[];
}

function view(s: SymbolNodeT): SymbolView {
  const r = fromWireRange(s.range);
  return {
    name: s.name,
    kind: s.kind,
    ...(s.detail ? { detail: s.detail } : {}),
    line: r.start.line,
    endLine: r.end.line,
    children: s.children.map(view),
  };
}

function outline(list: SymbolView[], depth: number, out: string[]): void {
  for (const s of list) {
    out.push(
      `${"  ".repeat(depth)}${s.kind} ${s.name}${s.detail ? ` ${s.detail}` : ""} (lines ${s.line}-${s.endLine})`,
    );
    outline(s.children, depth + 1, out);
  }
}

export default defineTool({
  name: "language_document_symbols",
  title: "Outline of a file",
  description:
    "The symbols of one file (classes, functions, methods, variables...) as the editor's language service sees them, nested, " +
    "with 1-based line ranges. Cheaper than reading the whole file to find where something is. Needs the editor bridge.",
  input: z.object({
    path: z.string().describe("File to outline, relative to the workspace root or absolute inside it."),
  }),
  annotations: READ_ONLY,
  needsBridge: true,
  async execute(args, ctx) {
    const abs = await resolveForEditor(ctx.core, args.path);
    const r = await callBridge(ctx, "language.documentSymbols", { path: abs });
    const symbols = r.symbols.map(view);
    const lines: string[] = [];
    outline(symbols, 0, lines);
    return {
      text: symbols.length
        ? `Symbols of ${args.path}:\n${lines.join("\n")}`
        : `No symbols in ${args.path} (no language service for it, or it is still loading).`,
      structured: { path: args.path, symbols },
    };
  },
});
