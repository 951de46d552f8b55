import { z } from "zod";
import { json, openEditorsPayload } from "../converters.ts";
import { defineIdeTool, IDE_READ } from "./tool.ts";

export default defineIdeTool({
  name: "getOpenEditors",
  title: "Open editors",
  description: "Get the tabs currently open in the editor.",
  input: z.object({}),
  annotations: IDE_READ,
  async execute(_args, ctx) {
    return json(openEditorsPayload(await ctx.editor.openEditors(ctx.signal)));
  },
});
