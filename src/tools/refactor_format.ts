import { z } from "zod";
import { defineTool } from "./kernel.ts";
import { callBridge, RangeInput, resolveForEditor, toWireRange } from "./shared/editor.ts";
import { changedView, changesText, REFACTOR_WRITE, SaveInput } from "./shared/refactor.ts";

export default defineTool({
  name: "refactor_format",
  title: "Format a document",
  description:
    "Format a file, or a range of it, with the workspace's formatter and its settings for the file (tab size, spaces, " +
    "the formatter extension's own settings). Returns a unified diff of the change. Needs the editor bridge.",
  input: z.object({
    path: z.string().describe("The file, relative to the workspace root or absolute inside it."),
    range: RangeInput.optional().describe("Only this range (1-based lines and columns); default: the whole file."),
    save: SaveInput,
  }),
  annotations: REFACTOR_WRITE,
  needsBridge: true,
  async execute(args, ctx) {
    const abs = await resolveForEditor(ctx.core, args.path);
    const r = await callBridge(ctx, "format.apply", {
      path: abs,
      ...(args.range ? { range: toWireRange(args.range) } : {}),
      save: args.save ?? true,
    });
    return {
      text: changesText(ctx.core, "Formatted", r.files),
      structured: { options: r.options, files: r.files.map((f) => changedView(ctx.core, f)) },
    };
  },
});
