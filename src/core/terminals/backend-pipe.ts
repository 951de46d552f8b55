import { spawn } from "node:child_process";
import { StringDecoder } from "node:string_decoder";
import { CcbError } from "../errors.ts";
import { ChildOutput, type ExitStatus, type PtyBackend, type PtyProcess, type SpawnSpec } from "./pty.ts";

const DRAIN_AFTER_EXIT_MS = 300;

/**
 * The fallback when no PTY library works: plain pipes. It says that it is one (`isPty: false`):
 * programs see no TTY (no prompt, no line editing, no colours by default) and resize is refused.
 */
export function pipeBackend(): PtyBackend {
  return {
    kind: "pipe",
    isPty: false,
    spawn(spec: SpawnSpec): PtyProcess {
      // detached: the child leads a new session and process group, so kill reaches all of it.
      const child = spawn(spec.file, spec.args, {
        cwd: spec.cwd,
        env: spec.env,
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
      });
      let spawnError: Error | undefined;
      child.on("error", (err) => (spawnError = err));
      if (child.pid === undefined) {
        throw new CcbError("INTERNAL", `Could not start ${spec.file}.`, { cause: spawnError });
      }
      const output = new ChildOutput();
      const emit = output.emit;
      const outDecoder = new StringDecoder("utf8");
      const errDecoder = new StringDecoder("utf8");
      child.stdout.on("data", (b: Buffer) => emit(outDecoder.write(b)));
      child.stderr.on("data", (b: Buffer) => emit(errDecoder.write(b)));
      // A child that exits without reading its input must not crash us with EPIPE.
      child.stdin.on("error", () => {});
      const exited = new Promise<ExitStatus>((resolve) => {
        let done = false;
        const finish = (code: number | null, signal: NodeJS.Signals | null) => {
          if (done) return;
          done = true;
          emit(outDecoder.end());
          emit(errDecoder.end());
          resolve({ exitCode: signal ? null : code, signal: signal ?? null });
        };
        // `close` fires once both output pipes have ended too; a background job that inherited
        // them may hold them open, so after the exit wait for it only briefly.
        child.on("close", finish);
        child.on("exit", (code, signal) => setTimeout(() => finish(code, signal), DRAIN_AFTER_EXIT_MS).unref());
      });
      return {
        pid: child.pid,
        write: (data) => {
          if (child.stdin.writable) child.stdin.write(data);
        },
        resize: () => {
          throw new CcbError(
            "UNSUPPORTED",
            "This terminal runs on the pipe fallback (no PTY): it has no size to change.",
            {
              hint: "Resize works with the node-pty (Node) and bun-terminal (Bun) backends.",
            },
          );
        },
        onData: (listener) => output.listen(listener),
        onExit: (listener) => void exited.then(listener),
        close: () => {
          child.stdin.destroy();
          child.stdout.destroy();
          child.stderr.destroy();
        },
      };
    },
  };
}
