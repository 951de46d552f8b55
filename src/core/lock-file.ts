import { randomBytes } from "node:crypto";
import { link, lstat, readFile, rename, unlink, utimes, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { CcbError, throwIfAborted } from "./errors.ts";
import { pidAlive } from "./pid.ts";

/**
 * The one cross-process lock-file algorithm of ccb (file write locks, the shared workbench's
 * record lock, the runtime fetcher's install lock): a fully written temp file gets a second name,
 * `lockPath`, with link() — EEXIST while another holder has it. The file records pid, host and a
 * random token. A lock is abandoned when its holder is gone (same host, dead pid), when it carries
 * this process's pid but a token this process did not write (an earlier run whose pid was reused),
 * or when it was not touched for `staleMs` (a holder with `heartbeatMs` touches it while it holds
 * it); an abandoned lock is moved aside and removed, but only if it is still the file judged so.
 * Release removes the lock only if it is still ours (same token).
 */
export interface LockFileOptions {
  /** A lock not touched for this long is abandoned. */
  staleMs: number;
  /** Touch the lock this often while holding it, so a long hold never looks abandoned (default: never). */
  heartbeatMs?: number;
  /** Give up after this long with `timeoutError` (default: wait until the signal aborts). */
  timeoutMs?: number;
  /** The error thrown when `timeoutMs` has passed (it says what is locked and what to do). */
  timeoutError?: () => CcbError;
  /** Longest pause between two attempts (default 50 ms; the first pauses are shorter). */
  pollMs?: number;
  signal?: AbortSignal | undefined;
  /** Called once, with the holder's pid (0: unknown), when a live holder makes us wait. */
  onWait?: (holder: { pid: number }) => void;
}

interface LockContent {
  pid: number;
  host: string;
  token: string;
}

/**
 * Every token this process writes starts with this: a lock with our pid and a token without it is an
 * earlier run's (its pid reused). Not "a token we hold now": a waiter reads a lock's content, and by
 * the time it judges it the holder may have released it, so a live lock (the next holder's, by then)
 * was moved aside and two waiters of this process held it at once.
 */
const PROCESS_NONCE = randomBytes(8).toString("hex");

/** Acquire the lock file at `lockPath` (its folder must exist and be private); returns the release function. */
export async function acquireLockFile(lockPath: string, o: LockFileOptions): Promise<() => Promise<void>> {
  const token = `${PROCESS_NONCE}${randomBytes(8).toString("hex")}`;
  const tmp = `${lockPath}.${token}`;
  const content: LockContent & { createdAt: string } = {
    pid: process.pid,
    host: hostname(),
    token,
    createdAt: new Date().toISOString(),
  };
  await writeFile(tmp, JSON.stringify(content), { flag: "wx", mode: 0o600 });
  const deadline = o.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + o.timeoutMs;
  let announced = false;
  try {
    for (let pause = 2; ; pause = Math.min(pause * 2, o.pollMs ?? 50)) {
      throwIfAborted(o.signal);
      try {
        await link(tmp, lockPath);
        return held(lockPath, token, o.heartbeatMs);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
      const s = await inspect(lockPath, o.staleMs);
      if (s.stale) {
        if (s.ino !== undefined) await breakStale(lockPath, s.ino);
        continue;
      }
      if (Date.now() > deadline)
        throw o.timeoutError?.() ?? new CcbError("TIMEOUT", `Timed out waiting for ${lockPath}.`);
      if (!announced) {
        announced = true;
        o.onWait?.({ pid: s.pid });
      }
      await sleep(pause, undefined, { signal: o.signal }).catch(() => throwIfAborted(o.signal));
    }
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

function held(lockPath: string, token: string, heartbeatMs: number | undefined): () => Promise<void> {
  const beat =
    heartbeatMs === undefined
      ? undefined
      : setInterval(() => {
          const now = new Date();
          utimes(lockPath, now, now).catch(() => undefined);
        }, heartbeatMs);
  beat?.unref();
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    clearInterval(beat);
    // Only remove the lock if it is still ours (a stale-lock breaker may have replaced it).
    if ((await readLock(lockPath))?.token === token) await unlink(lockPath).catch(() => undefined);
  };
}

/** The lock's holder; also the one-line `pid\nhost\n` form earlier ccb versions wrote. */
async function readLock(lockPath: string): Promise<LockContent | undefined> {
  try {
    const text = await readFile(lockPath, "utf8");
    if (text.startsWith("{")) {
      const c = JSON.parse(text) as Partial<LockContent>;
      return typeof c.pid === "number" && typeof c.host === "string" && typeof c.token === "string"
        ? (c as LockContent)
        : undefined;
    }
    const [pid, host] = text.split("\n");
    return { pid: Number(pid), host: host ?? "", token: "" };
  } catch {
    return undefined; // missing, or garbage
  }
}

type Inspection = { stale: true; ino?: number } | { stale: false; pid: number };

async function inspect(lockPath: string, staleMs: number): Promise<Inspection> {
  let st: { mtimeMs: number; ino: number };
  try {
    st = await lstat(lockPath);
  } catch {
    return { stale: true }; // vanished meanwhile: just retry
  }
  if (Date.now() - st.mtimeMs > staleMs) return { stale: true, ino: st.ino };
  const c = await readLock(lockPath);
  if (!c || !Number.isInteger(c.pid) || c.pid <= 0) return { stale: false, pid: 0 }; // garbage gets old, then it is stale
  if (c.host === hostname()) {
    if (c.pid === process.pid ? !c.token.startsWith(PROCESS_NONCE) : !pidAlive(c.pid))
      return { stale: true, ino: st.ino };
  }
  return { stale: false, pid: c.pid };
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
