import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { lstat, open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { CcbError, throwIfAborted, toCcbError } from "./errors.ts";
import { hashStream, readAll, sha256, WHOLE_READ_CAP } from "./fs-read.ts";

export interface CurrentFile {
  version: string;
  mode: number;
  uid: number;
  gid: number;
  nlink: number;
}

/** Version and mode of the regular file at `abs`, null when it does not exist. */
export async function currentFile(abs: string, display: string, signal?: AbortSignal): Promise<CurrentFile | null> {
  let fh;
  try {
    fh = await open(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    if (code === "ELOOP") {
      throw new CcbError("PATH_OUTSIDE_WORKSPACE", `Refusing to write through a symlink swapped in at ${display}.`, { hint: "Retry; the path changed meanwhile." });
    }
    throw toCcbError(err, display);
  }
  try {
    const st = await fh.stat();
    if (st.isDirectory()) throw new CcbError("IS_DIRECTORY", `Is a directory: ${display}`, { hint: "Write to a file path inside it instead." });
    if (!st.isFile()) throw new CcbError("INVALID_ARGUMENT", `Not a regular file: ${display}`, { hint: "Only regular files can be written." });
    const version = st.size > WHOLE_READ_CAP ? (await hashStream(fh, signal)).version : sha256(await readAll(fh, st.size, signal));
    return { version, mode: st.mode & 0o7777, uid: st.uid, gid: st.gid, nlink: st.nlink };
  } finally {
    await fh.close();
  }
}

export function versionConflict(display: string, expected: string | null, current: string | null): CcbError {
  const message = current === null
    ? `Version conflict on ${display}: it does not exist (expected version ${expected}).`
    : expected === null
      ? `Version conflict on ${display}: it already exists (expected it not to); its current version is ${current}.`
      : `Version conflict on ${display}: it changed since version ${expected}; its current version is ${current}.`;
  return new CcbError("VERSION_CONFLICT", message, {
    hint: current === null
      ? "Pass expectedVersion: null to create it, or omit expectedVersion."
      : "Read the file again (fs_read gives the current version and content), merge your change, and retry with that version.",
    details: { path: display, expectedVersion: expected, currentVersion: current },
  });
}

/**
 * Replace `abs` atomically with `data`: a temp file in the same directory, written and fsynced,
 * given the old file's mode (and owner, where permitted), then renamed over the target. The
 * rename gives the path a new inode, so other hard links of the old file keep their content.
 */
export async function atomicReplace(abs: string, data: Uint8Array, current: CurrentFile | null, signal?: AbortSignal): Promise<void> {
  throwIfAborted(signal);
  const dir = dirname(abs);
  const tmp = join(dir, `.${basename(abs)}.ccb-tmp-${randomBytes(6).toString("hex")}`);
  const fh = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, current ? current.mode : 0o666);
  let renamed = false;
  try {
    try {
      if (current) {
        await fh.chmod(current.mode);
        await fh.chown(current.uid, current.gid).catch(() => undefined);
      }
      let off = 0;
      while (off < data.length) {
        const { bytesWritten } = await fh.write(data, off, data.length - off);
        off += bytesWritten;
      }
      await fh.sync();
    } finally {
      await fh.close();
    }
    throwIfAborted(signal);
    await rename(tmp, abs);
    renamed = true;
    await syncDir(dir);
  } finally {
    if (!renamed) await unlink(tmp).catch(() => undefined);
  }
}

async function syncDir(dir: string): Promise<void> {
  try {
    const d = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  } catch {
    // best effort (some file systems refuse fsync on directories)
  }
}

/** Whether something (anything, even a dangling link) exists at `abs`. */
export async function lexists(abs: string): Promise<boolean> {
  return lstat(abs).then(
    () => true,
    () => false,
  );
}
