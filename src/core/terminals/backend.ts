import { CcbError } from "../errors.ts";
import { jsRuntime } from "../js-runtime.ts";
import type { Logger } from "../log.ts";
import { bunGlobal, type PtyBackend } from "./pty.ts";
import type { BackendChoice } from "./types.ts";

function parseOverride(value: string | undefined): BackendChoice | undefined {
  if (!value) return undefined;
  const v = value.trim().toLowerCase();
  if (v === "node-pty" || v === "pipe") return v;
  if (v === "bun" || v === "bun-terminal") return "bun";
  throw new CcbError("CONFIG_INVALID", `CCB_PTY_BACKEND must be node-pty, bun or pipe (got ${JSON.stringify(value)}).`);
}

/**
 * Pick the terminal backend: an explicit choice (or CCB_PTY_BACKEND) first; under Bun its built-in
 * terminal (node-pty dies under Bun); under Node node-pty, or the pipe fallback with a warning
 * saying why when node-pty cannot load.
 */
export async function selectBackend(log: Logger, choice?: BackendChoice): Promise<PtyBackend> {
  const wanted = choice ?? parseOverride(process.env.CCB_PTY_BACKEND);
  if (wanted === "pipe") {
    const { pipeBackend } = await import("./backend-pipe.ts");
    return pipeBackend();
  }
  if (wanted === "bun" || (wanted === undefined && bunGlobal() !== undefined)) {
    const { bunTerminalBackend } = await import("./backend-bun.ts");
    const backend = bunTerminalBackend();
    if (backend) return backend;
    if (wanted === "bun") {
      throw new CcbError("UNSUPPORTED", "The bun terminal backend needs Bun >= 1.3 (Bun.spawn with `terminal`).", {
        hint: "Run ccb under Bun (or the compiled binary), or unset CCB_PTY_BACKEND.",
      });
    }
    const { pipeBackend } = await import("./backend-pipe.ts");
    log.warn("Bun.spawn has no `terminal` support in this Bun; terminals fall back to pipes (no TTY, no resize).");
    return pipeBackend();
  }
  if (jsRuntime().name === "deno") {
    // node-pty loads under Deno but every write fails with EBADF: a terminal that cannot be typed
    // into would look like a PTY, so Deno gets the pipe fallback, which says what it is.
    if (wanted === "node-pty") {
      throw new CcbError("UNSUPPORTED", "node-pty does not work under Deno (its writes fail with EBADF).", {
        hint: "Unset CCB_PTY_BACKEND (Deno uses pipes), or run ccb under Node or as the compiled binary for real PTYs.",
      });
    }
    log.info("Deno: terminals use pipes (no TTY, no resize); run ccb under Node or the compiled binary for PTYs.");
    const { pipeBackend } = await import("./backend-pipe.ts");
    return pipeBackend();
  }
  if (bunGlobal() !== undefined) {
    // node-pty loads under Bun but dies after its first chunk of output: never use it there.
    throw new CcbError("UNSUPPORTED", "node-pty does not work under Bun.", {
      hint: "Use CCB_PTY_BACKEND=bun (the default under Bun) or pipe.",
    });
  }
  const { nodePtyBackend } = await import("./backend-node-pty.ts");
  try {
    return await nodePtyBackend();
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    if (wanted === "node-pty") {
      throw new CcbError("UNSUPPORTED", `node-pty could not be loaded: ${why}`, {
        hint: "Reinstall dependencies so node-pty builds (it needs python3, make and a C++ compiler), or unset CCB_PTY_BACKEND.",
        cause: err,
      });
    }
    log.warn(`node-pty could not be loaded (${why}); terminals fall back to pipes (no TTY, no resize).`);
    const { pipeBackend } = await import("./backend-pipe.ts");
    return pipeBackend();
  }
}
