import type { ChildProcess } from "node:child_process";

/** Everything a child wrote to one of its streams, and how far the waits have read (see waitForOutput). */
const outputs = new WeakMap<NodeJS.ReadableStream, { text: string; cursor: number }>();

function tap(stream: NodeJS.ReadableStream): { text: string; cursor: number } {
  let out = outputs.get(stream);
  if (!out) {
    const o = { text: "", cursor: 0 };
    stream.on("data", (d: Buffer | string) => {
      o.text += d.toString();
    });
    outputs.set(stream, o);
    out = o;
  }
  return out;
}

/**
 * Wait until a child's stderr (or stdout) matches, returning the match; fails with the output so far.
 * Each wait reads on from the end of the previous wait's match on that stream, through everything
 * the child wrote since (kept from the first wait on): two lines that arrive in one chunk are both
 * seen by two waits in a row (a wait that listened only for chunks after the call lost the second
 * line when a busy test read its pipe late: stream.test's CI failure, ledger).
 */
export function waitForOutput(
  child: ChildProcess,
  pattern: RegExp,
  options: { stream?: "stderr" | "stdout"; timeoutMs?: number } = {},
): Promise<RegExpMatchArray> {
  const stream = options.stream === "stdout" ? child.stdout : child.stderr;
  if (!stream) return Promise.reject(new Error(`the child has no ${options.stream ?? "stderr"} pipe`));
  const out = tap(stream);
  return new Promise((resolve, reject) => {
    const rest = () => out.text.slice(out.cursor);
    const check = () => {
      const m = rest().match(pattern);
      if (!m) return;
      out.cursor += (m.index ?? 0) + m[0].length;
      cleanup();
      resolve(m);
    };
    const onExit = (code: number | null) => {
      check();
      cleanup();
      reject(new Error(`process exited (${code}) before ${pattern}; output:\n${rest()}`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`timed out waiting for ${pattern}; output:\n${rest()}`));
    }, options.timeoutMs ?? 30_000);
    const cleanup = () => {
      clearTimeout(timer);
      stream.off("data", check);
      child.off("exit", onExit);
    };
    stream.on("data", check); // after tap's listener: the text already holds this chunk
    child.on("exit", onExit);
    check();
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
