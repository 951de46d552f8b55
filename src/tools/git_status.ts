import { z } from "zod";
import type { GitStatus, GitStatusEntry } from "../core/git/git.ts";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { GitPaths, RepoDir } from "./shared/git.ts";

function entryLine(e: GitStatusEntry): string {
  const xy = `${e.index}${e.worktree}`;
  return e.origPath !== undefined ? `${xy} ${e.origPath} -> ${e.path}` : `${xy} ${e.path}`;
}

export function formatStatus(s: GitStatus): string {
  let head = `## ${s.detached ? `HEAD (detached at ${s.oid?.slice(0, 12) ?? "?"})` : (s.branch ?? "?")}`;
  if (s.upstream) head += `...${s.upstream}`;
  const ab = [s.ahead ? `ahead ${s.ahead}` : "", s.behind ? `behind ${s.behind}` : ""].filter(Boolean);
  if (ab.length) head += ` [${ab.join(", ")}]`;
  if (!s.oid && !s.detached) head += " (no commits yet)";
  const lines = [`repository ${s.repo}`, head];
  if (s.clean) lines.push("clean: nothing to commit, no untracked files");
  else lines.push(...s.entries.map(entryLine));
  return lines.join("\n");
}

export default defineTool({
  name: "git_status",
  title: "Git status",
  description:
    "Status of the git repository containing `path`: branch, upstream, commits ahead/behind, and one entry per changed file with " +
    "its index (staged) and work-tree (unstaged) status letters (M modified, A added, D deleted, R renamed with origPath, " +
    "T type change, U unmerged, `.` unchanged, `?` untracked). Paths are relative to the repository root. Read-only: it does not " +
    "refresh the index. Refused (GIT_REFUSED) while the repository config sets a program-running key such as a filter driver.",
  input: z.object({
    path: RepoDir,
    paths: GitPaths,
    untracked: z
      .boolean()
      .optional()
      .describe("List untracked files (default true; every file, not just directories)."),
  }),
  annotations: READ_ONLY,
  async execute(args, ctx) {
    const s = await ctx.core.git.status({
      path: args.path,
      paths: args.paths,
      untracked: args.untracked,
      signal: ctx.signal,
    });
    return { text: formatStatus(s), structured: { ...s } };
  },
});
