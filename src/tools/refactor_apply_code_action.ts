import { z } from "zod";
import { defineTool } from "./kernel.ts";
import { callBridge } from "./shared/editor.ts";
import { changedView, changesText, REFACTOR_WRITE, SaveInput } from "./shared/refactor.ts";

export default defineTool({
  name: "refactor_apply_code_action",
  title: "Apply a code action",
  description:
    "Apply a code action or quick fix listed by refactor_code_actions, by its id: its edit (all files or none), then its command. " +
    "Refused (VERSION_CONFLICT) when the file changed since the list. Returns a unified diff of every file it changed. " +
    "A language extension's command runs inside the workbench. Needs the editor bridge.",
  input: z.object({
    id: z.string().min(1).describe('The id from refactor_code_actions, e.g. "a12".'),
    save: SaveInput,
  }),
  annotations: REFACTOR_WRITE,
  needsBridge: true,
  async execute(args, ctx) {
    ctx.core.bridge.require();
    const r = await callBridge(ctx, "codeActions.apply", { id: args.id, save: args.save ?? true });
    return {
      text: changesText(ctx.core, `Applied "${r.title}"`, r.files),
      structured: {
        title: r.title,
        ...(r.command ? { command: r.command } : {}),
        files: r.files.map((f) => changedView(ctx.core, f)),
      },
    };
  },
});
