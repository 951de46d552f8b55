import { z } from "zod";
import { json } from "../converters.ts";
import { defineIdeTool } from "./tool.ts";

export default defineIdeTool({
  name: "saveDocument",
  title: "Save a document",
  description: "Save a document that has unsaved changes.",
  input: z.object({ filePath: z.string().describe("Path of the file to save") }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async execute(args, ctx) {
    const abs = (await ctx.workspace.resolve(args.filePath)).abs;
    const r = await ctx.editor.saveDocument(abs, ctx.signal);
    if (!r.open) return json({ success: false, message: `Document not open: ${args.filePath}` });
    return json({
      success: true,
      filePath: abs,
      saved: r.saved,
      message: r.saved ? "Document saved successfully" : "Document could not be saved",
    });
  },
});
