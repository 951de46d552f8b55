import { randomBytes } from "node:crypto";
import { link, lstat, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { type CcbError, throwIfAborted } from "./errors.ts";
import { pidAlive } from "./pid.ts";

/**
 * The one cross-process lock-file algorithm of ccb (file write locks, the shared workbench's
 * record lock): a fully written temp file gets a second name, `lockPath`, with link() — EEXIST
 * while another holder has it. The file records pid and host; a lock whose holder is gone (same
 * host, dead pid) or that is older than `staleMs` is moved aside and removed, but only if it is
 * still the file judged stale. Release removes the lock only if it is still ours (same inode).
 */
export interface LockFileOptions {
  /** Give up after this long. */
  timeoutMs: number;
  /** A lock older than this is considered abandoned. */
  staleMs: number;
  signal?: AbortSignal | undefined;
  /** The error thrown when `timeoutMs` has passed (it says what is locked and what to do). */
  timeoutError: () => CcbError;
}

/** Acquire the lock file at `lockPath` (its folder must exist and be private); returns the release function. */
export async function acquireLockFile(lockPath: string, o: LockFileOptions): Promise<() => Promise<void>> {
  const tmp = `${lockPath}.${randomBytes(6).toString("hex")}`;
  await writeFile(tmp, `${process.pid}\n${hostname()}\n`, { flag: "wx", mode: 0o600 });
  const deadline = Date.now() + o.timeoutMs;
  try {
    for (let delay = 2; ; delay = Math.min(delay * 2, 50)) {
      throwIfAborted(o.signal);
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
      const s = await isStale(lockPath, o.staleMs);
      if (s.stale && s.ino !== undefined) {
        await breakStale(lockPath, s.ino);
        continue;
      }
      if (Date.now() > deadline) throw o.timeoutError();
      await new Promise((r) => setTimeout(r, delay));
    }
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
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
  // Someone else's fresh lock: put it back if its place is still free.
  if (st && st.ino !== ino) await link(aside, lockPath).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
}
