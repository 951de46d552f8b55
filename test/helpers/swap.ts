import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
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

/** Every entry under `dir` (relative path -> a file's content, or "<other>"), symlinks not followed. */
export function treeSnapshot(dir: string, prefix = ""): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) for (const [k, v] of treeSnapshot(join(dir, e.name), rel)) out.set(k, v);
    else out.set(rel, e.isFile() ? readFileSync(join(dir, e.name), "utf8") : "<other>");
  }
  return out;
}
