import type { HintNames } from "../../core/errors.ts";

/**
 * The Claude Code CLI's own tools that play each role a core hint can name: the IDE server's model
 * is `claude`'s, which has no ccb file, git or terminal tools (it has its own).
 */
export const CLAUDE_HINT_NAMES: HintNames = {
  list: "Glob",
  read: "Read",
  write: "Write",
  git: "Bash (git)",
  gitStatus: "Bash (git status)",
  gitDiff: "Bash (git diff)",
  terminal: "Bash",
};
