import { z } from "zod";
import { READ_ONLY } from "../../../tools/kernel.ts";
import { json, selectionResult } from "../converters.ts";
import { defineIdeTool } from "./tool.ts";

export default defineIdeTool({
  name: "getLatestSelection",
  title: "Latest selection",
  description: "Get the most recent non-empty text selection, even if it is not in the active editor.",
  input: z.object({}),
  annotations: READ_ONLY,
  async execute(_args, ctx) {
    let s = ctx.notifier.latest;
    if (!s) {
      const current = await ctx.editor.currentSelection(ctx.signal);
      s = current && current.text.length > 0 ? current : null;
    }
    return json(selectionResult(s, "No selection available"));
  },
});
