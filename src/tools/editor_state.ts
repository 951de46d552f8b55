import { z } from "zod";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { callBridge, displayPath, editorLine, editorView, resolveForEditor } from "./shared/editor.ts";

export default defineTool({
  name: "editor_state",
  title: "Live editor state",
  description:
    "What the person sees in the live editor: the active editor and visible editors (path, language, version, unsaved changes, " +
    "selections and visible ranges, 1-based), plus unsaved buffers: the text the person has typed but not saved, which fs_read cannot see. " +
    "Give `path` to get that document's buffer (saved or not). Needs the editor bridge.",
  input: z.object({
    path: z
      .string()
      .optional()
      .describe("A file whose live buffer text to include, relative to the workspace root or absolute inside it."),
    includeText: z
      .boolean()
      .optional()
      .describe("Include the full text of unsaved buffers (default true; false lists them without text)."),
  }),
  annotations: READ_ONLY,
  needsBridge: true,
  async execute(args, ctx) {
    const abs = args.path === undefined ? undefined : await resolveForEditor(ctx.core, args.path, false);
    const includeText = args.includeText ?? true;
    const st = await callBridge(ctx, "editor.state", { ...(abs ? { path: abs } : {}), includeText });
    const lines: string[] = [];
    lines.push(st.active ? `Active editor: ${editorLine(ctx.core, st.active)}` : "No active text editor.");
    const others = st.visible.filter((v) => v.path !== st.active?.path);
    if (others.length) lines.push(`Also visible: ${others.map((v) => editorLine(ctx.core, v)).join("; ")}`);
    const overlays = st.overlays.map((o) => ({
      path: displayPath(ctx.core, o.path),
      version: o.version,
      isDirty: o.isDirty,
      languageId: o.languageId,
      ...(includeText ? { text: o.text } : {}),
    }));
    for (const o of overlays) {
      lines.push(
        `${o.isDirty ? "Unsaved buffer" : "Buffer"} ${o.path} (version ${o.version})${o.text !== undefined ? `:\n${o.text}` : ""}`,
      );
    }
    if (!st.focused) lines.push("(The workbench window is not focused.)");
    return {
      text: lines.join("\n"),
      structured: {
        active: st.active ? editorView(ctx.core, st.active) : null,
        visible: st.visible.map((v) => editorView(ctx.core, v)),
        overlays,
        focused: st.focused,
      },
    };
  },
});
