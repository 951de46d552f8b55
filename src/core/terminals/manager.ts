import type { Workspace } from "../workspace.ts";
import type { Logger } from "../log.ts";
import { CcbError } from "../errors.ts";

// OWNER: terminals helper. Skeleton: signatures are the contract other parts code against.

export type TerminalBackendKind = "node-pty" | "bun-terminal" | "pipe";

export interface TerminalInfo {
  id: string;
  title: string;
  command: string;
  args: string[];
  cwd: string;
  cols: number;
  rows: number;
  pid: number | undefined;
  backend: TerminalBackendKind;
  /** False for the pipe fallback: no TTY, no resize. */
  isPty: boolean;
  running: boolean;
  exitCode: number | null;
  signal: string | null;
  createdAt: number;
  /** Where created: a tool, or the workbench's terminal panel. */
  origin: "tool" | "workbench";
}

export interface CreateTerminalOptions {
  /** Program to run; default the user's shell. */
  command?: string;
  args?: string[];
  cwd?: string;
  env?: Record<string, string>;
  cols?: number;
  rows?: number;
  title?: string;
  origin?: "tool" | "workbench";
}

export interface TerminalReadResult {
  info: TerminalInfo;
  /** The rendered screen (plus scrollback if asked) as plain text. */
  screen: string;
  /** Raw output since `offset`. */
  output: string;
  /** Offset to pass next time to read incrementally. */
  nextOffset: number;
  /** True when output before `offset` was already dropped from the bounded buffer. */
  dropped: boolean;
}

export class TerminalManager {
  constructor(readonly workspace: Workspace, readonly log: Logger) {}

  async create(_options: CreateTerminalOptions): Promise<TerminalInfo> {
    throw new CcbError("UNSUPPORTED", "not implemented yet");
  }
  list(): TerminalInfo[] {
    return [];
  }
  async read(_id: string, _options?: { offset?: number; scrollback?: boolean; maxBytes?: number }): Promise<TerminalReadResult> {
    throw new CcbError("UNSUPPORTED", "not implemented yet");
  }
  write(_id: string, _data: string): void {
    throw new CcbError("UNSUPPORTED", "not implemented yet");
  }
  resize(_id: string, _cols: number, _rows: number): void {
    throw new CcbError("UNSUPPORTED", "not implemented yet");
  }
  async kill(_id: string, _signal?: string): Promise<TerminalInfo> {
    throw new CcbError("UNSUPPORTED", "not implemented yet");
  }
  /** Wait until the terminal exits (or the signal fires). */
  async waitForExit(_id: string, _signal?: AbortSignal): Promise<TerminalInfo> {
    throw new CcbError("UNSUPPORTED", "not implemented yet");
  }
  /** Subscribe to raw output and lifecycle events (used by the workbench to mirror terminals). */
  onEvent(_listener: (event: { type: "created" | "data" | "exit" | "resize"; id: string; data?: string }) => void): () => void {
    return () => {};
  }
  /** Kill every child; called on shutdown. */
  async dispose(): Promise<void> {}
}
