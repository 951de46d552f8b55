import { z } from "zod";
import { CcbError } from "../errors.ts";
import { defineTool, READ_ONLY } from "../tool.ts";

// SKELETON (to be replaced by its owner): registered so the registry compiles.
export default defineTool({
  name: "vscode_execute_command",
  title: "vscode_execute_command",
  description: "Not implemented yet.",
  input: z.object({}),
  annotations: READ_ONLY,
  async execute() {
    throw new CcbError("UNSUPPORTED", "vscode_execute_command is not implemented yet");
  },
});
