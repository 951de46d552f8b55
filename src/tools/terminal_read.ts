import { z } from "zod";
import { TERMINAL_LIMITS as L } from "../core/terminals/types.ts";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { describeTerminal, plainOutput, TerminalId, terminalStructured } from "./shared/terminal.ts";

export default defineTool({
  name: "terminal_read",
  title: "Read a terminal",
  description:
    "Read a terminal: its rendered screen as plain text (what a person would see, after cursor movement and redraws) and/or " +
    "its raw output since `offset`. To follow output incrementally, pass the `nextOffset` of the previous read; `dropped` says " +
    "when older output no longer fits the bounded buffer. `waitMs` waits for new output (or the exit) before answering, which " +
    "is the way to wait for a command to finish printing. The state line tells whether it is still running or its exit code.",
  input: z.object({
    id: TerminalId,
    view: z
      .enum(["screen", "output", "both"])
      .optional()
      .describe(
        '"screen" (default): the rendered screen; "output": raw output since offset (escape codes removed in the text); "both".',
      ),
    offset: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("Read raw output from this offset (a previous nextOffset); default the oldest output still held."),
    maxBytes: z
      .number()
      .int()
      .min(0)
      .max(L.maxReadBytes)
      .optional()
      .describe("Cap on the raw output returned, in characters (default 262144)."),
    scrollback: z
      .boolean()
      .optional()
      .describe("Include the lines scrolled off the top of the screen (default false)."),
    waitMs: z
      .number()
      .int()
      .min(0)
      .max(L.maxWaitMs)
      .optional()
      .describe(
        "If there is no output after offset yet, wait up to this many milliseconds for some (or for the exit). Default 0.",
      ),
  }),
  annotations: READ_ONLY,
  async execute(args, ctx) {
    const view = args.view ?? "screen";
    const r = await ctx.core.terminals.read(args.id, {
      offset: args.offset,
      maxBytes: args.maxBytes,
      scrollback: args.scrollback,
      waitMs: args.waitMs,
      signal: ctx.signal,
    });
    const parts = [describeTerminal(r.info)];
    const range = `output ${r.from}-${r.nextOffset} of ${r.end}; nextOffset ${r.nextOffset}`;
    parts.push(r.dropped ? `${range} (older output was dropped: the buffer is bounded)` : range);
    if (r.nextOffset < r.end) parts.push(`[more output: read again with offset ${r.nextOffset}]`);
    if (view !== "output")
      parts.push(`--- screen (cursor at row ${r.cursor.y + 1}, column ${r.cursor.x + 1}) ---`, r.screen);
    if (view !== "screen") parts.push("--- output ---", plainOutput(r.output));
    return {
      text: parts.join("\n"),
      structured: {
        terminal: terminalStructured(r.info),
        ...(view !== "output" ? { screen: r.screen, cursor: r.cursor } : {}),
        ...(view !== "screen" ? { output: r.output } : {}),
        from: r.from,
        nextOffset: r.nextOffset,
        end: r.end,
        dropped: r.dropped,
      },
    };
  },
});
