import { z } from "zod";
import { defineTool } from "./kernel.ts";
import {
  callBridge,
  EDITOR_WRITE,
  editorLine,
  editorView,
  RangeInput,
  resolveForEditor,
  toWireRange,
} from "./shared/editor.ts";

export default defineTool({
  name: "editor_open",
  title: "Open a file in the editor",
  description:
    "Open a workspace file in the live editor (the workbench), optionally selecting a range, and return the editor's state " +
    "(version, unsaved changes, selections). Positions are 1-based. Needs the editor bridge (BRIDGE_UNAVAILABLE otherwise).",
  input: z.object({
    path: z.string().describe("File to open, relative to the workspace root or absolute inside it."),
    selection: RangeInput.optional().describe("Range to select and reveal (1-based lines and columns)."),
    preview: z
      .boolean()
      .optional()
      .describe("Open as a preview tab that the next opened file replaces (default false)."),
    preserveFocus: z.boolean().optional().describe("Keep keyboard focus where it is (default false)."),
  }),
  annotations: { ...EDITOR_WRITE, idempotentHint: true },
  needsBridge: true,
  async execute(args, ctx) {
    const abs = await resolveForEditor(ctx.core, args.path);
    const editor = await callBridge(ctx, "editor.open", {
      path: abs,
      ...(args.selection ? { selection: toWireRange(args.selection) } : {}),
      preview: args.preview ?? false,
      preserveFocus: args.preserveFocus ?? false,
    });
    return { text: `Opened ${editorLine(ctx.core, editor)}.`, structured: { editor: editorView(ctx.core, editor) } };
  },
});
