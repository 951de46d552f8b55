// What a workspace costs (issue 35), with the real CLI (bin/ccb.mjs from dist/), real code-server and
// headless Chromium, before and after the start levers of src/workbench/tuning.ts, in the same run:
// "before" runs with CCB_WORKBENCH_TUNING=off (the levers off: the start path as it was), "after" with
// the defaults. Rounds alternate the two (and which goes first), each round on a fresh home (fresh
// state: no host, no kept user data, no caches). Per round and setting:
//   cold start   spawn `ccb serve --stdio` with nothing running -> the first editor_state that answers
//   warm attach  a second `ccb serve --stdio` on the same folder -> its first editor_state that answers
//   memory       after editor_open of a TypeScript file and BENCH_IDLE_S (30) s idle: PSS
//                (/proc/<pid>/smaps_rollup) of every process, by group
//   parked       the headless client closed while idle (--headless-idle BENCH_PARK_S, default 45 s, after
//                the memory figure): PSS once Chromium and the extension host are gone, then the first
//                editor_open after idle (it reopens the client and waits)
//   recovery     time without editor tools (the fault -> the first editor_open that answers) when the
//                runtime is killed, the headless Chromium is killed, the workbench host is killed
// Run: node --import tsx bench/workbench-cost.bench.ts (after scripts/setup-peers.sh and npm run build).
// BENCH_ROUNDS (default 3), BENCH_IDLE_S (default 30), BENCH_RECOVERY=0 to skip the faults.
// BENCH_BEFORE / BENCH_AFTER: the CCB_WORKBENCH_TUNING of each side (default "off" and the defaults),
// so one lever can be measured alone: BENCH_BEFORE=-lean-chromium BENCH_AFTER= (same run, alternating).
// BENCH_TIMELINE=1 prints each round's start timeline from the host's log, and CPU seconds per group;
// BENCH_LOGS_DIR=<dir> keeps each round's host and runtime logs there.
// The compile-cache lever's folder is in each round's fresh home (every start a first start on a
// machine) unless BENCH_COMPILE_CACHE=<dir>: one folder for all rounds (CCB_COMPILE_CACHE_DIR), filled
// by one unmeasured start before round 1, so the rounds measure a later start (what `ccb ide` feels).
// The machine's load average is printed with every figure: on a shared 2-core machine wall times move
// with it; CPU seconds to the first answer are printed as the steadier measure.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { codeServerArgs } from "../test/helpers/peers.ts";
import { cpuMs, groupOf, type Proc, processes, pssKb, tree } from "./workbench-lib.ts";

const root = new URL("..", import.meta.url).pathname;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 30);
const RECOVERY = process.env.BENCH_RECOVERY !== "0";
const PARK_S = Number(process.env.BENCH_PARK_S ?? 45);
const dir = mkdtempSync(join(tmpdir(), "ccb-cost-bench-"));
const SETTINGS = { before: process.env.BENCH_BEFORE ?? "off", after: process.env.BENCH_AFTER ?? "" };
const TIMELINE = process.env.BENCH_TIMELINE === "1";
const COMPILE_CACHE = process.env.BENCH_COMPILE_CACHE;
type Setting = "before" | "after";

interface FrontEnd {
  client: Client;
  pid: number;
  close(): Promise<void>;
}

function homeEnv(home: string, setting: Setting): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("CCB_")) env[k] = v;
  return Object.assign(env, {
    HOME: home,
    XDG_STATE_HOME: join(home, "state"),
    XDG_CACHE_HOME: join(home, "cache"),
    XDG_CONFIG_HOME: join(home, "config"),
    ...(process.getuid?.() === 0 ? { CCB_CHROMIUM_NO_SANDBOX: "1" } : {}),
    CCB_WORKBENCH_GRACE: "0", // the host stops with its last front end: rounds do not add up
    CCB_HEADLESS_IDLE: String(PARK_S),
    ...(SETTINGS[setting] ? { CCB_WORKBENCH_TUNING: SETTINGS[setting] } : {}),
    ...(COMPILE_CACHE ? { CCB_COMPILE_CACHE_DIR: COMPILE_CACHE } : {}),
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Until `call` answers without an error (or 600 s); the time it took. */
async function until(fe: FrontEnd, name: string, args: Record<string, unknown>, t0 = performance.now()) {
  for (;;) {
    const r = (await fe.client
      .callTool({ name, arguments: args }, undefined, { timeout: 120_000 })
      .catch(() => ({ isError: true }))) as { isError?: boolean };
    if (!r.isError) return performance.now() - t0;
    if (performance.now() - t0 > 600_000) throw new Error(`${name} did not answer within 600 s`);
    await sleep(50);
  }
}

async function serve(ws: string, env: Record<string, string>): Promise<{ fe: FrontEnd; ms: number }> {
  const t0 = performance.now();
  const args = [join(root, "bin/ccb.mjs"), "serve", "--stdio", "--workspace", ws, ...codeServerArgs()];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...args, "--log-level", "error"],
    env,
    stderr: "ignore",
  });
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(transport);
  const fe = { client, pid: transport.pid as number, close: () => client.close() };
  return { fe, ms: await until(fe, "editor_state", {}, t0) };
}

