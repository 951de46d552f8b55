import { z } from "zod";
import type { Core } from "../../core/core.ts";
import { CcbError } from "../../core/errors.ts";
import type { ChangedFile, PlannedFile } from "../../editor-wire/contract.ts";
import { unifiedDiff } from "../../util/unified-diff.ts";
import type { ToolAnnotations } from "../kernel.ts";
import { displayPath } from "./editor.ts";

/**
 * Shared by the refactor tools: how an edit the editor made (or would make) reads for a model — one
 * unified diff per file, workspace paths — and the annotations of tools that change files.
 */

/** Changes files through the editor; the workspace's language extensions compute the edits. */
export const REFACTOR_WRITE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: false,
};

export const SaveInput = z
  .boolean()
  .optional()
  .describe(
    "Save the changed files (default true). A file with unsaved changes in the editor keeps the edit in its buffer, unsaved: those changes are the person's.",
  );

const MAX_DIFF = 60_000;

/** The diffs of changed (or planned) files, cut at a size a model can read. */
export function diffsText(core: Core, files: readonly { path: string; before: string; after: string }[]): string {
  const text = files.map((f) => unifiedDiff(displayPath(core, f.path), f.before, f.after)).join("");
  return text.length > MAX_DIFF ? `${text.slice(0, MAX_DIFF)}\n... (diff cut at ${MAX_DIFF} characters)\n` : text;
}

/** A changed file as tools report it (no texts: the diff shows them). */
export function changedView(core: Core, f: ChangedFile) {
  return { path: displayPath(core, f.path), saved: f.saved, leftUnsaved: f.wasDirty };
}

/** "3 file(s) changed (2 saved; 1 left unsaved ...)" and the diffs. */
export function changesText(core: Core, what: string, files: readonly ChangedFile[]): string {
  if (!files.length) return `${what}: no change.`;
  const unsaved = files.filter((f) => f.wasDirty).map((f) => displayPath(core, f.path));
  const saved = files.filter((f) => f.saved).length;
  const notes = [`${saved} saved`];
  if (unsaved.length) notes.push(`left unsaved in the editor, which had unsaved changes: ${unsaved.join(", ")}`);
  return `${what}: ${files.length} file(s) changed (${notes.join("; ")}).\n${diffsText(core, files)}`;
}

/** Every file of a planned edit must be a workspace file: one outside refuses the whole edit. */
export async function confinePlan(core: Core, files: readonly PlannedFile[]): Promise<void> {
  for (const f of files) {
    try {
      await core.workspace.resolve(f.path);
    } catch (err) {
      if (err instanceof CcbError && err.code === "PATH_OUTSIDE_WORKSPACE")
        throw new CcbError("PATH_OUTSIDE_WORKSPACE", "The edit would change a file outside the workspace; refused.", {
          hint: "Only symbols whose every use is inside the workspace can be changed this way.",
        });
      throw err;
    }
  }
}
