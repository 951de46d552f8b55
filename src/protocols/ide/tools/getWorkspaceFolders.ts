import { z } from "zod";
import { json, workspaceFoldersPayload } from "../converters.ts";
import { defineIdeTool } from "./tool.ts";

export default defineIdeTool({
  name: "getWorkspaceFolders",
  description: "Get the workspace folders open in the IDE.",
  input: z.object({}),
  async run(_args, ctx) {
    return json(workspaceFoldersPayload(ctx.workspace.roots));
  },
});
