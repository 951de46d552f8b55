import { z } from "zod";
import { json, selectionResult } from "../converters.ts";
import { defineIdeTool } from "./tool.ts";

export default defineIdeTool({
  name: "getCurrentSelection",
  description: "Get the current text selection in the active editor.",
  input: z.object({}),
  async run(_args, ctx) {
    const s = await ctx.editor.currentSelection(ctx.signal);
    return json(selectionResult(s, "No active editor found"));
  },
});