/** The workbench host a front end started, and the runtime and headless Chromium it runs. */
function parts(fePid: number) {
  const all = processes();
  const host = all.find((p) => p.ppid === fePid && p.cmd.includes("workbench host"));
  const below = host ? tree(host.pid, all) : [];
  const runtime = below.find((p) => p.ppid === host?.pid && p.pid === p.pgid && /entry\.js|openvscode/.test(p.cmd));
  const chromium = below.find((p) => p.ppid === host?.pid && /chrom/.test(p.cmd) && !/--type=/.test(p.cmd));
  return { all, host, below, runtime, chromium };
}

async function waitFor<T>(get: () => T | undefined, what: string, ms = 120_000): Promise<T> {
  const t0 = performance.now();
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (performance.now() - t0 > ms) throw new Error(`no ${what} within ${ms / 1000} s`);
    await sleep(100);
  }
}

interface RoundResult {
  coldMs: number;
  coldCpuS: number;
  warmMs: number;
  pss: Map<string, number>;
  /** PSS by group once the headless client closed while idle, and the first editor call after it. */
  parkedPss: Map<string, number>;
  wakeMs: number;
  recovery: { runtime?: number; chromium?: number; host?: number };
  load: number;
}

async function round(setting: Setting, i: number): Promise<RoundResult> {
  const home = join(dir, `${setting}-${i}`);
  const ws = join(home, "ws");
  mkdirSync(ws, { recursive: true });
  writeFileSync(
    join(ws, "a.ts"),
    "export const a: number = 1;\nexport function twice(n: number): number {\n  return n * 2;\n}\n",
  );
  writeFileSync(join(ws, "tsconfig.json"), '{ "compilerOptions": { "strict": true } }\n');
  const env = homeEnv(home, setting);
  const load = loadavg()[0] as number;
  const a = await serve(ws, env);
  const first = parts(a.fe.pid);
  const coldCpuS = [a.fe.pid, ...first.below.map((p) => p.pid)].reduce((s, p) => s + cpuMs(p), 0) / 1000;
  if (TIMELINE) {
    const cpu = new Map<string, number>();
    for (const p of first.below) cpu.set(groupOf(p), (cpu.get(groupOf(p)) ?? 0) + cpuMs(p.pid) / 1000);
    console.log(
      `  ${setting} CPU by group: ${[...cpu.entries()]
        .sort((x, y) => y[1] - x[1])
        .map(([g, v]) => `${g} ${v.toFixed(1)}`)
        .join(", ")}`,
    );
    const logs = join(home, "state/ccb/workbenches");
    for (const f of existsSync(logs) ? readdirSync(logs).filter((n) => n.endsWith(".host.log")) : [])
      for (const line of readFileSync(join(logs, f), "utf8").split("\n"))
        if (/timeline:/.test(line)) console.log(`  ${setting} ${line.replace(/^.*timeline: /, "")}`);
  }
  const b = await serve(ws, env);
  // memory: an agent opened a TypeScript file (the TypeScript servers start), then idle
  await until(a.fe, "editor_open", { path: "a.ts" });
  await sleep(IDLE_S * 1000);
  const measure = () => {
    const now = parts(a.fe.pid);
    const pss = new Map<string, number>();
    const add = (g: string, kb: number) => pss.set(g, (pss.get(g) ?? 0) + kb / 1024);
    for (const fe of [a.fe.pid, b.fe.pid]) add("ccb: front ends (2)", pssKb(fe));
    for (const p of now.below as Proc[]) add(groupOf(p), pssKb(p.pid));
    return pss;
  };
  const pss = measure();
  // parked: no editor call for PARK_S s -> Chromium, the extension host and tsserver end
  await waitFor(
    () => {
      const now = parts(a.fe.pid);
      return now.chromium === undefined && !now.below.some((p) => /extensionHost|tsserver/.test(p.cmd))
        ? true
        : undefined;
    },
    "parked headless client",
    (PARK_S + 60) * 1000,
  );
  await sleep(5_000);
  const parkedPss = measure();
  const wakeMs = await until(a.fe, "editor_open", { path: "a.ts" });
  const recovery: RoundResult["recovery"] = {};
  if (RECOVERY) {
    const rt = await waitFor(() => parts(a.fe.pid).runtime, "runtime");
    let t0 = performance.now();
    process.kill(-rt.pid, "SIGKILL");
    await sleep(200);
    recovery.runtime = await until(a.fe, "editor_open", { path: "a.ts" }, t0);
    await sleep(3000);
    const ch = await waitFor(() => parts(a.fe.pid).chromium, "headless Chromium");
    t0 = performance.now();
    process.kill(-ch.pid, "SIGKILL");
    await sleep(200);
    recovery.chromium = await until(a.fe, "editor_open", { path: "a.ts" }, t0);
    await sleep(3000);
    const host = await waitFor(() => parts(a.fe.pid).host, "host");
    t0 = performance.now();
    process.kill(host.pid, "SIGKILL");
    await sleep(200);
    recovery.host = await until(a.fe, "editor_open", { path: "a.ts" }, t0);
  }
  await b.fe.close();
  await a.fe.close();
  await sleep(3000); // the host (grace 0) and its workbench stop
  if (process.env.BENCH_LOGS_DIR) {
    // the host's log and the runtime's logs of each round, for a round that went wrong
    const to = join(process.env.BENCH_LOGS_DIR, `${setting}-${i}`);
    for (const from of ["state/ccb/workbenches", "state/ccb/workbench-data"])
      if (existsSync(join(home, from))) cpSync(join(home, from), join(to, from), { recursive: true });
  }
  rmSync(home, { recursive: true, force: true });
  return { coldMs: a.ms, coldCpuS, warmMs: b.ms, pss, parkedPss, wakeMs, recovery, load };
}

