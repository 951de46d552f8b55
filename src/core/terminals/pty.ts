import type { TerminalBackendKind } from "./types.ts";

/** What a terminal backend is: the interface the node-pty, Bun and pipe backends implement (backend.ts picks one). */
export interface SpawnSpec {
  /** Absolute path of the program. */
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  cols: number;
  rows: number;
}

export interface ExitStatus {
  exitCode: number | null;
  /** Signal name (e.g. "SIGTERM") when the process was killed by a signal. */
  signal: string | null;
}

/** One running child, as each backend exposes it. */
export interface PtyProcess {
  readonly pid: number;
  write(data: string): void;
  /** Resize the PTY (the pipe fallback throws UNSUPPORTED). */
  resize(cols: number, rows: number): void;
  /** Decoded output; for the pipe fallback stdout and stderr interleaved. */
  onData(listener: (data: string) => void): void;
  /** Fires once, after the process has exited and its remaining output has been delivered. */
  onExit(listener: (status: ExitStatus) => void): void;
  /** Release the PTY / pipes after exit. */
  close(): void;
}

/** A way to start children attached to a terminal. */
export interface PtyBackend {
  readonly kind: TerminalBackendKind;
  /** False for the pipe fallback: no TTY, no resize. */
  readonly isPty: boolean;
  spawn(spec: SpawnSpec): PtyProcess;
}

/** `globalThis.Bun` when running under Bun (bun run or a compiled binary), else undefined. */
export function bunGlobal(): unknown {
  return (globalThis as { Bun?: unknown }).Bun;
}

/** A child's decoded output: what comes before anyone listens is kept for the first listener. */
export class ChildOutput {
  readonly #listeners: ((data: string) => void)[] = [];
  readonly #pending: string[] = [];

  readonly emit = (text: string): void => {
    if (text.length === 0) return;
    if (this.#listeners.length === 0) this.#pending.push(text);
    else for (const l of this.#listeners) l(text);
  };

  listen(listener: (data: string) => void): void {
    this.#listeners.push(listener);
    for (const text of this.#pending.splice(0)) listener(text);
  }
}
