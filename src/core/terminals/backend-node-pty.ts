import { closeSync, constants as fsConstants, openSync } from "node:fs";
import { constants } from "node:os";
import type { ExitStatus, PtyBackend, PtyProcess, SpawnSpec } from "./backend.ts";

// The subset of node-pty's API used here (typed locally so nothing imports node-pty statically:
// it must never load under Bun).
interface NodePtyTerminal {
  readonly pid: number;
  /** The slave device path (private in node-pty's typings, present on Unix). */
  readonly _pty?: string;
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
      // like `seq 1 200000` loses ~10 KB). Holding a slave descriptor until the exit avoids that:
      // node-pty then drains the master for its close timeout before reporting the exit.
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
