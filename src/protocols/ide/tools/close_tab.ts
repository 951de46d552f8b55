import { z } from "zod";
import { text } from "../converters.ts";
import { defineIdeTool, IDE_VIEW } from "./tool.ts";

export default defineIdeTool({
  name: "close_tab",
  title: "Close a tab",
  description: "Close a tab by name. A pending diff with that name is resolved and closed.",
  input: z.object({ tab_name: z.string().describe("Name of the tab to close") }),
  annotations: IDE_VIEW,
  async execute(args, ctx) {
    await ctx.diffs.closeTab(args.tab_name);
    return text("TAB_CLOSED");
  },
});
