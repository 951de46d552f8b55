import { z } from "zod";
import { CcbError } from "../core/errors.ts";
import { defineTool } from "./kernel.ts";
import { actionLine } from "./refactor_code_actions.ts";
import { callBridge, languageReady, resolveForEditor } from "./shared/editor.ts";
import { changedView, changesText, REFACTOR_WRITE, SaveInput } from "./shared/refactor.ts";

export default defineTool({
  name: "refactor_source_action",
  title: "Organize imports / fix all",
  description:
    "Run a whole-file source action of the editor's language service: organize imports (the default), fix all auto-fixable " +
    'problems ("source.fixAll"), or another kind such as "source.addMissingImports" or "source.removeUnused" ' +
    "(TypeScript's kinds end in .ts; a prefix matches). Returns a unified diff of every file it changed. Needs the editor bridge.",
  input: z.object({
    path: z.string().describe("The file, relative to the workspace root or absolute inside it."),
    kind: z
      .string()
      .optional()
      .describe(
        'The code action kind (default "source.organizeImports"), e.g. "source.fixAll" or "source.removeUnused".',
      ),
    save: SaveInput,
  }),
  annotations: REFACTOR_WRITE,
  needsBridge: true,
  async execute(args, ctx) {
    const abs = await resolveForEditor(ctx.core, args.path);
    await languageReady(ctx, abs);
    const kind = args.kind ?? "source.organizeImports";
    const { actions } = await callBridge(ctx, "codeActions.list", { path: abs, kind });
    const usable = actions.filter((a) => !a.disabled && (a.kind === kind || a.kind?.startsWith(`${kind}.`)));
    const action = usable.find((a) => a.isPreferred) ?? usable[0];
    if (!action)
      throw new CcbError("NOT_FOUND", `No "${kind}" action for this file.`, {
        hint: actions.length
          ? `Offered instead: ${actions.map(actionLine).join("; ")}`
          : "List what is offered with refactor_code_actions.",
      });
    const r = await callBridge(ctx, "codeActions.apply", { id: action.id, save: args.save ?? true });
    return {
      text: changesText(ctx.core, `${r.title} (${action.kind})`, r.files),
      structured: { title: r.title, kind: action.kind, files: r.files.map((f) => changedView(ctx.core, f)) },
    };
  },
});
