import { z } from "zod";
import { TERMINAL_LIMITS as L } from "../core/terminals/types.ts";
import { defineTool } from "./kernel.ts";
import { describeTerminal, TerminalId, terminalStructured } from "./shared/terminal.ts";

export default defineTool({
  name: "terminal_resize",
  title: "Resize a terminal",
  description:
    "Change a running terminal's size in columns and rows: the PTY (programs get SIGWINCH and see the new size) and the " +
    "rendered screen. Pipe terminals (isPty=false) have no size and refuse with UNSUPPORTED.",
  input: z.object({
    id: TerminalId,
    cols: z.number().int().min(L.minCols).max(L.maxCols).describe("New width in columns."),
    rows: z.number().int().min(L.minRows).max(L.maxRows).describe("New height in rows."),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async execute(args, ctx) {
    await ctx.core.terminals.resize(args.id, args.cols, args.rows);
    const info = await ctx.core.terminals.get(args.id);
    return { text: `Resized: ${describeTerminal(info)}`, structured: { terminal: terminalStructured(info) } };
  },
});
