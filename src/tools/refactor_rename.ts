import { createHash } from "node:crypto";
import { z } from "zod";
import { CcbError } from "../core/errors.ts";
import type { PlannedFile } from "../editor-wire/contract.ts";
import { defineTool } from "./kernel.ts";
import { callBridge, displayPath, languageReady, resolveForEditor, SymbolAtInput, toWirePos } from "./shared/editor.ts";
import { changedView, changesText, confinePlan, diffsText, REFACTOR_WRITE, SaveInput } from "./shared/refactor.ts";

/** The id of a rename plan: the new name, and each file's path, text hash and edits. Any change, another id. */
function planId(newName: string, files: readonly PlannedFile[]): string {
  const h = createHash("sha256").update(newName);
  for (const f of files) h.update(`\0${f.path}\0${f.hash}\0${JSON.stringify(f.edits)}`);
  return h.digest("hex").slice(0, 16);
}

export default defineTool({
  name: "refactor_rename",
  title: "Rename a symbol",
  description:
    "Rename the symbol at a position everywhere it is used, with the editor's language service (every file, imports included; " +
    "unsaved editor buffers are used as they are). Without `apply` it only previews: a unified diff per file and a previewId. " +
    "With apply=true it changes all files or none; give the previewId to refuse the rename (VERSION_CONFLICT) when any file " +
    "changed since that preview. Files are saved, except buffers with unsaved changes, which keep the rename unsaved. " +
    "One call replaces a search plus one edit per file. Needs the editor bridge.",
  input: z.object({
    ...SymbolAtInput,
    newName: z.string().min(1).max(500).describe("The new name."),
    apply: z.boolean().optional().describe("Apply the rename (default false: preview only)."),
    previewId: z
      .string()
      .optional()
      .describe(
        "With apply: the previewId of the preview you checked; the rename is refused if anything changed since.",
      ),
    save: SaveInput,
  }),
  annotations: REFACTOR_WRITE,
  needsBridge: true,
  async execute(args, ctx) {
    const abs = await resolveForEditor(ctx.core, args.path);
    await languageReady(ctx, abs);
    const r = await callBridge(ctx, "refactor.rename", {
      path: abs,
      position: toWirePos(args.position),
      newName: args.newName,
    });
    await confinePlan(ctx.core, r.files);
    const id = planId(args.newName, r.files);
    const edits = r.files.reduce((n, f) => n + f.edits.length, 0);
    const files = r.files.map((f) => ({ path: displayPath(ctx.core, f.path), edits: f.edits.length }));
    if (!args.apply) {
      // the diff is in the structured result too: some hosts (the claude CLI) show the model only that
      const diff = diffsText(ctx.core, r.files);
      return {
        text:
          `Rename to ${args.newName}: ${edits} edit(s) in ${files.length} file(s), not applied. previewId: ${id}\n` +
          `Apply with apply=true and previewId="${id}".\n${diff}`,
        structured: { applied: false, previewId: id, edits, files, diff },
      };
    }
    if (args.previewId !== undefined && args.previewId !== id)
      throw new CcbError("VERSION_CONFLICT", "The files changed since that preview; nothing was renamed.", {
        hint: "Preview the rename again, check the new diff, and apply with its previewId.",
      });
    const applied = await callBridge(ctx, "edits.apply", {
      files: r.files.map((f) => ({ path: f.path, hash: f.hash, edits: f.edits })),
      save: args.save ?? true,
    });
    return {
      text: changesText(ctx.core, `Renamed to ${args.newName} (${edits} edit(s))`, applied.files),
      structured: { applied: true, previewId: id, edits, files: applied.files.map((f) => changedView(ctx.core, f)) },
    };
  },
});