const total = (pss: Map<string, number>) => [...pss.values()].reduce((s, v) => s + v, 0);
if (COMPILE_CACHE) {
  // fill the kept compile cache: one start with the "after" setting, the TypeScript file opened
  const home = join(dir, "prime");
  const ws = join(home, "ws");
  mkdirSync(ws, { recursive: true });
  writeFileSync(join(ws, "a.ts"), "export const a: number = 1;\n");
  const { fe } = await serve(ws, homeEnv(home, "after"));
  await until(fe, "editor_open", { path: "a.ts" });
  await sleep(5000);
  await fe.close();
  await sleep(3000);
  rmSync(home, { recursive: true, force: true });
}
const results: Record<Setting, RoundResult[]> = { before: [], after: [] };
for (let i = 0; i < ROUNDS; i++) {
  const order: Setting[] = i % 2 === 0 ? ["before", "after"] : ["after", "before"];
  for (const s of order) {
    const r = await round(s, i);
    results[s].push(r);
    const rec = r.recovery;
    console.log(
      `round ${i + 1} ${s.padEnd(6)} load ${r.load.toFixed(1)}: cold ${(r.coldMs / 1000).toFixed(1)} s (CPU ${r.coldCpuS.toFixed(1)} s), warm attach ${(r.warmMs / 1000).toFixed(2)} s, PSS ${total(r.pss).toFixed(0)} MiB, parked ${total(r.parkedPss).toFixed(0)} MiB, wake ${(r.wakeMs / 1000).toFixed(1)} s${RECOVERY ? `, recovery runtime ${((rec.runtime ?? 0) / 1000).toFixed(1)} s, Chromium ${((rec.chromium ?? 0) / 1000).toFixed(1)} s, host ${((rec.host ?? 0) / 1000).toFixed(1)} s` : ""}`,
    );
  }
}
rmSync(dir, { recursive: true, force: true });

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  return ((s[Math.floor((s.length - 1) / 2)] as number) + (s[Math.ceil((s.length - 1) / 2)] as number)) / 2;
};
const med = (s: Setting, f: (r: RoundResult) => number | undefined) =>
  median(results[s].map(f).filter((x): x is number => x !== undefined));
