import { spawn } from "node:child_process";
import { CcbError } from "../errors.ts";

/** One git process: no shell, own process group, timeout and abort kill the whole group, capped output. */

export interface ExecOptions {
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  /** Bytes of stdout kept; the rest is drained and dropped (or the process is killed, see `killOnCap`). */
  maxBytes: number;
  maxStderrBytes?: number;
  /** Kill the process once stdout passes `maxBytes` (for read-only commands). */
  killOnCap?: boolean;
  signal?: AbortSignal;
  /** Bytes written to git's stdin; without it, stdin is at its end at once (as /dev/null would be). */
  input?: string | Buffer;
}

export interface ExecResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
  /** Bytes of stdout seen (more than `stdout.length` when truncated). */
  stdoutBytes: number;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  timedOut: boolean;
  killedOnCap: boolean;
}

class Capped {
  readonly chunks: Buffer[] = [];
  kept = 0;
  seen = 0;
  constructor(readonly max: number) {}
  push(b: Buffer): boolean {
    this.seen += b.length;
    if (this.kept < this.max) {
      const take = Math.min(b.length, this.max - this.kept);
      this.chunks.push(take === b.length ? b : b.subarray(0, take));
      this.kept += take;
    }
    return this.seen > this.max;
  }
  buffer(): Buffer {
    return Buffer.concat(this.chunks, this.kept);
  }
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    if (process.platform === "win32") process.kill(pid, "SIGKILL");
    else process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}

export function execGit(gitPath: string, argv: readonly string[], options: ExecOptions): Promise<ExecResult> {
  if (options.signal?.aborted) return Promise.reject(new CcbError("ABORTED", "The git command was cancelled."));
  return new Promise((resolve, reject) => {
    const child = spawn(gitPath, argv as string[], {
      cwd: options.cwd,
      env: options.env,
      stdio: ["pipe", "pipe", "pipe"],
      detached: process.platform !== "win32",
      windowsHide: true,
    });
    // A git that exits before reading all of it closes the pipe: its exit code tells, not EPIPE.
    child.stdin.on("error", () => {});
    child.stdin.end(options.input);
    const out = new Capped(options.maxBytes);
    const err = new Capped(options.maxStderrBytes ?? 64 * 1024);
    let timedOut = false;
    let aborted = false;
    let killedOnCap = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, options.timeoutMs);
    const onAbort = () => {
      aborted = true;
      killGroup(child.pid);
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout.on("data", (b: Buffer) => {
      if (out.push(b) && options.killOnCap && !killedOnCap) {
        killedOnCap = true;
        killGroup(child.pid);
      }
    });
    child.stderr.on("data", (b: Buffer) => {
      err.push(b);
    });
    const cleanup = () => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
    };
    child.on("error", (e: NodeJS.ErrnoException) => {
      cleanup();
      if (e.code === "ENOENT") {
        reject(
          new CcbError("GIT_FAILED", `git was not found (${gitPath}).`, {
            hint: "Install git and make sure it is on PATH.",
            cause: e,
          }),
        );
      } else reject(new CcbError("GIT_FAILED", `git could not be started: ${e.message}`, { cause: e }));
    });
    child.on("close", (code, sig) => {
      cleanup();
      // The group may hold children that outlived git itself (e.g. a hung ssh): end them too.
      if (timedOut || aborted) killGroup(child.pid);
      if (aborted) return reject(new CcbError("ABORTED", "The git command was cancelled."));
      resolve({
        exitCode: code,
        signal: sig,
        stdout: out.buffer(),
        stderr: err.buffer(),
        stdoutBytes: out.seen,
        stdoutTruncated: out.seen > out.max,
        stderrTruncated: err.seen > err.max,
        timedOut,
        killedOnCap,
      });
    });
  });
}
