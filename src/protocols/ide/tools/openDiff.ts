import { z } from "zod";
import { defineIdeTool } from "./tool.ts";

export default defineIdeTool({
  name: "openDiff",
  title: "Propose a change in a diff tab",
  description:
    "Open a diff view comparing a file with proposed new contents and wait until the user accepts (FILE_SAVED + final contents) or rejects (DIFF_REJECTED + tab name) it. The IDE does not write the file.",
  input: z.object({
    old_file_path: z.string().describe("Path of the file being changed"),
    new_file_path: z.string().describe("Path the new contents are for (usually the same)"),
    new_file_contents: z.string().describe("The proposed contents"),
    tab_name: z.string().describe("Name of the diff tab; a new diff with the same name replaces the old one"),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async execute(args, ctx) {
    const target = (await ctx.workspace.resolve(args.new_file_path || args.old_file_path)).abs;
    return ctx.diffs.open(
      { path: target, newContents: args.new_file_contents, tabName: args.tab_name, connectionId: ctx.connectionId },
      ctx.signal,
    );
  },
});
