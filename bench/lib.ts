import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

/** Small helpers shared by the benchmarks: percentiles and a consistent report. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}

export function summarize(samplesMs: number[]): { p50: number; p99: number; mean: number; n: number } {
  const s = [...samplesMs].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99), mean: s.reduce((a, b) => a + b, 0) / s.length, n: s.length };
}

export const fmt = (ms: number) => `${ms.toFixed(3)} ms`;
export const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;

/** CPU time (user+system) of a process in ms, from /proc (Linux). */
export function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / 100;
}

/** ripgrep run directly for a fixed string (the baseline of the search benchmarks): wall time and matching lines. */
export function rgFixedString(rg: string, root: string, needle: string): Promise<{ ms: number; lines: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(rg, ["--no-config", "--no-require-git", "-n", "-F", needle, "."], {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("close", () =>
      resolve({ ms: performance.now() - t0, lines: out.split("\n").filter((l) => l.includes(needle)).length }),
    );
  });
}

/**
 * Run this benchmark with every process on one CPU (`taskset -c 0`; children inherit it), so a
 * round trip wakes client and server the same way for every target. On a 2-core machine an
 * unpinned ping round trip is bimodal (about 50 or about 110 us, by where the scheduler puts the
 * two processes), which made the same build measure 0.5x and 1.9x of the bare server in
 * consecutive runs. Re-executes the current process pinned, once; BENCH_PIN=0 leaves it unpinned.
 * Returns a line saying which way it ran.
 */
export function pinToOneCpu(): string {
  if (process.env.BENCH_PINNED === "1") return "pinned to CPU 0 (taskset): client and servers share one core";
  if (process.env.BENCH_PIN === "0") return "not pinned (BENCH_PIN=0): p50 ratios of round trips vary with scheduling";
  if (spawnSync("taskset", ["-c", "0", "true"]).status !== 0) return "not pinned (no taskset)";
  const r = spawnSync("taskset", ["-c", "0", process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: "inherit",
    env: { ...process.env, BENCH_PINNED: "1" },
  });
  process.exit(r.status ?? 1);
}
