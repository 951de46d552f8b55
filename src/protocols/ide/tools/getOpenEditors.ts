import { z } from "zod";
import { READ_ONLY } from "../../../tools/kernel.ts";
import { json, openEditorsPayload } from "../converters.ts";
import { defineIdeTool } from "./tool.ts";

export default defineIdeTool({
  name: "getOpenEditors",
  title: "Open editors",
  description: "Get the tabs currently open in the editor.",
  input: z.object({}),
  annotations: READ_ONLY,
  async execute(_args, ctx) {
    return json(openEditorsPayload(await ctx.editor.openEditors(ctx.signal)));
  },
});
