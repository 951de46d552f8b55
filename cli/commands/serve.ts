import { defineCommand } from "citty";
import { commonArgs } from "../common.ts";

// SKELETON: the MCP front end replaces this.
export default defineCommand({
  meta: { name: "serve", description: "MCP server over the shared workspace (not implemented yet)" },
  args: { ...commonArgs },
  run() {
    process.stderr.write("ccb serve: not implemented yet\n");
    process.exit(2);
  },
});
