import { z } from "zod";
import { CcbError } from "../../core/errors.ts";
import { READ_ONLY } from "../../tools/kernel.ts";
import { textContent } from "../converters.ts";
import { absPath, defineAcpTool, truncateForModel } from "./types.ts";

const Input = z.object({
  path: z.string().describe("File to read: absolute, or relative to the project directory."),
  offset: z.number().int().positive().optional().describe("1-based first line to read."),
  limit: z.number().int().positive().optional().describe("Number of lines to read (default 2000)."),
});

export const readTool = defineAcpTool({
  name: "read",
  description:
    "Read a text file. Returns lines prefixed with their 1-based line numbers. Use offset/limit for large files.",
  title: "Read a file",
  input: Input,
  annotations: READ_ONLY,
  acp: {
    kind: "read",
    title: (i) => `Read ${i.path}${i.offset ? ` (from line ${i.offset})` : ""}`,
    locations: (i, ctx) => [{ path: absPath(ctx.cwd, i.path), line: i.offset ?? 1 }],
    access: () => ({ category: "read", ruleKey: "read" }),
  },
  async execute(i, ctx) {
    const abs = await ctx.io.resolve(i.path);
    const text = await ctx.io.readText(abs, ctx.signal);
    if (text === null)
      throw new CcbError("NOT_FOUND", `No such file: ${abs}`, { hint: "Use glob to find the right path." });
    const lines = text.split("\n");
    const start = (i.offset ?? 1) - 1;
    const slice = lines.slice(start, start + (i.limit ?? 2000));
    const numbered = slice.map((l, n) => `${String(start + n + 1).padStart(6)}\t${l}`).join("\n");
    const more =
      start + slice.length < lines.length
        ? `\n[${lines.length - start - slice.length} more lines; use offset ${start + slice.length + 1}]`
        : "";
    // the client sees what the model read (a fenced block), and where
    const shown = slice.join("\n");
    const fence = "`".repeat(Math.max(3, ...[...shown.matchAll(/`{3,}/g)].map((m) => m[0].length + 1)));
    return {
      text: truncateForModel(numbered + more),
      content: [textContent(`${fence}\n${truncateForModel(shown)}\n${fence}`)],
      locations: [{ path: abs, line: start + 1 }],
    };
  },
});
