import { createHash } from "node:crypto";
import { join } from "node:path";
import { CcbError } from "../errors.ts";
import { acquireLockFile } from "../lock-file.ts";
import type { Dir } from "./safe/dir.ts";
import { privateDir } from "./safe/private.ts";

/**
 * Locks around check-then-replace of one path, so a version check and the rename that follows
 * cannot interleave with another writer:
 * - in process: a per-path async mutex (a promise chain);
 * - across processes: a lock file (lock-file.ts) in ccb's private `locks/` folder (outside the
 *   workspace, see files/safe/private.ts) named after the target's identity (device and inode of its
 *   directory plus its name, the same in every process whatever path led there).
 * Writers that are not ccb (an editor) do not take the lock; the version check still narrows the
 * window to one rename.
 */

const chains = new Map<string, Promise<void>>();

/** Run `fn` while holding the in-process mutex of `key`. */
export async function withMutex<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const prev = chains.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((r) => {
    release = r;
  });
  const tail = prev.then(() => mine);
  chains.set(key, tail);
  await prev;
  try {
    return await fn();
  } finally {
    release();
    if (chains.get(key) === tail) chains.delete(key);
  }
}

export interface FileLockOptions {
  /** Give up after this long (TIMEOUT). Default 10 s. */
  timeoutMs?: number;
  /** A lock older than this is considered abandoned. Default 30 s. */
  staleMs?: number;
  signal?: AbortSignal;
}

/** The lock of one entry: `id` identifies it across processes, `display` names it in messages. */
export interface LockTarget {
  id: string;
  display: string;
}

/** The lock target of entry `name` of the directory handle `dir`. */
export function lockTargetAt(dir: Dir, name: string, display: string): LockTarget {
  return { id: `${dir.st.dev}:${dir.st.ino}/${name}`, display };
}

export function lockPathFor(target: LockTarget): string {
  const key = createHash("sha256").update(target.id).digest("hex").slice(0, 40);
  return join(privateDir("locks"), `${key}.ccb-lock`);
}

/** Acquire the cross-process lock of `target`; returns the release function. */
export async function acquireFileLock(target: LockTarget, options: FileLockOptions = {}): Promise<() => Promise<void>> {
  const lockPath = lockPathFor(target);
  return acquireLockFile(lockPath, {
    timeoutMs: options.timeoutMs ?? 10_000,
    staleMs: options.staleMs ?? 30_000,
    signal: options.signal,
    timeoutError: () =>
      new CcbError("TIMEOUT", `Timed out waiting for the write lock of ${target.display}.`, {
        hint: `Another ccb process is writing this file. Retry; if it persists, remove ${lockPath}.`,
      }),
  });
}

/** In-process mutex plus cross-process lock file around `fn`. */
export async function withWriteLock<T>(
  target: LockTarget,
  fn: () => Promise<T>,
  options: FileLockOptions = {},
): Promise<T> {
  return withMutex(target.id, async () => {
    const release = await acquireFileLock(target, options);
    try {
      return await fn();
    } finally {
      await release();
    }
  });
}
