import { z } from "zod";
import { defineTool } from "./kernel.ts";
import { describeTerminal, TerminalId, terminalStructured } from "./shared/terminal.ts";

export default defineTool({
  name: "terminal_kill",
  title: "Kill a terminal",
  description:
    "End a terminal: send `signal` (default SIGTERM) to its whole process group and session, background jobs included, and " +
    "SIGKILL whatever is still running after a grace period. Reports the exit code or signal. Killing an exited terminal " +
    "just reports its state. With remove=true the terminal is also forgotten (it disappears from terminal_list and its " +
    "output can no longer be read).",
  input: z.object({
    id: TerminalId,
    signal: z
      .enum(["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGKILL", "SIGUSR1", "SIGUSR2"])
      .optional()
      .describe(
        "Signal to send first (default SIGTERM); SIGKILL follows if the terminal has not exited after the grace period.",
      ),
    remove: z.boolean().optional().describe("Also forget the terminal and its output (default false)."),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async execute(args, ctx) {
    const info = await ctx.core.terminals.kill(args.id, args.signal ?? "SIGTERM");
    if (args.remove) await ctx.core.terminals.remove(args.id);
    return {
      text: `${args.remove ? "Killed and removed" : "Killed"}: ${describeTerminal(info)}`,
      structured: { terminal: terminalStructured(info), removed: args.remove ?? false },
    };
  },
});
