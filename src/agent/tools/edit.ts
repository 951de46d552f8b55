import { z } from "zod";
import { CcbError } from "../../core/errors.ts";
import { diffContent } from "../converters.ts";
import { type AgentToolContext, absPath, defineAcpTool } from "./types.ts";

const Input = z.object({
  path: z.string().describe("File to edit: absolute, or relative to the project directory."),
  old_string: z
    .string()
    .min(1)
    .describe("Exact text to replace (must match the file byte for byte, including indentation)."),
  new_string: z.string().describe("Replacement text."),
  replace_all: z
    .boolean()
    .optional()
    .describe("Replace every occurrence (default: old_string must occur exactly once)."),
});
type EditInput = z.infer<typeof Input>;

/** The edit applied to `text`, or a CcbError that tells the model how to fix its call. */
export function applyEdit(text: string, i: EditInput, abs: string): string {
  const count = text.split(i.old_string).length - 1;
  if (count === 0)
    throw new CcbError("NOT_FOUND", `old_string was not found in ${abs}.`, {
      hint: "Read the file again and copy the exact text, including whitespace.",
    });
  if (count > 1 && !i.replace_all) {
    throw new CcbError("INVALID_ARGUMENT", `old_string occurs ${count} times in ${abs}.`, {
      hint: "Add surrounding lines to make it unique, or set replace_all.",
    });
  }
  return i.replace_all ? text.split(i.old_string).join(i.new_string) : text.replace(i.old_string, () => i.new_string);
}

/** 1-based line where old_string first occurs. */
function firstChangedLine(text: string, oldString: string): number {
  return text.slice(0, Math.max(0, text.indexOf(oldString))).split("\n").length;
}

async function compute(i: EditInput, ctx: AgentToolContext): Promise<{ abs: string; old: string; next: string }> {
  const abs = await ctx.io.resolve(i.path);
  const old = await ctx.io.readText(abs, ctx.signal);
  if (old === null)
    throw new CcbError("NOT_FOUND", `No such file: ${abs}`, { hint: "Use write to create a new file." });
  return { abs, old, next: applyEdit(old, i, abs) };
}

export const editTool = defineAcpTool({
  name: "edit",
  description:
    "Replace exact text in a file (old_string -> new_string). old_string must be unique unless replace_all is set. Read the file first.",
  title: "Edit a file",
  input: Input,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  acp: {
    kind: "edit",
    title: (i) => `Edit ${i.path}`,
    locations: (i, ctx) => [{ path: absPath(ctx.cwd, i.path) }],
    access: () => ({ category: "edit", ruleKey: "edit" }),
    async preview(i, ctx) {
      const { abs, old, next } = await compute(i, ctx);
      ctx.progress?.({ locations: [{ path: abs, line: firstChangedLine(old, i.old_string) }] });
      return [diffContent(abs, old, next)];
    },
  },
  async execute(i, ctx) {
    const { abs, old, next } = await compute(i, ctx);
    await ctx.io.writeText(abs, next, ctx.signal);
    const line = firstChangedLine(old, i.old_string);
    return {
      text: `Edited ${abs} (first change at line ${line}).`,
      content: [diffContent(abs, old, next)],
      locations: [{ path: abs, line }],
    };
  },
});
