import { z } from "zod";
import { SEVERITIES } from "../editor-wire/contract.ts";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { callBridge, displayPath, fromWireRange, rangeText, resolveForEditor } from "./shared/editor.ts";

export default defineTool({
  name: "diagnostics_get",
  title: "Problems (diagnostics)",
  description:
    "Errors, warnings, information and hints the editor's language services report (the Problems panel), for one file or all files. " +
    "Positions are 1-based. Language services analyse files the editor has seen: open a file first (editor_open) if it is not listed. " +
    "Needs the editor bridge.",
  input: z.object({
    path: z
      .string()
      .optional()
      .describe("Only this file (relative to the workspace root or absolute inside it). Omit for all files."),
    minSeverity: z
      .enum(SEVERITIES)
      .optional()
      .describe("Leave out diagnostics less severe than this (error > warning > information > hint). Default: all."),
  }),
  annotations: READ_ONLY,
  needsBridge: true,
  async execute(args, ctx) {
    const abs = args.path === undefined ? undefined : await resolveForEditor(ctx.core, args.path, false);
    const r = await callBridge(ctx, "diagnostics.get", abs ? { path: abs } : {});
    const cutoff = SEVERITIES.indexOf(args.minSeverity ?? "hint");
    const files = r.files
      .map((f) => ({
        path: displayPath(ctx.core, f.path),
        diagnostics: f.diagnostics
          .filter((d) => SEVERITIES.indexOf(d.severity) <= cutoff)
          .map((d) => ({ ...d, range: fromWireRange(d.range) })),
      }))
      .filter((f) => f.diagnostics.length > 0);
    const count = files.reduce((n, f) => n + f.diagnostics.length, 0);
    const lines = [
      count === 0
        ? `No diagnostics${args.path ? ` for ${args.path}` : ""}.`
        : `${count} diagnostic(s) in ${files.length} file(s):`,
    ];
    for (const f of files) {
      for (const d of f.diagnostics) {
        lines.push(
          `${f.path}:${rangeText(d.range)} ${d.severity}: ${d.message}${d.source ? ` [${d.source}${d.code !== undefined ? ` ${d.code}` : ""}]` : ""}`,
        );
      }
    }
    return { text: lines.join("\n"), structured: { count, files } };
  },
});
