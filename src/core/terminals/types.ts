// The public types of the terminal service (TerminalManager in manager.ts implements it).

/** Which backend to ask for (CCB_PTY_BACKEND): what `backend.ts` picks from. */
export type BackendChoice = "node-pty" | "bun" | "pipe";

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
  /** Who asked for it, when the request carried an OAuth identity: `sub=<subject> client=<client id>`. */
  startedBy?: string;
}

/** The bounds of a terminal call, the same for a tool's arguments and a call relayed to the workbench's owner. */
export const TERMINAL_LIMITS = {
  maxArgs: 1000,
  minCols: 2,
  maxCols: 1000,
  minRows: 1,
  maxRows: 500,
  maxTitle: 200,
  maxReadBytes: 4 * 1024 * 1024,
  maxWaitMs: 60_000,
} as const;

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
  /** Who asked (the OAuth identity of the request, `sub=… client=…`): kept in the terminal's info and logged. */
  startedBy?: string;
}

export interface TerminalReadOptions {
  /** Read raw output from here (a previous `nextOffset`); default the oldest output still held. */
  offset?: number;
  /** Include the scrollback above the visible screen. */
  scrollback?: boolean;
  /** At most this many characters of raw output (default 256 Ki). */
  maxBytes?: number;
  /** When nothing new is there yet, wait up to this long for output or exit. */
  waitMs?: number;
  signal?: AbortSignal;
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
  /** Where `output` starts (greater than `offset` when output was dropped). */
  from: number;
  /** Total output produced so far (the offset at the end of all output). */
  end: number;
  /** Cursor position on the screen (0-based). */
  cursor: { x: number; y: number };
}

export type TerminalEvent = { type: "created" | "data" | "exit" | "resize"; id: string; data?: string };

export interface TerminalManagerOptions {
  /** Force a backend (default: CCB_PTY_BACKEND, else the runtime's own). */
  backend?: BackendChoice;
  /** Raw output kept per terminal, in characters (default 1 Mi). */
  bufferSize?: number;
  /** Lines of scrollback in the rendered screen (default 1000). */
  scrollback?: number;
  /** How long `kill` waits after its signal before SIGKILL (default 2000 ms). */
  killGraceMs?: number;
  /** Running terminals allowed at once (default 32). */
  maxTerminals?: number;
}

type Awaitable<T> = T | Promise<T>;

/**
 * What tools use of the workspace's terminals: this process's TerminalManager, or the terminals of
 * the shared workbench's owner relayed over the attach channel (src/workbench/share/terminals.ts).
 */
export interface TerminalService {
  create(options: CreateTerminalOptions): Promise<TerminalInfo>;
  list(): Awaitable<TerminalInfo[]>;
  get(id: string): Awaitable<TerminalInfo>;
  read(id: string, options?: TerminalReadOptions): Promise<TerminalReadResult>;
  write(id: string, data: string): Awaitable<number>;
  resize(id: string, cols: number, rows: number): Awaitable<void>;
  kill(id: string, signal?: string): Promise<TerminalInfo>;
  remove(id: string): Promise<TerminalInfo>;
}
