import { randomBytes } from "node:crypto";
import { constants, fsyncSync, statSync } from "node:fs";
import { type FileHandle, open, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { CcbError, throwIfAborted, toCcbError } from "../errors.ts";
import { hashStream, readAll, sha256, WHOLE_READ_CAP } from "./read.ts";
import type { Dir } from "./safe/dir.ts";
import { privateDir, tempName } from "./safe/private.ts";

export interface CurrentFile {
  /** SHA-256 of the bytes; null for a hard-linked file, whose content is never looked at. */
  version: string | null;
  mode: number;
  uid: number;
  gid: number;
  nlink: number;
}

/**
 * Version and mode of the regular file `name` in the handle `dir`, null when it does not exist.
 * A file with several hard links is not read (its other names may be outside the workspace, so
 * even its hash would tell the caller something about an outside file): its version is null.
 */
export async function currentFile(
  dir: Dir,
  name: string,
  display: string,
  signal?: AbortSignal,
): Promise<CurrentFile | null> {
  let fh: FileHandle;
  try {
    fh = await open(dir.at(name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    if (code === "ELOOP") {
      throw new CcbError("PATH_OUTSIDE_WORKSPACE", `Refusing to write through a symlink swapped in at ${display}.`, {
        hint: "Retry; the path changed meanwhile.",
      });
    }
    throw toCcbError(err, display);
  }
  try {
    const st = await fh.stat();
    if (st.isDirectory())
      throw new CcbError("IS_DIRECTORY", `Is a directory: ${display}`, {
        hint: "Write to a file path inside it instead.",
      });
    if (!st.isFile())
      throw new CcbError("INVALID_ARGUMENT", `Not a regular file: ${display}`, {
        hint: "Only regular files can be written.",
      });
    const base = { mode: st.mode & 0o7777, uid: st.uid, gid: st.gid, nlink: st.nlink };
    if (st.nlink > 1) return { ...base, version: null };
    const version =
      st.size > WHOLE_READ_CAP ? (await hashStream(fh, signal)).version : sha256(await readAll(fh, st.size, signal));
    return { ...base, version };
  } finally {
    await fh.close();
  }
}

export function versionConflict(display: string, expected: string | null, current: string | null): CcbError {
  const message =
    current === null
      ? `Version conflict on ${display}: it does not exist (expected version ${expected}).`
      : expected === null
        ? `Version conflict on ${display}: it already exists (expected it not to); its current version is ${current}.`
        : `Version conflict on ${display}: it changed since version ${expected}; its current version is ${current}.`;
  return new CcbError("VERSION_CONFLICT", message, {
    hint:
      current === null
        ? "Pass expectedVersion: null to create it, or omit expectedVersion."
        : "Read the file again ({{read}} gives the current version and content), merge your change, and retry with that version.",
    details: { path: display, expectedVersion: expected, currentVersion: current },
  });
}

/** Refusal of a version check on a hard-linked file (its version is never computed). */
export function hardlinkedVersion(display: string): CcbError {
  return new CcbError(
    "PATH_OUTSIDE_WORKSPACE",
    `${display} has several hard links; its version cannot be checked, since its other names may be outside the workspace.`,
    {
      hint: "Write it without expectedVersion to replace this name with a new file (the other links keep the old content).",
    },
  );
}

/** Where the temp file of a write into `dir` goes: ccb's private folder when on the same device. */
function tempPlace(dir: Dir, name: string): { dir: string | Dir; name: string } {
  const random = randomBytes(6).toString("hex");
  try {
    const priv = privateDir("tmp");
    if (statSync(priv).dev === dir.st.dev) return { dir: priv, name: tempName(random) };
  } catch {
    // no private folder: fall back to the target's directory
  }
  return { dir, name: `.${name}.ccb-tmp-${random}` };
}

const at = (d: string | Dir, n: string) => (typeof d === "string" ? join(d, n) : d.at(n));

/**
 * Replace `name` in `dir` atomically with `data`: a temp file (in ccb's private folder when it
 * is on the same file system, so nothing but the target ever appears in the workspace; next to
 * the target otherwise), written and fsynced, given the old file's mode (and owner, where
 * permitted), then renamed onto the entry through the directory handle. The rename gives the
 * entry a new inode, so other hard links of the old file keep their content.
 */
export async function atomicReplace(
  dir: Dir,
  name: string,
  data: Uint8Array,
  current: CurrentFile | null,
  signal?: AbortSignal,
): Promise<void> {
  throwIfAborted(signal);
  let place = tempPlace(dir, name);
  const create = async () =>
    open(
      at(place.dir, place.name),
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      current ? current.mode : 0o666,
    );
  let fh = await create();
  let placed = true;
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
    try {
      await rename(at(place.dir, place.name), dir.at(name));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EXDEV" || typeof place.dir !== "string") throw err;
      // Same device number but another mount: write next to the target instead.
      await unlink(at(place.dir, place.name)).catch(() => undefined);
      place = { dir, name: `.${name}.ccb-tmp-${randomBytes(6).toString("hex")}` };
      fh = await create();
      try {
        if (current) await fh.chmod(current.mode);
        let off = 0;
        while (off < data.length) off += (await fh.write(data, off, data.length - off)).bytesWritten;
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(at(place.dir, place.name), dir.at(name));
    }
    placed = false;
    try {
      fsyncSync(dir.fd);
    } catch {
      // best effort (some file systems refuse fsync on directories)
    }
  } finally {
    if (placed) await unlink(at(place.dir, place.name)).catch(() => undefined);
  }
}
