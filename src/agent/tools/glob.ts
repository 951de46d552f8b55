import { z } from "zod";
import { READ_ONLY } from "../../tools/kernel.ts";
import { absPath, defineAcpTool, truncateForModel } from "./types.ts";

const Input = z.object({
  pattern: z.string().describe('Glob pattern, e.g. "**/*.ts" or "src/**/test_*.py".'),
  path: z.string().optional().describe("Folder to search in (default: the project directory)."),
  limit: z.number().int().positive().max(5000).optional().describe("Maximum number of paths (default 500)."),
});

export const globTool = defineAcpTool({
  name: "glob",
  description: "Find files by glob pattern (respects .gitignore). Returns paths relative to the project, one per line.",
  title: "Find files",
  input: Input,
  annotations: READ_ONLY,
  acp: {
    kind: "search",
    title: (i) => `Find ${i.pattern}${i.path ? ` in ${i.path}` : ""}`,
    locations: (i, ctx) => [{ path: absPath(ctx.cwd, i.path ?? ".") }],
    access: () => ({ category: "read", ruleKey: "glob" }),
  },
  async execute(i, ctx) {
    const base = await ctx.io.resolve(i.path ?? ".");
    const r = await ctx.core.files.list({
      path: base,
      recursive: true,
      include: [i.pattern],
      respectGitignore: true,
      limit: i.limit ?? 500,
      signal: ctx.signal,
    });
    const files = r.entries.filter((e) => e.type === "file").map((e) => e.path);
    if (files.length === 0) return { text: `No files match ${i.pattern}.` };
    return {
      text: truncateForModel(
        files.join("\n") + (r.truncated ? `\n[truncated: more than ${files.length} matches; narrow the pattern]` : ""),
      ),
      rawOutput: { count: files.length, truncated: r.truncated },
    };
  },
});
