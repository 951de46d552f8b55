import { existsSync, readFileSync } from "node:fs";

/**
 * Whether a process with this pid exists (EPERM: it exists but belongs to another user). The one
 * pid check of ccb; process-tree.ts adds "and is not a zombie" where reaping matters.
 */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * The state letter of `pid` in /proc/<pid>/stat (R, S, D, Z, T, t, X...), undefined when it is gone
 * or there is no /proc (not Linux).
 */
function pidState(pid: number): string | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: the state follows the last ')'.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether `pid` exists and runs: not a zombie (Z: dead, not reaped yet), not dead (X), not stopped
 * (T: SIGSTOP, Ctrl-Z; t: stopped by a tracer). A process that can answer, unlike pidAlive.
 * Without /proc, as pidAlive.
 */
export function pidRunning(pid: number): boolean {
  if (!pidAlive(pid)) return false;
  const state = pidState(pid);
  if (state === undefined) return !existsSync("/proc/self/stat");
  return !["Z", "X", "x", "T", "t"].includes(state);
}
