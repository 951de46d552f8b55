import { randomBytes } from "node:crypto";
import { open, readFile, stat, unlink, utimes } from "node:fs/promises";
import { hostname } from "node:os";
import { CcbError, throwIfAborted } from "../src/core/errors.ts";
import { pidAlive } from "../src/core/pid.ts";

/** How long a lock may go without a heartbeat before it counts as abandoned (pid reuse, frozen host). */
export const LOCK_STALE_MS = 120_000;
const HEARTBEAT_MS = 10_000;
const POLL_MS = 250;

/** Lock tokens held by this process: a lock with our pid but an unknown token is left from an earlier run. */
const heldTokens = new Set<string>();

interface LockContent {
  pid: number;
  host: string;
  token: string;
  createdAt: string;
}

export interface HeldLock {
  release(): Promise<void>;
}

export interface LockOptions {
  signal?: AbortSignal | undefined;
  /** Called once when another live process holds the lock and we start waiting. */
  onWait?: (holder: { pid: number }) => void;
}

/**
 * An exclusive lock file created with O_EXCL. A lock whose holder is dead (pid gone on this host),
 * or whose heartbeat stopped, is stale and is broken. Waiting polls until the holder finishes.
 * Correctness never depends on the lock alone: installs are renamed into place atomically and the
 * loser of a rename race discards its copy.
 */
export async function acquireLock(file: string, options: LockOptions = {}): Promise<HeldLock> {
  const token = randomBytes(12).toString("hex");
  const content: LockContent = { pid: process.pid, host: hostname(), token, createdAt: new Date().toISOString() };
  let announced = false;
  for (;;) {
    throwIfAborted(options.signal);
    try {
      const fh = await open(file, "wx", 0o600);
      try {
        await fh.writeFile(JSON.stringify(content));
      } finally {
        await fh.close();
      }
      heldTokens.add(token);
      return makeHeld(file, token);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const holder = await inspectLock(file);
    if (holder === "gone") continue;
    if (holder === "stale") {
      await unlink(file).catch(() => undefined);
      continue;
    }
    if (!announced) {
      announced = true;
      options.onWait?.({ pid: holder.pid });
    }
    await delay(POLL_MS, options.signal);
  }
}

function makeHeld(file: string, token: string): HeldLock {
  const beat = setInterval(() => {
    const now = new Date();
    utimes(file, now, now).catch(() => undefined);
  }, HEARTBEAT_MS);
  beat.unref();
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      clearInterval(beat);
      heldTokens.delete(token);
      // Only remove the lock if it is still ours (a stale-lock breaker may have replaced it).
      const current = await readLock(file);
      if (current?.token === token) await unlink(file).catch(() => undefined);
    },
  };
}

async function readLock(file: string): Promise<LockContent | undefined> {
  try {
    const c = JSON.parse(await readFile(file, "utf8")) as Partial<LockContent>;
    if (typeof c.pid === "number" && typeof c.token === "string") return c as LockContent;
  } catch {
    /* missing, or being written right now */
  }
  return undefined;
}

async function inspectLock(file: string): Promise<"gone" | "stale" | { pid: number }> {
  let mtimeMs: number;
  try {
    mtimeMs = (await stat(file)).mtimeMs;
  } catch {
    return "gone";
  }
  const c = await readLock(file);
  const age = Date.now() - mtimeMs;
  if (!c) {
    // Unreadable: a holder between open and write, or garbage. Garbage gets old; then it is stale.
    return age > LOCK_STALE_MS ? "stale" : { pid: 0 };
  }
  if (age > LOCK_STALE_MS) return "stale";
  if (c.host === hostname()) {
    if (c.pid === process.pid) return heldTokens.has(c.token) ? { pid: c.pid } : "stale";
    if (!pidAlive(c.pid)) return "stale";
  }
  return { pid: c.pid };
}

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(t);
      reject(new CcbError("ABORTED", "The operation was cancelled."));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
