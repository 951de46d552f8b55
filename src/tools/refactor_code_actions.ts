import { z } from "zod";
import type { CodeActionInfo } from "../editor-wire/contract.ts";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { callBridge, languageReady, RangeInput, resolveForEditor, toWireRange } from "./shared/editor.ts";

export function actionLine(a: CodeActionInfo): string {
  const notes = [a.isPreferred ? "preferred" : "", a.disabled ? `disabled: ${a.disabled}` : ""].filter(Boolean);
  const fixes = a.diagnostics.length ? ` — fixes: ${a.diagnostics.join("; ")}` : "";
  return `${a.id} [${a.kind ?? "command"}] ${a.title}${notes.length ? ` (${notes.join(", ")})` : ""}${fixes}`;
}

export default defineTool({
  name: "refactor_code_actions",
  title: "List code actions and quick fixes",
  description:
    "The code actions the editor offers for a range of a file (the whole file when no range): quick fixes for its diagnostics " +
    '(e.g. "Add import", "Remove unused declaration"), refactorings and source actions, each with an id, kind and title. ' +
    "Apply one with refactor_apply_code_action and its id (ids are valid while the file is unchanged). " +
    'Filter with kind: "quickfix", "refactor", "source.organizeImports", "source.fixAll"... Needs the editor bridge.',
  input: z.object({
    path: z.string().describe("The file, relative to the workspace root or absolute inside it."),
    range: RangeInput.optional().describe(
      "The range (1-based lines and columns) to ask about; default: the whole file.",
    ),
    kind: z
      .string()
      .optional()
      .describe('Only actions of this kind or a sub-kind, e.g. "quickfix" or "refactor.extract".'),
  }),
  annotations: READ_ONLY,
  needsBridge: true,
  async execute(args, ctx) {
    const abs = await resolveForEditor(ctx.core, args.path);
    await languageReady(ctx, abs);
    const r = await callBridge(ctx, "codeActions.list", {
      path: abs,
      ...(args.range ? { range: toWireRange(args.range) } : {}),
      ...(args.kind ? { kind: args.kind } : {}),
    });
    return {
      text: r.actions.length
        ? `${r.actions.length} code action(s) (apply one with refactor_apply_code_action):\n${r.actions.map(actionLine).join("\n")}`
        : "No code actions there.",
      structured: { actions: r.actions },
    };
  },
});
