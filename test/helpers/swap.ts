import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * A process that atomically exchanges two directory entries in a tight loop
 * (renameat2(RENAME_EXCHANGE), test/helpers/swap.py), to attack check-then-use races.
 * `stop()` ends it with both entries back in place and returns how many exchanges it made.
 */
export async function startSwapper(a: string, b: string): Promise<{ stop(): Promise<number> }> {
  const child = spawn("python3", [fileURLToPath(new URL("./swap.py", import.meta.url)), a, b], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  await new Promise<void>((resolve, reject) => {
    const t = setInterval(() => {
      if (out.startsWith("ready\n")) {
        clearInterval(t);
        resolve();
      }
    }, 5);
    void exited.then((code) => {
      clearInterval(t);
      reject(new Error(`swapper exited (${code}): ${err}`));
    });
  });
  return {
    async stop() {
      child.kill("SIGTERM");
      const code = await exited;
      if (code !== 0) throw new Error(`swapper failed (${code}): ${err}`);
      return Number(out.split("\n")[1]);
    },
  };
}
