import { z } from "zod";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { callBridge, locationLine, locationView } from "./shared/editor.ts";

export default defineTool({
  name: "language_workspace_symbols",
  title: "Find symbols in the workspace",
  description:
    "Search symbol names (classes, functions, ...) across the workspace with the editor's language services, e.g. to find where a " +
    "class is defined. Returns paths and 1-based positions. Language services may only know projects the editor has opened a file of. " +
    "Needs the editor bridge.",
  input: z.object({
    query: z.string().describe("Symbol name or part of it (fuzzy, as in the editor's Go to Symbol in Workspace)."),
    limit: z.number().int().min(1).max(1000).optional().describe("Most results to return (default 100)."),
  }),
  annotations: READ_ONLY,
  needsBridge: true,
  async execute(args, ctx) {
    const r = await callBridge(ctx, "language.workspaceSymbols", { query: args.query });
    const all = r.symbols.map((s) => ({
      name: s.name,
      kind: s.kind,
      ...(s.containerName ? { containerName: s.containerName } : {}),
      ...locationView(ctx.core, s.location),
    }));
    const symbols = all.slice(0, args.limit ?? 100);
    const lines = symbols.map(
      (s) => `${locationLine(s)} ${s.kind} ${s.containerName ? `${s.containerName}.` : ""}${s.name}`,
    );
    return {
      text: symbols.length
        ? `${all.length} symbol(s) matching "${args.query}":\n${lines.join("\n")}`
        : `No symbols match "${args.query}".`,
      structured: { total: all.length, symbols },
    };
  },
});
