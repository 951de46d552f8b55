import { z } from "zod";
import { CcbError } from "../core/errors.ts";
import { defineTool } from "./kernel.ts";
import { TerminalId } from "./shared/terminal.ts";

/** Named keys and the bytes a terminal sends for them. */
const KEYS = {
  enter: "\r",
  tab: "\t",
  escape: "\u001b",
  backspace: "\u007f",
  "ctrl+c": "\u0003",
  "ctrl+d": "\u0004",
  "ctrl+z": "\u001a",
  "ctrl+l": "\u000c",
  up: "\u001b[A",
  down: "\u001b[B",
  right: "\u001b[C",
  left: "\u001b[D",
} as const;

export default defineTool({
  name: "terminal_write",
  title: "Type into a terminal",
  description:
    'Type text into a running terminal, as if at its keyboard: a trailing newline presses Enter, so "ls -la\\n" runs ls in a ' +
    'shell (full-screen programs in raw mode want keys ["enter"] instead). `keys` appends named keys after the text (ctrl+c interrupts, ctrl+d ends input, arrows, tab, escape). Returns the ' +
    'output offset at the time of writing: call terminal_read with that offset, view "output" and a waitMs to get the ' +
    "response. Anything typed runs with the user's rights. On a pipe terminal (isPty=false) control keys are plain bytes: use " +
    "terminal_kill with signal SIGINT to interrupt.",
  input: z.object({
    id: TerminalId,
    data: z
      .string()
      .max(1024 * 1024)
      .optional()
      .describe('Text to type; "\\n" presses Enter. May be omitted when only keys are sent.'),
    keys: z
      .array(z.enum(Object.keys(KEYS) as [keyof typeof KEYS, ...(keyof typeof KEYS)[]]))
      .max(100)
      .optional()
      .describe('Named keys to press after the text, in order (e.g. ["ctrl+c"] or ["up", "enter"]).'),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  async execute(args, ctx) {
    const text = (args.data ?? "") + (args.keys ?? []).map((k) => KEYS[k]).join("");
    if (text.length === 0) {
      throw new CcbError("INVALID_ARGUMENT", "Nothing to write.", {
        hint: "Pass `data` (text to type) and/or `keys`.",
      });
    }
    const offset = await ctx.core.terminals.write(args.id, text);
    return {
      text:
        `Wrote ${text.length} characters to ${args.id}.\n` +
        `Next: terminal_read {"id":"${args.id}","offset":${offset},"view":"output","waitMs":2000} for the response.`,
      structured: { id: args.id, written: text.length, offset },
    };
  },
});
