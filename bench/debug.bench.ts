// Debug benchmark, one real code-server + headless Chromium boot per run: debug_start -> debug_wait
// answering "stopped at the breakpoint" (the tools in-process, through the bridge and js-debug),
// against the floor of the same run: the same program started with plain `node` to its exit.
// Run: node --import tsx bench/debug.bench.ts   (needs scripts/setup-peers.sh and the built extension)
import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import debugSetBreakpoints from "../src/tools/debug_set_breakpoints.ts";
import debugStart from "../src/tools/debug_start.ts";
import debugStop from "../src/tools/debug_stop.ts";
import debugWait from "../src/tools/debug_wait.ts";
import { node24 } from "../test/helpers/peers.ts";
import { fmt, ratio, summarize } from "./lib.ts";
import { benchWorkspace, bootBenchWorkbench } from "./workbench-lib.ts";

const N = Number(process.env.BENCH_N ?? 10);

const { dir, ws, env } = benchWorkspace("ccb-debug-bench-");
writeFileSync(join(ws, "prog.js"), "let n = 0;\nfor (let i = 0; i < 3; i++) n += i;\nconsole.log(n);\n");

const { ctx, close } = await bootBenchWorkbench(ws, env);
await debugSetBreakpoints.execute({ breakpoints: [{ path: "prog.js", line: 3 }] }, ctx);
const config = { type: "node", request: "launch", name: "bench", program: "prog.js" };

async function startToStopped(): Promise<number> {
  const t0 = performance.now();
  const s = await debugStart.execute({ configuration: config }, ctx);
  const session = (s.structured?.session as { id: string }).id;
  const w = await debugWait.execute({ session, seconds: 120 }, ctx);
  const ms = performance.now() - t0;
  const st = w.structured as { state: string; frame?: { line: number } };
  if (st.state !== "stopped" || st.frame?.line !== 3) throw new Error(`not stopped at the breakpoint: ${w.text}`);
  await debugStop.execute({ session }, ctx);
  return ms;
}
function plainNode(): number {
  const t0 = performance.now();
  spawnSync(node24(), [join(ws, "prog.js")], { stdio: "ignore" });
  return performance.now() - t0;
}

const first = await startToStopped(); // the first session also activates js-debug
const debugSamples: number[] = [];
const nodeSamples: number[] = [];
for (let i = 0; i < N; i++) {
  debugSamples.push(await startToStopped());
  nodeSamples.push(plainNode());
}

await close();
rmSync(dir, { recursive: true, force: true });

const d = summarize(debugSamples);
const n = summarize(nodeSamples);
console.log("== debug (code-server, js-debug, headless Chromium) ==");
console.log(`first session (activates js-debug): ${fmt(first)}`);
console.log(`debug_start -> stopped at breakpoint p50 ${fmt(d.p50)} p99 ${fmt(d.p99)} (n=${d.n})`);
console.log(`baseline: plain node to exit p50 ${fmt(n.p50)} p99 ${fmt(n.p99)}; ratio p50 ${ratio(d.p50, n.p50)}`);
console.log(
  JSON.stringify({
    bench: "debug",
    firstMs: first,
    startToStoppedP50Ms: d.p50,
    startToStoppedP99Ms: d.p99,
    plainNodeP50Ms: n.p50,
  }),
);
