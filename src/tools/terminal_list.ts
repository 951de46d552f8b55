import { z } from "zod";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { describeTerminal, terminalStructured } from "./shared/terminal.ts";

export default defineTool({
  name: "terminal_list",
  title: "List terminals",
  description:
    "List the terminals of this workspace (started by tools or shown in the workbench): id, command, state (running, exit code " +
    "or signal), pid, backend (PTY or pipe), size and cwd. Exited terminals stay listed (their output can still be read) until " +
    "removed with terminal_kill remove=true.",
  input: z.object({
    running: z.boolean().optional().describe("Only running terminals (true) or only exited ones (false); default all."),
  }),
  annotations: READ_ONLY,
  async execute(args, ctx) {
    const all = await ctx.core.terminals.list();
    const list = args.running === undefined ? all : all.filter((t) => t.running === args.running);
    const text = list.length === 0 ? "No terminals." : list.map(describeTerminal).join("\n");
    return { text, structured: { terminals: list.map(terminalStructured) } };
  },
});
