import { acquireLockFile } from "../core/lock-file.ts";

/** How long a lock may go without a heartbeat before it counts as abandoned (pid reuse, frozen host). */
export const LOCK_STALE_MS = 120_000;

export interface HeldLock {
  release(): Promise<void>;
}

export interface LockOptions {
  signal?: AbortSignal | undefined;
  /** Called once when another live process holds the lock and we start waiting. */
  onWait?: (holder: { pid: number }) => void;
}

/**
 * The install lock of a runtime (core/lock-file.ts, the one lock algorithm), held for as long as a
 * download and an extraction take: a heartbeat keeps it fresh, and a waiter waits as long as the
 * holder lives. Correctness never depends on the lock alone: installs are renamed into place
 * atomically and the loser of a rename race discards its copy.
 */
export async function acquireLock(file: string, options: LockOptions = {}): Promise<HeldLock> {
  const release = await acquireLockFile(file, {
    staleMs: LOCK_STALE_MS,
    heartbeatMs: 10_000,
    pollMs: 250,
    signal: options.signal,
    ...(options.onWait ? { onWait: options.onWait } : {}),
  });
  return { release };
}
