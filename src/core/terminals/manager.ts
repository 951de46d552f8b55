import { stat } from "node:fs/promises";
import { constants as osConstants } from "node:os";
import { basename } from "node:path";
import { CcbError, toCcbError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { Workspace } from "../workspace.ts";
import { selectBackend } from "./backend.ts";
import { OutputRing } from "./buffer.ts";
import { isAlive, signalSession, waitGone } from "./process-tree.ts";
import type { PtyBackend, PtyProcess } from "./pty.ts";
import { HeadlessScreen } from "./screen.ts";
import { defaultShell, resolveProgram, terminalEnv } from "./spawn-spec.ts";
import type {
  CreateTerminalOptions,
  TerminalEvent,
  TerminalInfo,
  TerminalManagerOptions,
  TerminalReadOptions,
  TerminalReadResult,
  TerminalService,
} from "./types.ts";

interface Managed {
  info: TerminalInfo;
  proc: PtyProcess;
  ring: OutputRing;
  screen: HeadlessScreen;
  exited: Promise<void>;
  /** Woken on every chunk of output and on exit. */
  wakers: Set<() => void>;
}

const DEFAULT_READ_MAX = 256 * 1024;
const MAX_EXITED_KEPT = 32;

function checkSize(cols: number, rows: number): void {
  if (!Number.isInteger(cols) || cols < 2 || cols > 1000 || !Number.isInteger(rows) || rows < 1 || rows > 500) {
    throw new CcbError("INVALID_ARGUMENT", `Invalid terminal size ${cols}x${rows}.`, {
      hint: "cols must be an integer 2-1000 and rows 1-500.",
    });
  }
}

function checkSignal(name: string): NodeJS.Signals {
  if (!(name in osConstants.signals)) {
    throw new CcbError("INVALID_ARGUMENT", `Unknown signal ${JSON.stringify(name)}.`, {
      hint: "Use a signal name such as SIGTERM, SIGINT, SIGHUP or SIGKILL.",
    });
  }
  return name as NodeJS.Signals;
}

/** Waits for `p` at most `ms`, without leaving a timer behind. */
async function within(p: Promise<unknown>, ms: number): Promise<void> {
  const ac = new AbortController();
  try {
    await Promise.race([p, pause(ms, ac.signal)]);
  } finally {
    ac.abort();
  }
}

/** Resolves after `ms` or when `signal` fires, whichever is first; never rejects. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * Terminals of the workspace: PTY children (node-pty under Node, Bun's terminal under Bun, pipes
 * as a declared fallback), each with a bounded raw-output buffer read by offset and a headless
 * emulator that renders its screen.
 */
export class TerminalManager implements TerminalService {
  private readonly terminals = new Map<string, Managed>();
  private readonly listeners = new Set<(event: TerminalEvent) => void>();
  /** Session leaders of every child ever started: dispose sweeps them for orphans. */
  private readonly sessions = new Set<number>();
  private backendPromise: Promise<PtyBackend> | undefined;
  private counter = 0;
  private disposed = false;

  constructor(
    readonly workspace: Workspace,
    readonly log: Logger,
    private readonly options: TerminalManagerOptions = {},
  ) {}

  /** The backend in use (chosen once, on first use). */
  backend(): Promise<PtyBackend> {
    this.backendPromise ??= selectBackend(this.log, this.options.backend).then((b) => {
      this.log.debug(`terminal backend: ${b.kind}${b.isPty ? "" : " (no PTY)"}`);
      return b;
    });
    return this.backendPromise;
  }

  async create(options: CreateTerminalOptions): Promise<TerminalInfo> {
    if (this.disposed) throw new CcbError("UNSUPPORTED", "The terminal manager has shut down.");
    const running = [...this.terminals.values()].filter((t) => t.info.running).length;
    const max = this.options.maxTerminals ?? 32;
    if (running >= max) {
      throw new CcbError("TOO_LARGE", `Too many running terminals (${running}).`, {
        hint: "Kill terminals you no longer need ({{terminalList}} shows them).",
      });
    }
    const backend = await this.backend();
    const cols = options.cols ?? 120;
    const rows = options.rows ?? 30;
    checkSize(cols, rows);
    const cwdPath = await this.workspace.resolve(options.cwd ?? this.workspace.primary, { mustExist: true });
    if (!(await stat(cwdPath.abs)).isDirectory()) {
      throw new CcbError("NOT_DIRECTORY", `Terminal cwd is not a directory: ${options.cwd}`);
    }
    const env = terminalEnv(process.env, options.env, {
      TERM: backend.isPty ? "xterm-256color" : "dumb",
      PWD: cwdPath.abs,
    });
    const command = options.command ?? defaultShell(env);
    const args = options.args ?? [];
    if (args.some((a) => typeof a !== "string" || a.includes("\0"))) {
      throw new CcbError("INVALID_ARGUMENT", "Arguments must be strings without NUL bytes.");
    }
    const file = resolveProgram(command, env, cwdPath.abs);
    if (this.disposed) throw new CcbError("UNSUPPORTED", "The terminal manager has shut down.");
    let proc: PtyProcess;
    try {
      proc = backend.spawn({ file, args, cwd: cwdPath.abs, env, cols, rows });
    } catch (err) {
      throw toCcbError(err);
    }
    const id = `t${++this.counter}`;
    this.sessions.add(proc.pid);
    const info: TerminalInfo = {
      id,
      title: options.title ?? basename(command),
      command,
      args: [...args],
      cwd: cwdPath.abs,
      cols,
      rows,
      pid: proc.pid,
      backend: backend.kind,
      isPty: backend.isPty,
      running: true,
      exitCode: null,
      signal: null,
      createdAt: Date.now(),
      origin: options.origin ?? "tool",
      ...(options.startedBy ? { startedBy: options.startedBy } : {}),
    };
    if (options.startedBy)
      this.log.info(`terminal ${id} (${basename(command)}, pid ${proc.pid}) started by ${options.startedBy}`);
    const ring = new OutputRing(this.options.bufferSize ?? 1024 * 1024);
    const screen = new HeadlessScreen({
      cols,
      rows,
      scrollback: this.options.scrollback ?? 1000,
      convertEol: !backend.isPty,
    });
    let markExited!: () => void;
    const t: Managed = { info, proc, ring, screen, exited: new Promise((r) => (markExited = r)), wakers: new Set() };
    this.terminals.set(id, t);
    // Answer the emulator's replies to queries (cursor position, device attributes) like a real terminal.
    if (backend.isPty) screen.onReply((reply) => t.info.running && proc.write(reply));
    proc.onData((data) => {
      ring.append(data);
      screen.write(data);
      this.wake(t);
      this.emit({ type: "data", id, data });
    });
    proc.onExit((status) => {
      info.running = false;
      info.exitCode = status.exitCode;
      info.signal = status.signal;
      proc.close();
      this.log.debug(`terminal ${id} exited: ${status.signal ?? `code ${status.exitCode}`}`);
      markExited();
      this.wake(t);
      this.emit({ type: "exit", id });
      this.evictExited();
    });
    this.log.info(`terminal ${id} started: ${basename(file)} (pid ${proc.pid}, ${backend.kind})`);
    this.emit({ type: "created", id });
    return this.snapshotInfo(t);
  }

  list(): TerminalInfo[] {
    return [...this.terminals.values()].map((t) => this.snapshotInfo(t));
  }

  get(id: string): TerminalInfo {
    return this.snapshotInfo(this.find(id));
  }

  async read(id: string, options: TerminalReadOptions = {}): Promise<TerminalReadResult> {
    const t = this.find(id);
    const offset = options.offset ?? t.ring.start;
    if (!Number.isInteger(offset) || offset < 0) {
      throw new CcbError("INVALID_ARGUMENT", "offset must be a non-negative integer (a previous nextOffset).");
    }
    const waitMs = options.waitMs ?? 0;
    if (waitMs > 0 && t.info.running && offset >= t.ring.end) await this.waitForChange(t, waitMs, options.signal);
    const max = options.maxBytes ?? DEFAULT_READ_MAX;
    if (!Number.isInteger(max) || max < 0)
      throw new CcbError("INVALID_ARGUMENT", "maxBytes must be a non-negative integer.");
    const r = t.ring.read(offset, max);
    const snap = await t.screen.snapshot(options.scrollback ?? false);
    return {
      info: this.snapshotInfo(t),
      screen: snap.text,
      output: r.data,
      nextOffset: r.nextOffset,
      dropped: r.dropped,
      from: r.from,
      end: t.ring.end,
      cursor: snap.cursor,
    };
  }

  /** Type `data` into the terminal; returns the output offset at that moment (read from there for the response). */
  write(id: string, data: string): number {
    const t = this.find(id);
    if (!t.info.running) throw this.exitedError(t);
    const offset = t.ring.end;
    t.proc.write(data);
    return offset;
  }

  resize(id: string, cols: number, rows: number): void {
    const t = this.find(id);
    checkSize(cols, rows);
    if (!t.info.running) throw this.exitedError(t);
    t.proc.resize(cols, rows);
    t.screen.resize(cols, rows);
    t.info.cols = cols;
    t.info.rows = rows;
    this.emit({ type: "resize", id });
  }

  /**
   * Signal the terminal's whole process group and session (default SIGTERM); if it has not exited
   * after the grace period, SIGKILL. Background jobs left in its session are killed too.
   */
  async kill(id: string, signal = "SIGTERM", options: { graceMs?: number } = {}): Promise<TerminalInfo> {
    const t = this.find(id);
    await this.terminate(t, checkSignal(signal), options.graceMs ?? this.options.killGraceMs ?? 2000);
    return this.snapshotInfo(t);
  }

  /** Kill (if running) and forget a terminal. */
  async remove(id: string): Promise<TerminalInfo> {
    const info = await this.kill(id);
    const t = this.terminals.get(id);
    t?.screen.dispose();
    this.terminals.delete(id);
    return info;
  }

  /** Wait until the terminal exits (or the signal fires). */
  async waitForExit(id: string, signal?: AbortSignal): Promise<TerminalInfo> {
    const t = this.find(id);
    if (t.info.running) {
      if (signal?.aborted) throw new CcbError("ABORTED", "The operation was cancelled.");
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => reject(new CcbError("ABORTED", "The operation was cancelled."));
        signal?.addEventListener("abort", onAbort, { once: true });
        void t.exited.then(() => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        });
      });
    }
    return this.snapshotInfo(t);
  }

  /** Subscribe to raw output and lifecycle events (used by the workbench to mirror terminals). */
  onEvent(listener: (event: TerminalEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Kill every child (and anything left in their sessions); called on shutdown. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const grace = Math.min(this.options.killGraceMs ?? 2000, 1000);
    const results = await Promise.allSettled(
      [...this.terminals.values()].map((t) => this.terminate(t, "SIGHUP", grace)),
    );
    for (const r of results) if (r.status === "rejected") this.log.warn(`terminal shutdown: ${String(r.reason)}`);
    // Orphans: background jobs left behind by terminals that exited on their own.
    const stuck = (await Promise.all([...this.sessions].map((sid) => this.sweep(sid)))).flat();
    if (stuck.length > 0) this.log.warn(`processes still alive after SIGKILL at shutdown: ${stuck.join(", ")}`);
    for (const t of this.terminals.values()) t.screen.dispose();
    this.terminals.clear();
    this.listeners.clear();
  }

  private async terminate(t: Managed, signal: NodeJS.Signals, graceMs: number): Promise<void> {
    const pid = t.proc.pid;
    if (t.info.running) {
      this.log.debug(`terminal ${t.info.id}: ${signal}`);
      signalSession(pid, signal);
      if (signal !== "SIGKILL") await within(t.exited, graceMs);
      if (t.info.running) {
        signalSession(pid, "SIGKILL");
        await within(t.exited, 10_000);
        if (t.info.running && isAlive(pid)) {
          throw new CcbError("TIMEOUT", `Terminal ${t.info.id} (pid ${pid}) did not exit after SIGKILL.`);
        }
      }
    }
    await this.sweep(pid);
  }

  /**
   * After a terminal's leader has gone, kill what is left in its session and process group (a
   * background job). A pid is not reused while it names a live group or session, so if a process
   * with the leader's pid exists now, that pid belongs to someone else and nothing is signalled.
   * Returns the pids still alive after SIGKILL.
   */
  private async sweep(leader: number): Promise<number[]> {
    if (isAlive(leader)) return [];
    return waitGone(signalSession(leader, "SIGKILL"), 5000);
  }

  private async waitForChange(t: Managed, ms: number, signal?: AbortSignal): Promise<void> {
    const ac = new AbortController();
    const onAbort = () => ac.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    const waker = () => ac.abort();
    t.wakers.add(waker);
    try {
      await pause(ms, ac.signal);
    } finally {
      t.wakers.delete(waker);
      signal?.removeEventListener("abort", onAbort);
    }
    if (signal?.aborted) throw new CcbError("ABORTED", "The operation was cancelled.");
  }

  private wake(t: Managed): void {
    for (const w of t.wakers) w();
  }

  private emit(event: TerminalEvent): void {
    for (const l of this.listeners) {
      try {
        l(event);
      } catch (err) {
        this.log.warn(`terminal event listener failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  /** Keep at most MAX_EXITED_KEPT exited terminals (the oldest go first). */
  private evictExited(): void {
    const exited = [...this.terminals.values()].filter((t) => !t.info.running);
    for (const t of exited.slice(0, Math.max(0, exited.length - MAX_EXITED_KEPT))) {
      t.screen.dispose();
      this.terminals.delete(t.info.id);
    }
  }

  private find(id: string): Managed {
    const t = this.terminals.get(id);
    if (!t) {
      throw new CcbError("TERMINAL_NOT_FOUND", `No terminal with id ${JSON.stringify(id)}.`, {
        hint: "List the terminals that exist ({{terminalList}}).",
      });
    }
    return t;
  }

  private exitedError(t: Managed): CcbError {
    const how = t.info.signal ? `was killed by ${t.info.signal}` : `exited with code ${t.info.exitCode}`;
    return new CcbError("TERMINAL_EXITED", `Terminal ${t.info.id} ${how}.`, {
      hint: "Its output can still be read ({{terminalRead}}); create a new terminal to run more commands.",
    });
  }

  private snapshotInfo(t: Managed): TerminalInfo {
    return { ...t.info, args: [...t.info.args] };
  }
}
