import { z } from "zod";
import { text } from "../converters.ts";
import { defineIdeTool } from "./tool.ts";

export default defineIdeTool({
  name: "closeAllDiffTabs",
  description: "Close all diff tabs this IDE server opened (never the user's own diffs).",
  input: z.object({}),
  async run(_args, ctx) {
    const n = await ctx.diffs.closeAll();
    return text(`CLOSED_${n}_DIFF_TABS`);
  },
});
