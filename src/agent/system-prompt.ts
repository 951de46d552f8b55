import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { GitStatus } from "../core/git/git.ts";
import type { ModeId } from "./modes.ts";

export interface PromptFacts {
  cwd: string;
  /** More workspace roots besides cwd (session option additionalDirectories). */
  extraRoots?: readonly string[];
  platform: string;
  date: string;
  git: GitStatus | undefined;
  mode: ModeId;
  toolNames: string[];
}

/** Project instructions: AGENTS.md and CLAUDE.md (and .claude/CLAUDE.md) at the project root. */
export function projectInstructions(cwd: string): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  for (const f of ["AGENTS.md", "CLAUDE.md", join(".claude", "CLAUDE.md")]) {
    const p = join(cwd, f);
    if (!existsSync(p)) continue;
    try {
      out.push({ file: f, text: readFileSync(p, "utf8").slice(0, 40_000) });
    } catch {
      // unreadable: skipped
    }
  }
  return out;
}

export function systemPrompt(f: PromptFacts): string {
  const git = f.git
    ? `Git: branch ${f.git.branch ?? "(detached)"}${f.git.upstream ? `, upstream ${f.git.upstream} (ahead ${f.git.ahead}, behind ${f.git.behind})` : ""}; ${
        f.git.clean
          ? "working tree clean"
          : `${f.git.entries.length} changed paths:\n${f.git.entries
              .slice(0, 30)
              .map((e) => `  ${e.index}${e.worktree} ${e.path}`)
              .join("\n")}`
      }`
    : "Git: not a git repository (or git unavailable).";
  const instr = projectInstructions(f.cwd)
    .map((i) => `<project-instructions file="${i.file}">\n${i.text}\n</project-instructions>`)
    .join("\n\n");
  const plan =
    f.mode === "plan"
      ? "\n\nYou are in PLAN MODE: only read-only tools work. Explore, then call exit_plan_mode with a concrete plan. Make no changes before the user approves it."
      : "";
  return `You are ccb, a coding agent working inside the user's editor through the Agent Client Protocol.
Work in the project directory with the tools (${f.toolNames.join(", ")}). Read files before editing them; make the smallest correct change; use edit for changes to existing files and write for new files; run tests with bash when useful. Keep answers short and concrete. Use todo_write to track multi-step work.

<environment>
Working directory: ${f.cwd}${f.extraRoots?.length ? `\nAlso in the workspace: ${f.extraRoots.join(", ")}` : ""}
Platform: ${f.platform}
Date: ${f.date}
${git}
</environment>${plan}${instr ? `\n\n${instr}` : ""}`;
}
