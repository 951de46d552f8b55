import { z } from "zod";
import { defineTool } from "./kernel.ts";
import { callBridge, RangeInput, resolveForEditor, toWireRange } from "./shared/editor.ts";

export default defineTool({
  name: "editor_apply_edits",
  title: "Edit a document in the editor",
  description:
    "Apply text edits to a file's live buffer in the editor, as one undoable step, like a person typing: the person sees them, " +
    "they show up as unsaved changes (other tools see the buffer through editor_state) and are written to disk with save: true, or by " +
    "the editor's own auto-save when the person has it on (the web workbench's default: 1 s after an edit; the result says which). " +
    "Ranges are 1-based and refer to the buffer before any edit; edits must not overlap. Pass expectedVersion (from editor_state or " +
    "editor_open) to refuse the edit with VERSION_CONFLICT when the buffer changed meanwhile. Needs the editor bridge.",
  input: z.object({
    path: z.string().describe("File to edit, relative to the workspace root or absolute inside it (it must exist)."),
    edits: z
      .array(
        z.object({
          range: RangeInput.describe("Text to replace (start = end inserts)."),
          newText: z.string().describe("Replacement text (empty deletes)."),
        }),
      )
      .min(1)
      .describe("Non-overlapping edits, positions relative to the current buffer."),
    expectedVersion: z
      .number()
      .int()
      .optional()
      .describe("The editor document version the edits were computed against."),
    save: z
      .boolean()
      .optional()
      .describe(
        "Save the document to disk after editing (default false: leave it to the editor, unsaved or auto-saved).",
      ),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  needsBridge: true,
  async execute(args, ctx) {
    const abs = await resolveForEditor(ctx.core, args.path);
    const r = await callBridge(ctx, "editor.applyEdits", {
      path: abs,
      edits: args.edits.map((e) => ({ range: toWireRange(e.range), newText: e.newText })),
      ...(args.expectedVersion === undefined ? {} : { expectedVersion: args.expectedVersion }),
      save: args.save ?? false,
    });
    const state = r.saved
      ? "saved"
      : r.isDirty
        ? `unsaved changes in the editor${autoSaveNote(r.autoSave)}`
        : "no unsaved changes";
    return {
      text: `${r.applied ? `Applied ${args.edits.length} edit(s) to` : "The editor did not apply the edits to"} ${args.path}: version ${r.version}, ${state}.`,
      structured: { path: args.path, ...r },
    };
  },
});

/** When the editor's own auto-save writes unsaved changes (VS Code's `files.autoSave` modes). */
function autoSaveNote(a: { mode: string; delayMs: number } | undefined): string {
  switch (a?.mode) {
    case "afterDelay":
      return `, which the editor's auto-save (files.autoSave: afterDelay) writes to disk ${a.delayMs} ms after the last edit`;
    case "onFocusChange":
      return ", which the editor's auto-save (files.autoSave: onFocusChange) writes to disk when the editor loses focus";
    case "onWindowChange":
      return ", which the editor's auto-save (files.autoSave: onWindowChange) writes to disk when the window loses focus";
    default:
      return "";
  }
}
