import { type ChildProcess, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { request } from "node:http";
import { createServer } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { CcbError } from "../../core/errors.ts";
import { type Logger, redact } from "../../core/log.ts";
import type { LaunchDirs, Runtime } from "./types.ts";

export type WorkbenchState = "starting" | "running" | "crashed" | "stopped";

export interface SupervisorOptions {
  runtime: Runtime;
  dirs: LaunchDirs;
  folder: string;
  log: Logger;
  /** Environment for the runtime (sanitised by the caller: no ccb secrets). */
  env: NodeJS.ProcessEnv;
  /** Backoff bounds for restarts after a crash. */
  minBackoffMs?: number;
  /** Flags for the runtime's Node (LaunchInput.nodeFlags). */
  nodeFlags?: readonly string[];
  /** LaunchInput.oneProcess. */
  oneProcess?: boolean;
  maxBackoffMs?: number;
  readyTimeoutMs?: number;
  /** Told each line of the runtime's output (the start's timeline reads its steps there). */
  onOutput?: (line: string) => void;
}

/** A free loopback port (bound then released; the runtime binds it right after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      const port = typeof a === "object" && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

function httpStatus(socketPath: string, path: string, signal: AbortSignal): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path, method: "GET", signal, timeout: 5_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", () => resolve(0));
    req.on("timeout", () => req.destroy());
    req.end();
  });
}

/**
 * Runs the runtime as its own process group on a Unix socket in its 0700 state folder, waits until it answers,
 * restarts it with exponential backoff when it crashes, and stops the whole group on close (and
 * on ccb's exit). Its output goes to ccb's logger with secrets redacted.
 */
export class RuntimeSupervisor {
  state: WorkbenchState = "stopped";
  /** The runtime's Unix socket (in the 0700 state folder). */
  readonly socketPath: string;
  /** Time from spawn to the runtime's own health answer, for the last start. */
  bootMs = 0;
  #child: ChildProcess | undefined;
  #dog: ChildProcess | undefined;
  #stopping = false;
  #backoff: number;
  #restartTimer: NodeJS.Timeout | undefined;
  #listeners = new Set<(state: WorkbenchState) => void>();
  readonly #o: SupervisorOptions;
  readonly #onExit = () => this.#killGroup("SIGKILL");

  constructor(options: SupervisorOptions) {
    this.#o = options;
    this.socketPath = join(options.dirs.state, "runtime.sock");
    this.#backoff = options.minBackoffMs ?? 1_000;
  }

  onState(l: (s: WorkbenchState) => void): () => void {
    this.#listeners.add(l);
    return () => this.#listeners.delete(l);
  }

  #set(s: WorkbenchState): void {
    this.state = s;
    for (const l of this.#listeners) l(s);
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Start and resolve once the runtime answers its health path. */
  async start(): Promise<void> {
    this.#stopping = false;
    process.on("exit", this.#onExit);
    await this.#spawnAndWait();
  }

  async #spawnAndWait(): Promise<void> {
    const { runtime, dirs, log } = this.#o;
    if (Buffer.byteLength(this.socketPath) > 100) {
      throw new CcbError(
        "RUNTIME_UNAVAILABLE",
        `The runtime socket path is too long for a Unix socket (${this.socketPath}).`,
        { hint: "Set XDG_STATE_HOME to a shorter folder." },
      );
    }
    rmSync(this.socketPath, { force: true }); // a stale socket of a crashed run
    const cmd = runtime.command({
      socketPath: this.socketPath,
      dirs,
      folder: this.#o.folder,
      nodeFlags: this.#o.nodeFlags,
      oneProcess: this.#o.oneProcess,
    });
    this.#set("starting");
    const t0 = performance.now();
    const child = spawn(cmd.command, cmd.args, {
      cwd: this.#o.folder,
      env: { ...this.#o.env, ...cmd.env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true, // its own process group: stopped as a whole
    });
    this.#child = child;
    this.#watch(child);
    const rlog = log.child(runtime.kind);
    for (const stream of [child.stdout, child.stderr]) {
      if (stream)
        createInterface({ input: stream }).on("line", (line) => {
          rlog.debug(redact(line));
          this.#o.onOutput?.(line);
        });
    }
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once("exit", (code, signal) => resolve({ code, signal }));
      child.once("error", (err) => {
        rlog.error(`could not start ${runtime.kind}: ${err.message}`);
        resolve({ code: null, signal: null });
      });
    });
    void exited.then(({ code, signal }) => this.#onChildExit(child, code, signal, performance.now() - t0));

    const ac = new AbortController();
    const deadline = setTimeout(() => ac.abort(), this.#o.readyTimeoutMs ?? 120_000);
    try {
      let stopped = false;
      void exited.then(() => {
        stopped = true;
        ac.abort();
      });
      const healthPath = runtime.healthPath;
      for (;;) {
        if (stopped)
          throw new CcbError(
            "RUNTIME_UNAVAILABLE",
            `${runtime.kind} exited while starting; see the log (--log-level debug).`,
          );
        if (ac.signal.aborted)
          throw new CcbError(
            "TIMEOUT",
            `${runtime.kind} did not answer within ${Math.round((this.#o.readyTimeoutMs ?? 120_000) / 1000)} s.`,
          );
        const status = await httpStatus(this.socketPath, healthPath, ac.signal);
        if (status >= 200 && status < 400) break;
        await new Promise((r) => setTimeout(r, 100)); // polling the runtime's health endpoint
      }
    } finally {
      clearTimeout(deadline);
    }
    this.bootMs = performance.now() - t0;
    log.info(`${runtime.describe} is up on ${this.socketPath} after ${Math.round(this.bootMs)} ms`);
    this.#set("running");
  }

  /** GET `path` on the runtime's socket (a warm-up: code-server loads VS Code's server on the first page request). Resolves with the status (0: no answer). */
  get(path: string, timeoutMs = 60_000): Promise<number> {
    return httpStatus(this.socketPath, path, AbortSignal.timeout(timeoutMs));
  }

  #onChildExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null, upMs: number): void {
    if (this.#child !== child) return;
    this.#child = undefined;
    if (this.#stopping) {
      this.#set("stopped");
      return;
    }
    this.#killGroup("SIGKILL", child.pid); // leftovers of the crashed group
    this.#set("crashed");
    if (upMs > 60_000) this.#backoff = this.#o.minBackoffMs ?? 1_000;
    const delay = this.#backoff;
    this.#backoff = Math.min(this.#backoff * 2, this.#o.maxBackoffMs ?? 30_000);
    this.#o.log.warn(
      `${this.#o.runtime.kind} exited (${signal ?? `code ${code}`}); restarting in ${Math.round(delay / 1000)} s`,
    );
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = undefined;
      if (this.#stopping) return;
      this.#spawnAndWait().catch((err: unknown) => this.#o.log.error(`restart failed: ${(err as Error).message}`));
    }, delay);
  }

  /**
   * A watchdog for the case ccb cannot clean up (SIGKILL, crash): a tiny shell blocked reading a
   * pipe from ccb; when ccb dies the pipe closes and it kills the runtime's process group.
   */
  #watch(child: ChildProcess): void {
    this.#dog?.kill("SIGKILL");
    this.#dog = undefined;
    if (!child.pid) return;
    const dog = spawn("/bin/sh", ["-c", `read _ccb_alive; kill -9 -${child.pid} 2>/dev/null`], {
      stdio: ["pipe", "ignore", "ignore"],
      detached: true,
    });
    dog.on("error", () => undefined);
    dog.stdin?.on("error", () => undefined);
    (dog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    dog.unref();
    this.#dog = dog;
  }

  #killGroup(signal: NodeJS.Signals, pid = this.#child?.pid): void {
    if (!pid) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // already gone
    }
  }

  /** Stop the process group: SIGTERM, then SIGKILL after a grace period. */
  async stop(graceMs = 5_000): Promise<void> {
    this.#stopping = true;
    process.off("exit", this.#onExit);
    if (this.#restartTimer) clearTimeout(this.#restartTimer);
    const child = this.#child;
    if (!child || child.exitCode !== null || child.signalCode !== null) {
      this.#dog?.kill("SIGKILL");
      this.#dog = undefined;
      this.#set("stopped");
      return;
    }
    const done = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    this.#killGroup("SIGTERM");
    const timer = setTimeout(() => this.#killGroup("SIGKILL", child.pid), graceMs);
    await done;
    clearTimeout(timer);
    this.#killGroup("SIGKILL", child.pid); // anything left in the group
    this.#dog?.kill("SIGKILL");
    this.#dog = undefined;
  }
}
