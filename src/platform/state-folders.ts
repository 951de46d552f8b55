import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pidAlive } from "../core/pid.ts";
import { namesIn } from "../util/paths.ts";
import { supervisor } from "./supervisor.ts";

/**
 * The lifecycle of ccb's state and temp folders: each one gets an owner file (pid and the
 * process's start time, so a reused pid is not mistaken for the owner), is removed by ccb on
 * close and by the supervisor however ccb ends, and a later start removes those whose owner is
 * gone (left by a crash of a ccb without a supervisor, or a machine reset).
 */
export const OWNER_FILE = "ccb-owner.json";

/** A folder without an owner file is only taken for stale after this long (its creator may be writing it). */
const UNCLAIMED_GRACE_MS = 60_000;

/** Start time of a process in clock ticks since boot (Linux), undefined when unknown or gone. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/** Mark `dir` as this process's, and have the supervisor remove it when ccb ends. */
export function claimDir(dir: string): void {
  writeFileSync(
    join(dir, OWNER_FILE),
    JSON.stringify({ pid: process.pid, start: processStartTime(process.pid) ?? null }),
    { mode: 0o600 },
  );
  supervisor()?.removeOnExit(dir);
}

/** Whether a live process names `dir` on its command line (a runtime's or Chromium's own folder flags). */
function mentioned(dir: string): boolean {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return true; // cannot tell: keep it
  }
  for (const n of names) {
    if (!/^\d+$/.test(n)) continue;
    try {
      if (readFileSync(`/proc/${n}/cmdline`, "utf8").includes(dir)) return true;
    } catch {
      // gone
    }
  }
  return false;
}

/**
 * Whether the owner recorded in `dir` is gone. A folder without an owner file (an older ccb's) is
 * gone once it is older than a minute and no live process names it on its command line.
 */
export function ownerGone(dir: string, now = Date.now()): boolean {
  let owner: { pid?: unknown; start?: unknown };
  try {
    owner = JSON.parse(readFileSync(join(dir, OWNER_FILE), "utf8")) as { pid?: unknown; start?: unknown };
  } catch {
    try {
      return now - statSync(dir).mtimeMs > UNCLAIMED_GRACE_MS && !mentioned(dir);
    } catch {
      return false;
    }
  }
  if (typeof owner.pid !== "number" || !Number.isInteger(owner.pid) || owner.pid <= 0) return true;
  if (!pidAlive(owner.pid)) return true;
  const start = processStartTime(owner.pid);
  return typeof owner.start === "string" && start !== undefined && start !== owner.start;
}

/** Remove the folders in `parent` (names starting with `prefix`) whose owner is gone; returns their names. */
export function removeStale(parent: string, prefix = ""): string[] {
  const removed: string[] = [];
  for (const n of namesIn(parent)) {
    if (!n.startsWith(prefix)) continue;
    const dir = join(parent, n);
    try {
      if (!statSync(dir).isDirectory()) continue;
    } catch {
      continue;
    }
    if (!ownerGone(dir)) continue;
    try {
      rmSync(dir, { recursive: true, force: true });
      removed.push(n);
    } catch {
      // in use after all, or not ours: left alone
    }
  }
  return removed;
}
