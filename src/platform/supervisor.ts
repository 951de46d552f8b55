import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { setScopeMarker } from "../core/child-env.ts";

/**
 * Containment: every process ccb starts, and everything those start (background jobs, `nohup`,
 * `setsid`, double forks that reparent to init), is killed when ccb ends — by exit, signal,
 * SIGKILL or crash — and the folders ccb registered are removed.
 *
 * How: ccb puts a marker variable (CCB_SCOPE_<random>=<ccb pid>) in its own process.env, so every
 * child inherits it, and environment inheritance carries it through forks, sessions and exec.
 * A supervisor — a tiny /bin/sh in its own session, without the marker — blocks reading a pipe
 * from ccb. The pipe closes when ccb's process ends, however it ends; the supervisor then stops
 * and kills every process whose /proc/<pid>/environ holds the marker (repeating until none is
 * left, so a process forking meanwhile is caught), and removes the registered folders.
 * Not caught: a descendant that clears its environment (`env -i`) AND leaves ccb's sessions.
 * Linux only (/proc); elsewhere the supervisor still removes the folders.
 */

const SCRIPT = [
  "nl='",
  "'",
  'dirs=""',
  'while IFS= read -r line; do case "$line" in "dir "*) dirs="$dirs${line#dir }$nl" ;; esac; done',
  "if [ -d /proc/self ]; then",
  "  i=0",
  "  while [ $i -lt 20 ]; do",
  '    found=""',
  '    for f in $(grep -l -a -F -e "$1=" /proc/[0-9]*/environ 2>/dev/null); do',
  "      p=${f#/proc/}; p=${p%/environ}",
  '      [ "$p" = "$$" ] || found="$found $p"',
  "    done",
  '    [ -z "$found" ] && break',
  "    kill -STOP $found 2>/dev/null",
  "    kill -KILL $found 2>/dev/null",
  "    i=$((i+1))",
  "  done",
  "fi",
  'printf %s "$dirs" | while IFS= read -r d; do [ -n "$d" ] && rm -rf -- "$d"; done',
].join("\n");

export interface Supervisor {
  /** The marker variable's name (CCB_SCOPE_<hex>); its value is ccb's pid. */
  readonly marker: string;
  readonly pid: number | undefined;
  /** Remove this folder when ccb ends (in addition to ccb's own cleanup). */
  removeOnExit(dir: string): void;
}

let current: Supervisor | undefined;

/** Start the supervisor once per ccb process (idempotent). */
export function startSupervisor(): Supervisor {
  if (current) return current;
  const marker = `CCB_SCOPE_${randomBytes(8).toString("hex")}`;
  let child: ChildProcess | undefined;
  try {
    child = spawn("/bin/sh", ["-c", SCRIPT, "ccb-supervisor", marker], {
      stdio: ["pipe", "ignore", "ignore"],
      detached: true, // its own session: a hangup of ccb's terminal does not reach it
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C" },
    });
    child.on("error", () => undefined);
    child.stdin?.on("error", () => undefined);
    // Nothing keeps ccb's event loop alive for the supervisor's sake.
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    child.unref();
  } catch {
    child = undefined;
  }
  process.env[marker] = String(process.pid);
  setScopeMarker(marker, String(process.pid));
  const sup = child;
  current = {
    marker,
    pid: sup?.pid,
    removeOnExit(dir: string) {
      if (dir.includes("\n")) return;
      sup?.stdin?.write(`dir ${dir}\n`);
    },
  };
  return current;
}

export function supervisor(): Supervisor | undefined {
  return current;
}
