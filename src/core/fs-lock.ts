import { createHash, randomBytes } from "node:crypto";
import { link, lstat, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { CcbError, throwIfAborted } from "./errors.ts";
import type { Dir } from "./fs-safe/dir.ts";
import { privateDir } from "./fs-safe/private.ts";
import { pidAlive } from "./pid.ts";

/**
 * Locks around check-then-replace of one path, so a version check and the rename that follows
 * cannot interleave with another writer:
 * - in process: a per-path async mutex (a promise chain);
 * - across processes: a lock file in ccb's private `locks/` folder (outside the workspace, see
 *   fs-safe/private.ts) named after the target's identity (device and inode of its directory plus
 *   its name, the same in every process whatever path led there), created atomically with
 *   link() (a fully written temp file gets a second name; link fails with EEXIST if the lock is
 *   held). It records pid and host; a lock whose holder is gone (same host, dead pid) or that is
 *   older than `staleMs` is broken. The lock file is removed on release.
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

async function isStale(lockPath: string, staleMs: number): Promise<{ stale: boolean; ino?: number }> {
  try {
    const st = await lstat(lockPath);
    if (Date.now() - st.mtimeMs > staleMs) return { stale: true, ino: st.ino };
    const [pidText, host] = (await readFile(lockPath, "utf8")).split("\n");
    const pid = Number(pidText);
    if (host === hostname() && Number.isInteger(pid) && pid > 0 && !pidAlive(pid)) return { stale: true, ino: st.ino };
    return { stale: false };
  } catch {
    return { stale: false }; // vanished meanwhile: just retry
  }
}

/** Move a stale lock aside, but only if it is still the same file we judged stale. */
async function breakStale(lockPath: string, ino: number): Promise<void> {
  const aside = `${lockPath}.stale-${randomBytes(6).toString("hex")}`;
  try {
    await rename(lockPath, aside);
  } catch {
    return;
  }
  const st = await lstat(aside).catch(() => undefined);
  if (st && st.ino !== ino) {
    // Someone else's fresh lock: put it back if its place is still free.
    await link(aside, lockPath).catch(() => undefined);
  }
  await unlink(aside).catch(() => undefined);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Acquire the cross-process lock of `target`; returns the release function. */
export async function acquireFileLock(target: LockTarget, options: FileLockOptions = {}): Promise<() => Promise<void>> {
  const lockPath = lockPathFor(target);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const staleMs = options.staleMs ?? 30_000;
  const tmp = `${lockPath}.${randomBytes(6).toString("hex")}`;
  await writeFile(tmp, `${process.pid}\n${hostname()}\n`, { flag: "wx", mode: 0o600 });
  const deadline = Date.now() + timeoutMs;
  let delay = 2;
  try {
    for (;;) {
      throwIfAborted(options.signal);
      try {
        await link(tmp, lockPath);
        const ino = (await lstat(lockPath)).ino;
        return async () => {
          const st = await lstat(lockPath).catch(() => undefined);
          if (st?.ino === ino) await unlink(lockPath).catch(() => undefined);
        };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
      const s = await isStale(lockPath, staleMs);
      if (s.stale && s.ino !== undefined) {
        await breakStale(lockPath, s.ino);
        continue;
      }
      if (Date.now() > deadline) {
        throw new CcbError("TIMEOUT", `Timed out waiting for the write lock of ${target.display}.`, {
          hint: `Another ccb process is writing this file. Retry; if it persists, remove ${lockPath}.`,
        });
      }
      await sleep(delay);
      delay = Math.min(delay * 2, 50);
    }
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
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
