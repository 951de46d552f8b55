// ccb terminal benchmarks, against node-pty used bare in the same process:
// (1) keystroke round trip: write `echo <n>` to an interactive bash, time until the answer arrives;
// (2) bulk output: `seq 1 200000` (1.49 MB through the PTY) from spawn to exit with all output in
//     (ccb also renders it in a headless xterm and keeps the ring buffer).
// Run: node --import tsx bench/terminals.bench.ts   (BENCH_N round trips, BENCH_BULK bulk runs)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "../src/core/log.ts";
import { TerminalManager } from "../src/core/terminals/manager.ts";
import { Workspace } from "../src/core/workspace.ts";
import { fmt, ratio, summarize } from "./lib.ts";

const N = Number(process.env.BENCH_N ?? 200);
const BULK = Number(process.env.BENCH_BULK ?? 5);
const dir = mkdtempSync(join(tmpdir(), "ccb-term-bench-"));
const SHELL = ["bash", ["--norc", "--noprofile"]] as const;

interface NodePty {
  spawn(
    file: string,
    args: readonly string[],
    o: Record<string, unknown>,
  ): {
    onData(l: (d: string) => void): void;
    onExit(l: () => void): void;
    write(d: string): void;
    kill(s?: string): void;
  };
}
const ptyModule = (await import("node-pty")) as unknown as Partial<NodePty> & { default?: NodePty };
const pty: NodePty = typeof ptyModule.spawn === "function" ? (ptyModule as NodePty) : (ptyModule.default as NodePty);
const env = { ...process.env, TERM: "xterm-256color" } as Record<string, string>;

/** Round trips on one shell: `wait` resolves when `needle` has appeared in output since `from`. */
async function roundTrips(write: (s: string) => void, onData: (l: (d: string) => void) => void): Promise<number[]> {
  let buf = "";
  let waiter: { needle: string; resolve: () => void } | undefined;
  onData((d) => {
    buf += d;
    if (waiter && buf.includes(waiter.needle)) {
      const w = waiter;
      waiter = undefined;
      w.resolve();
    }
  });
  const once = (cmd: string, needle: string) =>
    new Promise<void>((resolve) => {
      buf = "";
      waiter = { needle, resolve };
      write(cmd);
    });
  await once("echo warm-$((1+1))\n", "warm-2");
  const samples: number[] = [];
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    await once(`echo r${i}-$((2+3))\n`, `r${i}-5`);
    samples.push(performance.now() - t0);
  }
  return samples;
}

// (1) round trip
const bare = pty.spawn(SHELL[0], SHELL[1], { cols: 120, rows: 30, cwd: dir, env });
const bareRt = await roundTrips(
  (s) => bare.write(s),
  (l) => bare.onData(l),
);
bare.kill("SIGKILL");

const m = new TerminalManager(new Workspace([dir]), silentLogger, { backend: "node-pty" });
const t = await m.create({ command: SHELL[0], args: [...SHELL[1]], cols: 120, rows: 30 });
const ccbRt = await roundTrips(
  (s) => m.write(t.id, s),
  (l) => m.onEvent((e) => e.type === "data" && e.id === t.id && e.data && l(e.data)),
);
await m.kill(t.id, "SIGKILL");

// (2) bulk output
const bareBulk: number[] = [];
const bareBytes: number[] = [];
for (let i = 0; i < BULK; i++) {
  const t0 = performance.now();
  let n = 0;
  await new Promise<void>((resolve) => {
    const p = pty.spawn("seq", ["1", "200000"], { cols: 120, rows: 30, cwd: dir, env });
    p.onData((d) => (n += d.length));
    p.onExit(resolve);
  });
  bareBulk.push(performance.now() - t0);
  bareBytes.push(n);
}
const ccbBulk: number[] = [];
const ccbBytes: number[] = [];
for (let i = 0; i < BULK; i++) {
  const t0 = performance.now();
  const s = await m.create({ command: "seq", args: ["1", "200000"] });
  await m.waitForExit(s.id);
  const r = await m.read(s.id, { maxBytes: 0 });
  ccbBulk.push(performance.now() - t0);
  ccbBytes.push(r.end);
}
await m.dispose();
rmSync(dir, { recursive: true, force: true });

const rtB = summarize(bareRt);
const rtC = summarize(ccbRt);
const bkB = summarize(bareBulk);
const bkC = summarize(ccbBulk);
console.log(
  `keystroke round trip (n=${N}): node-pty p50 ${fmt(rtB.p50)} p99 ${fmt(rtB.p99)} | ccb p50 ${fmt(rtC.p50)} p99 ${fmt(rtC.p99)} | ratio p50 ${ratio(rtC.p50, rtB.p50)} p99 ${ratio(rtC.p99, rtB.p99)}`,
);
console.log(
  `seq 1 200000 (n=${BULK}): node-pty p50 ${fmt(bkB.p50)} (bytes received ${bareBytes.join(", ")}) | ccb p50 ${fmt(bkC.p50)} (bytes ${ccbBytes.join(", ")}) | ratio p50 ${ratio(bkC.p50, bkB.p50)}`,
);
console.log(
  JSON.stringify({
    bench: "terminals",
    roundTrip: {
      bareP50: rtB.p50,
      bareP99: rtB.p99,
      ccbP50: rtC.p50,
      ccbP99: rtC.p99,
      ratioP50: rtC.p50 / rtB.p50,
      ratioP99: rtC.p99 / rtB.p99,
    },
    bulk: {
      bareP50: bkB.p50,
      ccbP50: bkC.p50,
      ratioP50: bkC.p50 / bkB.p50,
      expectedBytes: 1_488_895,
      bareBytes,
      ccbBytes,
    },
  }),
);
