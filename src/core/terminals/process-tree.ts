import { readFileSync } from "node:fs";
import { namesIn } from "../../util/paths.ts";
import { pidAlive } from "../pid.ts";

/** pid, state and session id of a process from /proc (Linux), undefined when unknown or gone. */
function procStat(pid: number): { state: string; sid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may contain spaces and parentheses: parse after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: rest[0] ?? "", sid: Number(rest[3]) };
  } catch {
    return undefined;
  }
}

const hasProc = (() => {
  try {
    readFileSync("/proc/self/stat", "utf8");
    return true;
  } catch {
    return false;
  }
})();

/**
 * Every live process whose session is `sid`. Terminal children lead their own session, so this
 * finds background jobs that moved to their own process group too. Linux only; elsewhere [].
 */
export function sessionMembers(sid: number): number[] {
  if (!hasProc) return [];
  const out: number[] = [];
  for (const name of namesIn("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const st = procStat(pid);
    if (st && st.sid === sid && st.state !== "Z") out.push(pid);
  }
  return out;
}

/** Whether `pid` is a live process (a zombie counts as gone). */
export function isAlive(pid: number): boolean {
  if (!pidAlive(pid)) return false;
  if (!hasProc) return true;
  const st = procStat(pid);
  return st !== undefined && st.state !== "Z";
}

function trySignal(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone already, or not ours
  }
}

/**
 * Signal everything a terminal started: its process group, then (Linux) every other process still
 * in its session, which catches background jobs that job control moved to their own group.
 */
export function signalSession(leader: number, signal: NodeJS.Signals, options: { group?: boolean } = {}): number[] {
  // Never our own group or session (a terminal child always leads a new one; this is a guard).
  if (leader <= 1 || leader === process.pid || leader === procStat(process.pid)?.sid) return [];
  if (options.group !== false) trySignal(-leader, signal);
  const members = sessionMembers(leader);
  for (const pid of members) trySignal(pid, signal);
  return members;
}

/** Resolves once none of `pids` is alive any more, or after `timeoutMs`; returns those still alive. */
export async function waitGone(pids: number[], timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let alive = pids.filter(isAlive);
  while (alive.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    alive = alive.filter(isAlive);
  }
  return alive;
}
