import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

/**
 * How to start the CLI under test: the compiled binary when CCB_TEST_BIN is set (CI runs the
 * e2e suite against the Bun build too), Deno when CCB_TEST_RUNTIME=deno, else Node running
 * bin/ccb.mjs (built by `npm test`).
 */
export function ccbCommand(args: string[]): { command: string; args: string[] } {
  const bin = process.env.CCB_TEST_BIN;
  if (bin) return { command: bin, args };
  if (process.env.CCB_TEST_RUNTIME === "deno") {
    // deno from the npm registry (a devDependency), running the Node build.
    return {
      command: fileURLToPath(new URL("../../node_modules/.bin/deno", import.meta.url)),
      args: ["run", "-A", fileURLToPath(new URL("../../dist/node/main.mjs", import.meta.url)), ...args],
    };
  }
  return { command: process.execPath, args: [fileURLToPath(new URL("../../bin/ccb.mjs", import.meta.url)), ...args] };
}

export function spawnCcb(args: string[], options: SpawnOptions = {}): ChildProcess {
  const { command, args: full } = ccbCommand(args);
  return spawn(command, full, { stdio: ["pipe", "pipe", "pipe"], ...options });
}

/** Run the CLI to completion and collect its output. */
export function runCcb(
  args: string[],
  options: SpawnOptions & { input?: string; timeoutMs?: number } = {},
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawnCcb(args, options);
    let stdout = "";
    let stderr = "";
    child.stdout?.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr?.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 30_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
    else child.stdin?.end();
  });
}
