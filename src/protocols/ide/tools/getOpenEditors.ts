import { z } from "zod";
import { json, openEditorsPayload } from "../converters.ts";
import { defineIdeTool } from "./tool.ts";

export default defineIdeTool({
  name: "getOpenEditors",
  description: "Get the tabs currently open in the editor.",
  input: z.object({}),
  async run(_args, ctx) {
    return json(openEditorsPayload(await ctx.editor.openEditors(ctx.signal)));
  },
});
