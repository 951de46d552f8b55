import { z } from "zod";
import { text } from "../converters.ts";
import { defineIdeTool } from "./tool.ts";

export default defineIdeTool({
  name: "close_tab",
  description: "Close a tab by name. A pending diff with that name is resolved and closed.",
  input: z.object({ tab_name: z.string().describe("Name of the tab to close") }),
  async run(args, ctx) {
    await ctx.diffs.closeTab(args.tab_name);
    return text("TAB_CLOSED");
  },
});
