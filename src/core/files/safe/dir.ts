import {
  closeSync,
  constants,
  type Dirent,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  type Stats,
  statSync,
} from "node:fs";
import { join } from "node:path";
import { CcbError } from "../../errors.ts";

/**
 * Directory handles: the building block of race-free path resolution.
 *
 * A `Dir` is an open file descriptor on a directory (opened `O_DIRECTORY|O_NOFOLLOW`, verified
 * with fstat). Entries are addressed relative to it as `/proc/self/fd/<fd>/<name>`: the kernel
 * follows the magic link to the directory the descriptor holds (wherever it has been renamed to)
 * and then looks up `name` in it, exactly as the `*at()` system calls would with that descriptor.
 * Renaming or exchanging directories or symlinks elsewhere cannot change which directory `name`
 * is looked up in, and `O_NOFOLLOW` (or the no-follow semantics of lstat, unlink, rmdir, rename,
 * link, mkdir) keeps the last component from being followed.
 *
 * Where /proc is not mounted (macOS, BSD), the handle's own absolute path is used instead: each
 * component is still opened with `O_NOFOLLOW` and verified, but a parent swapped between two
 * calls is not detected there.
 */

const O_DIR = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

function probeProcFd(): boolean {
  if (process.platform !== "linux") return false;
  let fd: number | undefined;
  try {
    fd = openSync("/", constants.O_RDONLY | constants.O_DIRECTORY);
    return statSync(`/proc/self/fd/${fd}/.`).isDirectory();
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** True when entries can be addressed through `/proc/self/fd/<fd>/<name>` (Linux with /proc). */
export const PROC_FD = probeProcFd();

/** A name of one directory entry: no separator, not `.`/`..`, not empty, at most 255 bytes. */
export function checkName(name: string): void {
  if (name === "" || name === "." || name === ".." || name.includes("/") || name.includes("\0")) {
    throw new CcbError("INVALID_PATH", `Invalid path component: ${JSON.stringify(name)}`, {
      hint: "Use a plain relative path inside the workspace.",
    });
  }
  if (Buffer.byteLength(name) > 255) {
    throw new CcbError("PATH_TOO_LONG", `A path component is longer than 255 bytes: ${name.slice(0, 40)}...`, {
      hint: "File and directory names may have at most 255 bytes; choose a shorter name.",
    });
  }
}

export class Dir {
  #closed = false;
  constructor(
    readonly fd: number,
    /** Absolute path it was opened under (for display and the non-/proc fallback). */
    readonly abs: string,
    readonly st: Stats,
  ) {}

  /** The path that names this directory itself. */
  get self(): string {
    return PROC_FD ? `/proc/self/fd/${this.fd}` : this.abs;
  }

  /** The path that names entry `name` of this directory, relative to the handle. */
  at(name: string): string {
    checkName(name);
    return PROC_FD ? `/proc/self/fd/${this.fd}/${name}` : join(this.abs, name);
  }

  /** A second handle on the same directory. */
  reopen(): Dir {
    const fd = openSync(PROC_FD ? `/proc/self/fd/${this.fd}/.` : this.abs, O_DIR);
    return new Dir(fd, this.abs, fstatSync(fd));
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
  }
}

/** Open a directory by absolute path (a workspace root): O_NOFOLLOW, fstat-verified. */
export function openDirPath(abs: string): Dir {
  const fd = openSync(abs, O_DIR);
  try {
    const st = fstatSync(fd);
    if (!st.isDirectory()) throw Object.assign(new Error(`not a directory: ${abs}`), { code: "ENOTDIR" });
    return new Dir(fd, abs, st);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** Open sub-directory `name` of `dir` without following a symlink (ELOOP / ENOTDIR otherwise). */
export function openDirAt(dir: Dir, name: string): Dir {
  const fd = openSync(dir.at(name), O_DIR);
  try {
    const st = fstatSync(fd);
    if (!st.isDirectory()) throw Object.assign(new Error(`not a directory: ${name}`), { code: "ENOTDIR" });
    return new Dir(fd, join(dir.abs, name), st);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** lstat of entry `name`, or undefined when it does not exist. */
export function lstatAt(dir: Dir, name: string): Stats | undefined {
  try {
    return lstatSync(dir.at(name));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw err;
  }
}

/** Create sub-directory `name` (an existing entry of any kind is left as it is). */
export function mkdirAt(dir: Dir, name: string): void {
  try {
    mkdirSync(dir.at(name), 0o777);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
}

/** Entries of the directory the handle holds. */
export function readdirHandle(dir: Dir): Dirent[] {
  return readdirSync(dir.self, { withFileTypes: true });
}

/**
 * Handle on directory `rel` ("/" separators, "" for the root) under the trusted absolute root,
 * every component opened relative to the previous handle without following symlinks.
 */
export function openDirBeneath(rootAbs: string, rel: string): Dir {
  let dir = openDirPath(rootAbs);
  if (rel === "") return dir;
  try {
    for (const name of rel.split("/")) {
      const child = openDirAt(dir, name);
      dir.close();
      dir = child;
    }
    return dir;
  } catch (err) {
    dir.close();
    throw err;
  }
}

/** Content of the single-linked regular file `name` in `dir` (no symlink followed), undefined when there is none. */
export function readSmallAt(dir: Dir, name: string, max = 4 * 1024 * 1024): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(dir.at(name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.nlink > 1 || st.size > max) return undefined;
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}
