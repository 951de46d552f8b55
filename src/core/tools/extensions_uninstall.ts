import { z } from "zod";
import { CcbError } from "../errors.ts";
import { defineTool, READ_ONLY } from "../tool.ts";

// SKELETON (to be replaced by its owner): registered so the registry compiles.
export default defineTool({
  name: "extensions_uninstall",
  title: "extensions_uninstall",
  description: "Not implemented yet.",
  input: z.object({}),
  annotations: READ_ONLY,
  async execute() {
    throw new CcbError("UNSUPPORTED", "extensions_uninstall is not implemented yet");
  },
});
