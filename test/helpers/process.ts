import type { ChildProcess } from "node:child_process";

/** Wait until a child's stderr (or stdout) matches, returning the match; fails with the output so far. */
export function waitForOutput(
  child: ChildProcess,
  pattern: RegExp,
  options: { stream?: "stderr" | "stdout"; timeoutMs?: number } = {},
): Promise<RegExpMatchArray> {
  const stream = options.stream === "stdout" ? child.stdout : child.stderr;
  return new Promise((resolve, reject) => {
    let seen = "";
    const onData = (d: Buffer | string) => {
      seen += d.toString();
      const m = seen.match(pattern);
      if (m) {
        cleanup();
        resolve(m);
      }
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`process exited (${code}) before ${pattern}; output:\n${seen}`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`timed out waiting for ${pattern}; output:\n${seen}`));
    }, options.timeoutMs ?? 30_000);
    const cleanup = () => {
      clearTimeout(timer);
      stream?.off("data", onData);
      child.off("exit", onExit);
    };
    stream?.on("data", onData);
    child.on("exit", onExit);
  });
}

/** Kill a child and wait for it to be gone. */
export async function stopProcess(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  child.kill(signal);
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  const code = await exited;
  clearTimeout(timer);
  return code;
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Poll a condition (for state outside our process, e.g. a pid going away) until true. */
export async function until(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}
