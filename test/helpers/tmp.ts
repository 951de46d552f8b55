import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The processes other than this one whose command line or environment names `path`: a runtime that a
 * test's ccb started with HOME or XDG_* in a temporary folder is one until it has exited. Node writes
 * its compile cache at exit, so removing the folder before then races with that write (ENOTEMPTY).
 */
function processesUsing(path: string): number[] {
  const out: number[] = [];
  let entries: string[] = [];
  try {
    entries = readdirSync("/proc");
  } catch {
    return out; // not Linux: nothing to wait for
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${e}/cmdline`, "utf8");
      const env = readFileSync(`/proc/${e}/environ`, "utf8");
      if (cmd.includes(path) || env.includes(path)) out.push(Number(e));
    } catch {
      // gone, a zombie, or another user's: nothing of ours writes there
    }
  }
  return out;
}

/** Waits (bounded) until no process names `path`; the processes still there at the end are returned. */
async function processesGone(path: string, timeoutMs = 30_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = processesUsing(path);
    if (left.length === 0 || Date.now() >= deadline) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `git init` at `path` (branch main, a test author), away from the user's git config. */
export function gitInit(path: string): void {
  const env = { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };
  execFileSync("git", ["init", "-q", "-b", "main", path], { env });
  execFileSync("git", ["-C", path, "config", "user.email", "test@example.com"], { env });
  execFileSync("git", ["-C", path, "config", "user.name", "ccb test"], { env });
}

/**
 * The environment that confines what runs to a private `home`: HOME and the XDG folders under it
 * (made now), npm's cache there too, Chromium where the test run has it.
 */
export function homeEnv(home: string): Record<string, string> {
  for (const d of ["state", "cache", "config", "data"]) mkdirSync(join(home, d), { recursive: true });
  return {
    HOME: home,
    XDG_STATE_HOME: join(home, "state"),
    XDG_CACHE_HOME: join(home, "cache"),
    XDG_CONFIG_HOME: join(home, "config"),
    XDG_DATA_HOME: join(home, "data"),
    npm_config_cache: join(home, "npm-cache"),
    ...(process.env.CHROME_PATH ? { CHROME_PATH: process.env.CHROME_PATH } : {}),
  };
}

/** A real temporary directory (optionally a git repo) removed on dispose: `await using dir = tmpdir()`. */
export function tmpdirFixture(options: { git?: boolean; prefix?: string } = {}): {
  path: string;
  [Symbol.asyncDispose](): Promise<void>;
  /** Removes the folder now (a write racing with it is retried a few times). */
  cleanup(): void;
  /** Removes the folder once no process names it any more (bounded: 30 s), for folders a runtime used. */
  cleanupAfterProcesses(): Promise<void>;
} {
  const path = realpathSync(mkdtempSync(join(tmpdir(), options.prefix ?? "ccb-test-")));
  if (options.git) gitInit(path);
  const cleanup = () => rmSync(path, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  const cleanupAfterProcesses = async () => {
    const left = await processesGone(path);
    if (left.length > 0) process.stderr.write(`# processes still using ${path} after 30 s: ${left.join(" ")}\n`);
    cleanup();
  };
  return {
    path,
    cleanup,
    cleanupAfterProcesses,
    async [Symbol.asyncDispose]() {
      cleanup();
    },
  };
}
