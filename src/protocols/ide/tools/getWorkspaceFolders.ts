import { z } from "zod";
import { json, workspaceFoldersPayload } from "../converters.ts";
import { defineIdeTool, IDE_READ } from "./tool.ts";

export default defineIdeTool({
  name: "getWorkspaceFolders",
  title: "Workspace folders",
  description: "Get the workspace folders open in the IDE.",
  input: z.object({}),
  annotations: IDE_READ,
  async execute(_args, ctx) {
    return json(workspaceFoldersPayload(ctx.workspace.roots));
  },
});
