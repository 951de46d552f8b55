import { z } from "zod";
import { diffContent } from "../converters.ts";
import { absPath, defineAcpTool } from "./types.ts";

const Input = z.object({
  path: z.string().describe("File to create or overwrite: absolute, or relative to the project directory."),
  content: z.string().describe("The complete new content of the file."),
});

export const writeTool = defineAcpTool({
  name: "write",
  description: "Create a file or replace its whole content. Prefer `edit` for changes to existing files.",
  title: "Write a file",
  input: Input,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  acp: {
    kind: "edit",
    title: (i) => `Write ${i.path}`,
    locations: (i, ctx) => [{ path: absPath(ctx.cwd, i.path) }],
    access: () => ({ category: "edit", ruleKey: "edit" }),
    async preview(i, ctx) {
      const abs = await ctx.io.resolve(i.path);
      return [diffContent(abs, await ctx.io.readText(abs, ctx.signal), i.content)];
    },
  },
  async execute(i, ctx) {
    const abs = await ctx.io.resolve(i.path);
    const old = await ctx.io.readText(abs, ctx.signal);
    await ctx.io.writeText(abs, i.content, ctx.signal);
    return {
      text: `${old === null ? "Created" : "Wrote"} ${abs} (${i.content.length} characters).`,
      content: [diffContent(abs, old, i.content)],
    };
  },
});
