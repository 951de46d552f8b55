// Cost of containment (src/platform/supervisor.ts), against the same code without it in the same run:
// (1) terminal spawn: TerminalManager.create until the child's first output, before the supervisor
//     starts (baseline) and after (every child carries the marker);
// (2) the supervisor's own start (spawning /bin/sh), and its sweep: from SIGKILL of a process that
//     started N marked sleepers (setsid'd) until none is left.
// Run: node --import tsx bench/containment.bench.ts   (BENCH_N spawns per side)
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "../src/core/log.ts";
import { TerminalManager } from "../src/core/terminals/manager.ts";
import { Workspace } from "../src/core/workspace.ts";
import { fmt, ratio, summarize } from "./lib.ts";

const N = Number(process.env.BENCH_N ?? 40);
const dir = mkdtempSync(join(tmpdir(), "ccb-contain-bench-"));

async function spawnTimes(m: TerminalManager): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    const got = new Promise<void>((resolve) => {
      const off = m.onEvent((e) => {
        if (e.type === "data" && e.data?.includes("up")) {
          off();
          resolve();
        }
      });
    });
    const t = await m.create({ command: "sh", args: ["-c", "echo up; sleep 5"] });
    await got;
    out.push(performance.now() - t0);
    await m.remove(t.id);
  }
  return out;
}

const m = new TerminalManager(new Workspace([dir]), silentLogger, { backend: "node-pty" });
await spawnTimes(m); // warm up
const before = summarize(await spawnTimes(m));
const { startSupervisor } = await import("../src/platform/supervisor.ts");
const s0 = performance.now();
startSupervisor();
const supStartMs = performance.now() - s0;
const after = summarize(await spawnTimes(m));
await m.dispose();

// (2) sweep time after SIGKILL of a contained process
const K = 20;
const mark = `ccbbench${process.pid}`;
const script = `
import { startSupervisor } from ${JSON.stringify(new URL("../src/platform/supervisor.ts", import.meta.url).pathname)};
import { spawn } from "node:child_process";
startSupervisor();
for (let i = 0; i < ${K}; i++) spawn("setsid", ["sh", "-c", "sleep 600; : ${mark}"], { stdio: "ignore", detached: true }).unref();
setTimeout(() => process.stdout.write("ready\\n"), 500);
setInterval(() => {}, 1000);
`;
const marked = () =>
  readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(mark);
      } catch {
        return false;
      }
    }).length;
const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
  stdio: ["ignore", "pipe", "inherit"],
});
await new Promise<void>((r) => child.stdout.on("data", (d: Buffer) => d.toString().includes("ready") && r()));
const started = marked();
const k0 = performance.now();
child.kill("SIGKILL");
while (marked() > 0 && performance.now() - k0 < 30_000) await new Promise((r) => setTimeout(r, 5));
const sweepMs = performance.now() - k0;
const left = marked();
rmSync(dir, { recursive: true, force: true });

console.log(
  `terminal spawn to first output, p50: without supervisor ${fmt(before.p50)}, with ${fmt(after.p50)} (${ratio(after.p50, before.p50)}); p99 ${fmt(before.p99)} vs ${fmt(after.p99)}`,
);
console.log(
  `supervisor start ${fmt(supStartMs)}; sweep of ${started} setsid'd children after SIGKILL: ${fmt(sweepMs)}, left ${left}`,
);
console.log(
  JSON.stringify({
    bench: "containment",
    spawnP50BeforeMs: before.p50,
    spawnP50AfterMs: after.p50,
    spawnP99BeforeMs: before.p99,
    spawnP99AfterMs: after.p99,
    supervisorStartMs: supStartMs,
    sweepMs,
    swept: started,
    left,
  }),
);
process.exit(0);
