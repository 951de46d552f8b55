import { z } from "zod";
import { defineTool } from "./kernel.ts";
import {
  callBridge,
  EDITOR_WRITE,
  editorLine,
  editorView,
  PositionInput,
  resolveForEditor,
  toWirePos,
} from "./shared/editor.ts";

export default defineTool({
  name: "editor_set_selection",
  title: "Set the editor selection",
  description:
    "Move the cursor or select ranges in a file in the live editor (opening it if needed) and reveal the first one. " +
    "1-based positions; an empty selection (anchor = active) is a cursor. Needs the editor bridge.",
  input: z.object({
    path: z.string().describe("File whose selection to set, relative to the workspace root or absolute inside it."),
    selections: z
      .array(
        z.object({
          anchor: PositionInput.describe("Where the selection starts."),
          active: PositionInput.describe("Where the cursor ends up."),
        }),
      )
      .min(1)
      .describe("One or more selections; the first is the primary one."),
    reveal: z.boolean().optional().describe("Scroll the first selection into view (default true)."),
  }),
  annotations: { ...EDITOR_WRITE, idempotentHint: true },
  needsBridge: true,
  async execute(args, ctx) {
    const abs = await resolveForEditor(ctx.core, args.path);
    const editor = await callBridge(ctx, "editor.setSelection", {
      path: abs,
      selections: args.selections.map((s) => ({ anchor: toWirePos(s.anchor), active: toWirePos(s.active) })),
      reveal: args.reveal ?? true,
    });
    return {
      text: `Selection set: ${editorLine(ctx.core, editor)}.`,
      structured: { editor: editorView(ctx.core, editor) },
    };
  },
});
