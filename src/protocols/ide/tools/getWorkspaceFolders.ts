import { z } from "zod";
import { READ_ONLY } from "../../../tools/kernel.ts";
import { json, workspaceFoldersPayload } from "../converters.ts";
import { defineIdeTool } from "./tool.ts";

export default defineIdeTool({
  name: "getWorkspaceFolders",
  title: "Workspace folders",
  description: "Get the workspace folders open in the IDE.",
  input: z.object({}),
  annotations: READ_ONLY,
  async execute(_args, ctx) {
    return json(workspaceFoldersPayload(ctx.workspace.roots));
  },
});
