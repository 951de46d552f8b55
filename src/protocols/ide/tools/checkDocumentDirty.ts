import { z } from "zod";
import { READ_ONLY } from "../../../tools/kernel.ts";
import { json } from "../converters.ts";
import { defineIdeTool } from "./tool.ts";

export default defineIdeTool({
  name: "checkDocumentDirty",
  title: "Unsaved changes?",
  description: "Check whether a document has unsaved changes.",
  input: z.object({ filePath: z.string().describe("Path of the file to check") }),
  annotations: READ_ONLY,
  async execute(args, ctx) {
    const abs = ctx.workspace.lexical(args.filePath);
    const st = await ctx.editor.documentState(abs, ctx.signal);
    if (!st.open) return json({ success: false, message: `Document not open: ${args.filePath}` });
    return json({ success: true, filePath: abs, isDirty: st.isDirty, isUntitled: st.isUntitled });
  },
});
