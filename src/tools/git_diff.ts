import { z } from "zod";
import { GIT_DIFF_DEFAULT_MAX_BYTES } from "../core/git/git.ts";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { GitPaths, RepoDir } from "./shared/git.ts";

export default defineTool({
  name: "git_diff",
  title: "Git diff",
  description:
    "Unified diff of the repository containing `path`: unstaged changes (work tree vs index) by default, or staged changes " +
    "(index vs HEAD) with staged:true. Untracked files are not included (git_status lists them). External diff programs and " +
    `textconv filters are never run. Output beyond maxBytes (default ${GIT_DIFF_DEFAULT_MAX_BYTES}) is cut at a line boundary and ` +
    "the result says it was truncated: narrow it with paths.",
  input: z.object({
    path: RepoDir,
    paths: GitPaths,
    staged: z
      .boolean()
      .optional()
      .describe("Diff the index against HEAD (what would be committed) instead of the work tree against the index."),
    contextLines: z
      .number()
      .int()
      .min(0)
      .max(1000)
      .optional()
      .describe("Lines of context around each change (git's -U; default 3)."),
    maxBytes: z
      .number()
      .int()
      .min(1)
      .max(16 * 1024 * 1024)
      .optional()
      .describe(`Cap on the diff in bytes (default ${GIT_DIFF_DEFAULT_MAX_BYTES}).`),
  }),
  annotations: READ_ONLY,
  async execute(args, ctx) {
    const d = await ctx.core.git.diff({ ...args, signal: ctx.signal });
    const what = args.staged ? "staged" : "unstaged";
    let text = d.diff.length > 0 ? d.diff : `No ${what} changes.`;
    if (d.truncated) text += `\n[${d.message}]`;
    return { text, structured: { staged: args.staged === true, ...d } };
  },
});
