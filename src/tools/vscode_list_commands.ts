import { z } from "zod";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { callBridge } from "./shared/editor.ts";

export default defineTool({
  name: "vscode_list_commands",
  title: "List editor commands",
  description:
    "List the command ids registered in the live workbench (built-in and extension commands), for vscode_execute_command. " +
    "Filter by a case-insensitive substring. Needs the editor bridge.",
  input: z.object({
    filter: z.string().optional().describe('Case-insensitive substring the command id must contain, e.g. "format".'),
    includeInternal: z
      .boolean()
      .optional()
      .describe("Include internal commands whose ids start with an underscore (default false)."),
    limit: z.number().int().min(1).max(5000).optional().describe("Most ids to return (default 500)."),
  }),
  annotations: READ_ONLY,
  needsBridge: true,
  async execute(args, ctx) {
    const r = await callBridge(ctx, "commands.list", {
      ...(args.filter === undefined ? {} : { filter: args.filter }),
      includeInternal: args.includeInternal ?? false,
    });
    const limit = args.limit ?? 500;
    const commands = [...r.commands].sort().slice(0, limit);
    const truncated = r.commands.length > commands.length;
    return {
      text: `${r.commands.length} command(s)${truncated ? `, first ${limit} shown` : ""}:\n${commands.join("\n")}`,
      structured: { total: r.commands.length, truncated, commands },
    };
  },
});
