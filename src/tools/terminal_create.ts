import { z } from "zod";
import { TERMINAL_LIMITS as L } from "../core/terminals/types.ts";
import { defineTool } from "./kernel.ts";
import { describeTerminal, terminalStructured } from "./shared/terminal.ts";

export default defineTool({
  name: "terminal_create",
  title: "Start a terminal",
  description:
    "Start a program in a new terminal (a real PTY: node-pty under Node, Bun's terminal in the ccb binary; a pipe fallback says " +
    "so with isPty=false). Without `command` it starts the user's shell, in which terminal_write types commands. `command` is " +
    'one program, not a shell line: give its arguments in `args`, or run a line with command "bash", args ["-lc", "..."]. ' +
    "The cwd must lie inside the workspace. Returns the terminal id; read its screen and output with terminal_read, and kill " +
    "it with terminal_kill when done. Commands run with the user's rights: they can change files and reach the network.",
  input: z.object({
    command: z
      .string()
      .min(1)
      .optional()
      .describe("Program to run (looked up on PATH); default the user's shell ($SHELL, else bash, else sh)."),
    args: z.array(z.string()).max(L.maxArgs).optional().describe("Arguments for the program."),
    cwd: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Working directory relative to the workspace root, or absolute inside a root; default the primary root.",
      ),
    env: z
      .record(z.string(), z.string())
      .optional()
      .describe("Extra environment variables, merged over ccb's own environment (ccb's tokens are never passed on)."),
    cols: z.number().int().min(L.minCols).max(L.maxCols).optional().describe("Width in columns (default 120)."),
    rows: z.number().int().min(L.minRows).max(L.maxRows).optional().describe("Height in rows (default 30)."),
    title: z
      .string()
      .max(L.maxTitle)
      .optional()
      .describe("A name to show in terminal_list (default the program name)."),
    input: z
      .string()
      .optional()
      .describe('Text to type right after the start, e.g. "npm test\\n" (a newline presses Enter).'),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  async execute(args, ctx) {
    const { input, ...options } = args;
    const info = await ctx.core.terminals.create({
      ...options,
      origin: "tool",
      ...(ctx.caller?.identity ? { startedBy: ctx.caller.identity } : {}),
    });
    if (input) await ctx.core.terminals.write(info.id, input);
    const pipeNote = info.isPty
      ? ""
      : "\nNote: no PTY is available here, so this terminal is a pipe: programs see no TTY (no prompt, no line editing) and it cannot be resized.";
    return {
      text: `Started ${describeTerminal(info)}${pipeNote}\nNext: terminal_read {"id":"${info.id}"} to see its screen; terminal_write to type into it.`,
      structured: { terminal: terminalStructured(info) },
    };
  },
});
