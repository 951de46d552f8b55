import { CcbError } from "../../errors.ts";
import { type Dir, lstatAt, openDirAt, readdirHandle } from "./dir.ts";

/**
 * Directories git treats as a repository, which the file tools never change: git reads their
 * `config`, `hooks/` and `info/attributes`, and those name programs it runs.
 *
 * git takes a directory for a git dir when it has `HEAD` plus `objects/` and `refs/` (a normal or
 * bare repository, or one made with `--separate-git-dir`), or `HEAD` plus `commondir` / `gitdir`
 * (a linked worktree's admin dir; a `gitdir:` pointer file names one of these). Entries named
 * `.git` (a folder or a pointer file) are protected as well.
 */
export function isGitDir(dir: Dir, adding?: string): boolean {
  const has = (n: string) => n === adding || lstatAt(dir, n) !== undefined;
  if (!has("HEAD")) return false;
  return (has("objects") && has("refs")) || has("commondir") || has("gitdir");
}

export function gitDirRefusal(display: string): CcbError {
  return new CcbError(
    "PERMISSION_DENIED",
    `${display} is inside a git repository's own folder (a .git folder or a directory git uses as one); the file tools do not change git's own files.`,
    {
      hint: "Use {{git}} (e.g. git config, git update-ref) to change the repository.",
    },
  );
}

/**
 * Throw when the tree at `dir` (inclusive) holds a `.git` entry or a git dir: deleting, moving or
 * replacing it would delete or move a nested repository's own folder.
 */
export function assertNoRepoInside(dir: Dir, display: string, budget = { n: 200_000 }): void {
  if (isGitDir(dir)) throw nestedRefusal(display);
  for (const d of readdirHandle(dir)) {
    if (--budget.n < 0)
      throw new CcbError("TOO_LARGE", `${display} has too many entries to check.`, {
        hint: "Delete or move it in smaller parts, or use a terminal.",
      });
    if (d.name === ".git") throw nestedRefusal(display);
    if (!d.isDirectory()) continue;
    let child: Dir;
    try {
      child = openDirAt(dir, d.name);
    } catch {
      continue; // swapped or vanished meanwhile: the operation itself re-checks every entry
    }
    try {
      assertNoRepoInside(child, `${display}/${d.name}`, budget);
    } finally {
      child.close();
    }
  }
}

function nestedRefusal(display: string): CcbError {
  return new CcbError(
    "PERMISSION_DENIED",
    `${display} is or contains a git repository's own folder (.git or a git dir); the file tools never delete, move or replace it.`,
    {
      hint: "Delete or move the files around it, or use a terminal if you really mean to remove a repository.",
    },
  );
}
