import { bunGlobal, ChildOutput, type ExitStatus, type PtyBackend, type PtyProcess, type SpawnSpec } from "./pty.ts";

// The subset of Bun's API used here (Bun >= 1.3: `Bun.spawn(cmd, { terminal })`), typed locally
// so that nothing in the Node build refers to Bun's types.
interface BunTerminal {
  write(data: string): number;
  resize(cols: number, rows: number): void;
  close(): void;
  readonly closed: boolean;
}
interface BunSubprocess {
  readonly pid: number;
  readonly exited: Promise<number>;
  readonly exitCode: number | null;
  readonly signalCode: string | null;
  readonly terminal?: BunTerminal;
}
interface BunApi {
  spawn(
    cmd: string[],
    options: {
      cwd: string;
      env: Record<string, string>;
      terminal: {
        cols: number;
        rows: number;
        name?: string;
        data(terminal: BunTerminal, data: Uint8Array): void;
        exit?(terminal: BunTerminal, status: number, signal: string | null): void;
      };
    },
  ): BunSubprocess;
}

/** After the child exits, how long to wait for the PTY to report EOF (a background job may hold it open). */
const DRAIN_AFTER_EXIT_MS = 300;

/** Bun's built-in PTY, or undefined when not running under a Bun that has it. */
export function bunTerminalBackend(): PtyBackend | undefined {
  const bun = bunGlobal() as (BunApi & { Terminal?: unknown }) | undefined;
  if (!bun || typeof bun.spawn !== "function" || typeof bun.Terminal !== "function") return undefined;
  return {
    kind: "bun-terminal",
    isPty: true,
    spawn(spec: SpawnSpec): PtyProcess {
      const decoder = new TextDecoder("utf-8");
      const output = new ChildOutput();
      const emit = output.emit;
      let eof!: () => void;
      const eofSeen = new Promise<void>((resolve) => (eof = resolve));
      const proc = bun.spawn([spec.file, ...spec.args], {
        cwd: spec.cwd,
        env: spec.env,
        terminal: {
          cols: spec.cols,
          rows: spec.rows,
          name: spec.env.TERM ?? "xterm-256color",
          data: (_t, bytes) => emit(decoder.decode(bytes, { stream: true })),
          exit: () => eof(),
        },
      });
      const terminal = proc.terminal;
      if (!terminal) throw new Error("Bun.spawn returned no terminal");
      const exited: Promise<ExitStatus> = proc.exited.then(async () => {
        // `exited` can resolve before the last output has been read: wait for the PTY's EOF, briefly.
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([eofSeen, new Promise<void>((r) => (timer = setTimeout(r, DRAIN_AFTER_EXIT_MS)))]);
        clearTimeout(timer);
        emit(decoder.decode());
        return { exitCode: proc.signalCode ? null : proc.exitCode, signal: proc.signalCode ?? null };
      });
      return {
        pid: proc.pid,
        write: (data) => void terminal.write(data),
        resize: (cols, rows) => terminal.resize(cols, rows),
        onData: (listener) => output.listen(listener),
        onExit: (listener) => void exited.then(listener),
        close: () => {
          if (!terminal.closed) terminal.close();
        },
      };
    },
  };
}
