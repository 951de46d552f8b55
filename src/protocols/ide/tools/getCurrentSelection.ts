import { z } from "zod";
import { READ_ONLY } from "../../../tools/kernel.ts";
import { json, selectionResult } from "../converters.ts";
import { defineIdeTool } from "./tool.ts";

export default defineIdeTool({
  name: "getCurrentSelection",
  title: "Current selection",
  description: "Get the current text selection in the active editor.",
  input: z.object({}),
  annotations: READ_ONLY,
  async execute(_args, ctx) {
    const s = await ctx.editor.currentSelection(ctx.signal);
    return json(selectionResult(s, "No active editor found"));
  },
});