const row = (label: string, f: (r: RoundResult) => number | undefined, unit: string, digits = 1) => {
  const b = med("before", f);
  const a = med("after", f);
  console.log(
    `${label.padEnd(44)} ${`${b.toFixed(digits)} ${unit}`.padStart(12)} ${`${a.toFixed(digits)} ${unit}`.padStart(12)} ${`${(a - b).toFixed(digits)}`.padStart(9)}`,
  );
  return [b, a];
};
const groups = [
  ...new Set([...results.before, ...results.after].flatMap((r) => [...r.pss.keys(), ...r.parkedPss.keys()])),
].sort();
const ccbShare = (pss: Map<string, number>) =>
  [...pss.entries()].filter(([g]) => g.startsWith("ccb") || g.startsWith("chromium")).reduce((s, [, v]) => s + v, 0);

console.log(
  `\n== what a workspace costs: medians of ${ROUNDS} rounds (code-server, headless Chromium); before: CCB_WORKBENCH_TUNING="${SETTINGS.before}", after: "${SETTINGS.after}" ==`,
);
console.log(`${"".padEnd(44)} ${"before".padStart(12)} ${"after".padStart(12)} ${"change".padStart(9)}`);
const cold = row("cold start (serve --stdio -> editor answers)", (r) => r.coldMs / 1000, "s");
const coldCpu = row("  CPU used by then (all its processes)", (r) => r.coldCpuS, "s");
const warm = row("warm attach (second front end)", (r) => r.warmMs / 1000, "s", 2);
console.log(`PSS after ${IDLE_S} s idle, one TypeScript file open:`);
for (const g of groups) row(`  ${g}`, (r) => r.pss.get(g) ?? 0, "MiB", 0);
const all = row("  all processes", (r) => total(r.pss), "MiB", 0);
const share = row("  ccb's share (ccb + the Chromium keep-alive)", (r) => ccbShare(r.pss), "MiB", 0);
console.log(`PSS once the headless client closed while idle (--headless-idle ${PARK_S}):`);
for (const g of groups) row(`  ${g}`, (r) => r.parkedPss.get(g) ?? 0, "MiB", 0);
const parkedAll = row("  all processes", (r) => total(r.parkedPss), "MiB", 0);
const parkedShare = row("  ccb's share", (r) => ccbShare(r.parkedPss), "MiB", 0);
const wake = row("first editor call after idle (reopens the client)", (r) => r.wakeMs / 1000, "s");
let rec: number[][] = [];
if (RECOVERY) {
  console.log("recovery (fault -> editor_open answers):");
  rec = [
    row("  runtime killed", (r) => (r.recovery.runtime ?? 0) / 1000, "s"),
    row("  headless Chromium killed", (r) => (r.recovery.chromium ?? 0) / 1000, "s"),
    row("  workbench host killed", (r) => (r.recovery.host ?? 0) / 1000, "s"),
  ];
}
const loads = [...results.before, ...results.after].map((r) => r.load);
console.log(
  `load average (1 min) at the rounds' starts: ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
);
console.log(
  JSON.stringify({
    bench: "workbench-cost",
    rounds: ROUNDS,
    coldStartS: { before: cold[0], after: cold[1] },
    coldCpuS: { before: coldCpu[0], after: coldCpu[1] },
    warmAttachS: { before: warm[0], after: warm[1] },
    pssAllMiB: { before: all[0], after: all[1] },
    pssCcbShareMiB: { before: share[0], after: share[1] },
    parkedPssAllMiB: { before: parkedAll[0], after: parkedAll[1] },
    parkedPssCcbShareMiB: { before: parkedShare[0], after: parkedShare[1] },
    wakeS: { before: wake[0], after: wake[1] },
    ...(RECOVERY
      ? {
          recoveryS: {
            runtime: { before: rec[0]?.[0], after: rec[0]?.[1] },
            chromium: { before: rec[1]?.[0], after: rec[1]?.[1] },
            host: { before: rec[2]?.[0], after: rec[2]?.[1] },
          },
        }
      : {}),
    load: [Math.min(...loads), Math.max(...loads)],
  }),
);
process.exit(0);
