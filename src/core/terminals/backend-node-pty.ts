import { closeSync, constants as fsConstants, openSync } from "node:fs";
import { constants } from "node:os";
import type { ExitStatus, PtyBackend, PtyProcess, SpawnSpec } from "./pty.ts";

// The subset of node-pty's API used here (typed locally so nothing imports node-pty statically:
// it must never load under Bun).
interface NodePtyTerminal {
  readonly pid: number;
  /** The slave device path and the master's read socket (private in node-pty's typings, present on Unix). */
  readonly _pty?: string;
  readonly _socket?: { destroy(...args: unknown[]): unknown; readonly destroyed: boolean };
  write(data: string): void;
  resize(cols: number, rows: number): void;
  onData(listener: (data: string) => void): { dispose(): void };
  onExit(listener: (e: { exitCode: number; signal?: number }) => void): { dispose(): void };
}
interface NodePtyModule {
  spawn(
    file: string,
    args: string[],
    options: { name: string; cols: number; rows: number; cwd: string; env: Record<string, string>; encoding: "utf8" },
  ): NodePtyTerminal;
}

export function signalName(num: number | undefined): string | null {
  if (!num) return null;
  for (const [name, value] of Object.entries(constants.signals)) if (value === num) return name;
  return `SIG${num}`;
}

const QUIET_MS = 50;
const MAX_DRAIN_MS = 5000;
const AFTER_RELEASE_MS = 2000;

/**
 * ...and release it only once the master has gone quiet. After the child exits, node-pty destroys
 * its read socket on a 200 ms timer, which loses the tail of the output whenever the event loop
 * was busy at that moment (timers run before I/O). We intercept that destroy: wait until a full
 * I/O phase has passed with no new output (or MAX_DRAIN_MS), then close our slave descriptor so
 * the master reads the rest and then EIO, which closes the socket (and reports the exit) normally.
 * A background job still holding the PTY gets AFTER_RELEASE_MS before the socket goes anyway.
 */
function deferCloseUntilDrained(
  term: NodePtyTerminal,
  holding: () => boolean,
  release: () => void,
  progress: () => { chunks: number; lastDataAt: number },
): void {
  const sock = term._socket;
  if (!sock || typeof sock.destroy !== "function") return;
  const realDestroy = sock.destroy.bind(sock);
  let deferred = false;
  sock.destroy = (...args: unknown[]) => {
    if (deferred || !holding() || sock.destroyed) return realDestroy(...args);
    deferred = true;
    const started = Date.now();
    let seen = progress().chunks;
    const check = () =>
      setTimeout(
        () =>
          // setImmediate runs after the poll phase, so pending output has been read by now.
          setImmediate(() => {
            const p = progress();
            const quiet = p.chunks === seen && Date.now() - p.lastDataAt >= QUIET_MS;
            seen = p.chunks;
            if (!quiet && Date.now() - started < MAX_DRAIN_MS) return check();
            release();
            setTimeout(() => {
              if (!sock.destroyed) realDestroy();
            }, AFTER_RELEASE_MS).unref();
          }),
        QUIET_MS,
      );
    check();
    return sock;
  };
}

/** node-pty, loaded dynamically (Node only). Throws when the native addon is missing or broken. */
export async function nodePtyBackend(): Promise<PtyBackend> {
  const specifier = "node-pty";
  const mod = (await import(specifier)) as Partial<NodePtyModule> & { default?: NodePtyModule };
  const pty: NodePtyModule | undefined = typeof mod.spawn === "function" ? (mod as NodePtyModule) : mod.default;
  if (!pty || typeof pty.spawn !== "function") throw new Error("node-pty has no spawn export");
  return {
    kind: "node-pty",
    isPty: true,
    spawn(spec: SpawnSpec): PtyProcess {
      const term = pty.spawn(spec.file, spec.args, {
        name: spec.env.TERM ?? "xterm-256color",
        cols: spec.cols,
        rows: spec.rows,
        cwd: spec.cwd,
        env: spec.env,
        encoding: "utf8",
      });
      // Linux drops output still in flight when the last slave descriptor closes (a quick command
      // like `seq 1 200000` loses ~10 KB), so we hold a slave descriptor of our own...
      let slave: number | undefined;
      if (term._pty) {
        try {
          slave = openSync(term._pty, fsConstants.O_RDWR | fsConstants.O_NOCTTY);
        } catch {
          slave = undefined;
        }
      }
      const releaseSlave = () => {
        if (slave === undefined) return;
        try {
          closeSync(slave);
        } catch {
          // already closed
        }
        slave = undefined;
      };
      let chunks = 0;
      let lastDataAt = Date.now();
      term.onData(() => {
        chunks++;
        lastDataAt = Date.now();
      });
      deferCloseUntilDrained(
        term,
        () => slave !== undefined,
        releaseSlave,
        () => ({ chunks, lastDataAt }),
      );
      term.onExit(releaseSlave);
      return {
        pid: term.pid,
        write: (data) => term.write(data),
        resize: (cols, rows) => term.resize(cols, rows),
        onData: (listener) => void term.onData(listener),
        onExit: (listener) =>
          void term.onExit((e) => {
            const status: ExitStatus = { exitCode: e.signal ? null : e.exitCode, signal: signalName(e.signal) };
            listener(status);
          }),
        // node-pty closes the master itself once the child has exited.
        close: releaseSlave,
      };
    },
  };
}
