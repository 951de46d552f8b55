import { z } from "zod";
import { text } from "../converters.ts";
import { defineIdeTool, IDE_VIEW } from "./tool.ts";

export default defineIdeTool({
  name: "closeAllDiffTabs",
  title: "Close all diff tabs",
  description: "Close all diff tabs this IDE server opened (never the user's own diffs).",
  input: z.object({}),
  annotations: IDE_VIEW,
  async execute(_args, ctx) {
    const n = await ctx.diffs.closeAll();
    return text(`CLOSED_${n}_DIFF_TABS`);
  },
});
