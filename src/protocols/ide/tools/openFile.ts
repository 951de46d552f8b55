import { z } from "zod";
import { isCcbError } from "../../../core/errors.ts";
import { errorResult, json, text } from "../converters.ts";
import { defineIdeTool, IDE_VIEW } from "./tool.ts";

export default defineIdeTool({
  name: "openFile",
  title: "Open a file",
  description:
    "Open a file in the editor and optionally select a range of text between two text patterns. Relative paths resolve against the first workspace folder.",
  input: z.object({
    filePath: z.string().describe("Path to the file to open"),
    preview: z.boolean().default(false).describe("Whether to open the file in preview mode"),
    startText: z.string().optional().describe("Text pattern to find the start of the selection range"),
    endText: z.string().optional().describe("Text pattern to find the end of the selection range"),
    selectToEndOfLine: z.boolean().default(false).describe("Extend the selection to the end of the line"),
    makeFrontmost: z.boolean().default(true).describe("Make the file the active editor tab"),
  }),
  annotations: IDE_VIEW,
  async execute(args, ctx) {
    let abs: string;
    try {
      abs = (await ctx.workspace.resolve(args.filePath, { mustExist: true })).abs;
    } catch (err) {
      // the CLI's own wording for a missing file, without a code
      if (isCcbError(err, "NOT_FOUND")) return errorResult(`File not found: ${args.filePath}`);
      throw err;
    }
    const r = await ctx.editor.openFile(
      {
        path: abs,
        preview: args.preview,
        startText: args.startText === "" ? undefined : args.startText,
        endText: args.endText === "" ? undefined : args.endText,
        selectToEndOfLine: args.selectToEndOfLine,
        makeFrontmost: args.makeFrontmost,
      },
      ctx.signal,
    );
    if (args.makeFrontmost) return text(`Opened file: ${abs}`);
    return json({ success: true, filePath: abs, languageId: r.languageId, lineCount: r.lineCount });
  },
});
