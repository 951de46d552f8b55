import { constants, linkSync, renameSync, rmdirSync, unlinkSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { CcbError, throwIfAborted } from "../../errors.ts";
import { hashStream, readAll, sha256, WHOLE_READ_CAP } from "../read.ts";
import { type Dir, openDirAt, readdirHandle } from "./dir.ts";
import { assertNoRepoInside, isGitDir } from "./gitdir.ts";

/**
 * Recursive delete and move through directory handles. Every entry is removed as
 * `parent.at(name)` of a handle opened without following symlinks, so a directory swapped for a
 * symlink mid-way only loses the link itself, never what it points to. Nested repositories
 * (`.git` entries and git dirs) are refused before anything is removed, and again on the way.
 */
export function removeTree(parent: Dir, name: string, display: string, signal?: AbortSignal): void {
  const dir = openDirAt(parent, name);
  try {
    assertNoRepoInside(dir, display);
    emptyDir(dir, display, signal);
  } finally {
    dir.close();
  }
  rmdirSync(parent.at(name));
}

function emptyDir(dir: Dir, display: string, signal: AbortSignal | undefined): void {
  if (isGitDir(dir)) throw repo(display);
  for (const d of readdirHandle(dir)) {
    throwIfAborted(signal);
    if (d.name === ".git") throw repo(`${display}/.git`);
    if (!d.isDirectory()) {
      unlinkSync(dir.at(d.name));
      continue;
    }
    let child: Dir;
    try {
      child = openDirAt(dir, d.name);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "ELOOP" && code !== "ENOTDIR") throw err;
      unlinkSync(dir.at(d.name)); // swapped for a symlink or file meanwhile: remove that entry itself
      continue;
    }
    try {
      emptyDir(child, `${display}/${d.name}`, signal);
    } finally {
      child.close();
    }
    rmdirSync(dir.at(d.name));
  }
}

function repo(display: string): CcbError {
  return new CcbError(
    "PERMISSION_DENIED",
    `${display} is a git repository's own folder; the file tools never delete it.`,
    {
      hint: "Delete the files around it, or use a terminal if you really mean to remove a repository.",
    },
  );
}

/**
 * Move entry `from` of `fromDir` to `to` of `toDir`. Without `replace`, files go through
 * link()+unlink() so a destination that appears meanwhile is never replaced.
 */
export function moveAt(fromDir: Dir, from: string, toDir: Dir, to: string, noReplace: boolean): void {
  if (!noReplace) {
    renameSync(fromDir.at(from), toDir.at(to));
    return;
  }
  try {
    linkSync(fromDir.at(from), toDir.at(to));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "EPERM" && code !== "ENOTSUP") throw err;
    renameSync(fromDir.at(from), toDir.at(to)); // file system without hard links
    return;
  }
  unlinkSync(fromDir.at(from));
}

/** SHA-256 of the single-linked regular file `name` of `dir` (no symlink followed). */
export async function hashAt(dir: Dir, name: string): Promise<string | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(dir.at(name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = await fh.stat();
    if (!st.isFile() || st.nlink > 1) return undefined;
    return st.size > WHOLE_READ_CAP ? (await hashStream(fh)).version : sha256(await readAll(fh, st.size));
  } catch {
    return undefined;
  } finally {
    await fh.close();
  }
}
