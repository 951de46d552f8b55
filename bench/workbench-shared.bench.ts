// The shared workbench, with the real CLI (bin/ccb.mjs from dist/), real code-server and headless Chromium:
// (1) time from spawning a second `ccb serve --stdio` in the same workspace to its first editor_state answer
//     (it attaches) against the same for the first one (it starts the workbench), in the same round;
// (2) memory: the sum of RSS of every process (front ends, runtimes, Chromiums) of three front ends on one
//     workbench against three front ends with a workbench each (three workspaces), measured in the same run.
// (3) a terminal tool through the attach channel: terminal_read of one terminal, called on the owner
//     (its own TerminalManager) and on the attached front end (relayed to the owner), alternating.
// (4) the workbench host's cost: one `ccb serve --stdio` whose workbench runs in a detached host (the
//     default) against one with `--no-share` (the workbench in the front end's own process, as before the
//     host): RSS of the front end process, of the host process, and of everything, alternating.
// Rounds alternate the two setups; medians are reported. Run: node --import tsx bench/workbench-shared.bench.ts
// (needs scripts/setup-peers.sh and `npm run build`). BENCH_ROUNDS (default 3) and BENCH_MEM_ROUNDS (default 1).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { codeServerArgs } from "../test/helpers/peers.ts";
import { ratio } from "./lib.ts";

const root = new URL("..", import.meta.url).pathname;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MEM_ROUNDS = Number(process.env.BENCH_MEM_ROUNDS ?? 1);
const dir = mkdtempSync(join(tmpdir(), "ccb-shared-bench-"));
const env: Record<string, string> = {};
for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("CCB_")) env[k] = v;
Object.assign(env, {
  HOME: dir,
  XDG_STATE_HOME: join(dir, "state"),
  XDG_CACHE_HOME: join(dir, "cache"),
  XDG_CONFIG_HOME: join(dir, "config"),
  ...(process.getuid?.() === 0 ? { CCB_CHROMIUM_NO_SANDBOX: "1" } : {}),
  // a workbench host stops with its last front end (not 600 s later), so rounds do not add up
  CCB_WORKBENCH_GRACE: "0",
});

interface FrontEnd {
  client: Client;
  pid: number;
  close(): Promise<void>;
}

let n = 0;
function workspace(): string {
  const ws = join(dir, `ws${n++}`);
  mkdirSync(ws);
  writeFileSync(join(ws, "a.ts"), "export const a = 1;\n");
  return ws;
}

/**
 * Spawn `ccb serve --stdio` on `ws` and wait until editor_state answers without an error; returns it and the time
 * taken. `bare`: with --no-workbench, until editor_state answers at all (the process start-up baseline).
 */
async function serve(ws: string, bare = false, extra: string[] = []): Promise<{ fe: FrontEnd; ms: number }> {
  const t0 = performance.now();
  const args = bare
    ? [join(root, "bin/ccb.mjs"), "serve", "--stdio", "--no-workbench", "--workspace", ws, "--log-level", "error"]
    : [
        join(root, "bin/ccb.mjs"),
        "serve",
        "--stdio",
        "--workspace",
        ws,
        ...codeServerArgs(),
        "--log-level",
        "error",
        ...extra,
      ];
  const transport = new StdioClientTransport({ command: process.execPath, args, env, stderr: "ignore" });
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(transport);
  for (;;) {
    const r = (await client.callTool({ name: "editor_state", arguments: {} }, undefined, { timeout: 120_000 })) as {
      isError?: boolean;
    };
    if (!r.isError || bare) break;
    if (performance.now() - t0 > 600_000) throw new Error("the editor bridge did not come up within 600 s");
    await new Promise((r) => setTimeout(r, 50));
  }
  return { fe: { client, pid: transport.pid as number, close: () => client.close() }, ms: performance.now() - t0 };
}

function children(): Map<number, number[]> {
  const kids = new Map<number, number[]>();
  for (const p of readdirSync("/proc").filter((x) => /^\d+$/.test(x))) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      kids.set(ppid, [...(kids.get(ppid) ?? []), Number(p)]);
    } catch {
      // gone
    }
  }
  return kids;
}

/** RSS (KiB) of one process. */
function ownRssKb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** The workbench host a front end started: its child running `ccb workbench host`. */
function hostOf(fePid: number): number | undefined {
  for (const kid of children().get(fePid) ?? []) {
    try {
      if (readFileSync(`/proc/${kid}/cmdline`, "utf8").includes("workbench\0host")) return kid;
    } catch {
      // gone
    }
  }
  return undefined;
}

/** Sum of RSS (KiB) of the processes and all their descendants. */
function rssKb(pids: number[]): number {
  const kids = children();
  let sum = 0;
  const seen = new Set<number>();
  const walk = (pid: number) => {
    if (seen.has(pid)) return;
    seen.add(pid);
    try {
      const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      sum += Number(m?.[1] ?? 0);
    } catch {
      // gone
    }
    for (const k of kids.get(pid) ?? []) walk(k);
  };
  for (const p of pids) walk(p);
  return sum;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const settle = () => new Promise((r) => setTimeout(r, 5000));

/** p50 and p99 (ms) of terminal_read on each front end, calls alternating between them. */
async function relayedTerminal(owner: FrontEnd, attached: FrontEnd, calls = 400) {
  const created = await owner.client.callTool({ name: "terminal_create", arguments: { command: "/bin/sh" } });
  const id = (created.structuredContent as { terminal: { id: string } }).terminal.id;
  const times: [number[], number[]] = [[], []];
  for (let i = 0; i < calls * 2; i++) {
    const fe = i % 2 === 0 ? owner : attached;
    const t0 = performance.now();
    await fe.client.callTool({ name: "terminal_read", arguments: { id, view: "output" } });
    if (i >= 20) (i % 2 === 0 ? times[0] : times[1]).push(performance.now() - t0);
  }
  await owner.client.callTool({ name: "terminal_kill", arguments: { id, remove: true } });
  const pct = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * q)] as number;
  return { owner: [pct(times[0], 0.5), pct(times[0], 0.99)], attached: [pct(times[1], 0.5), pct(times[1], 0.99)] };
}

// (1) attach vs start, same round; (3) in the first round.
let relay: Awaited<ReturnType<typeof relayedTerminal>> | undefined;
const starts: number[] = [];
const attaches: number[] = [];
const bares: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const ws = workspace();
  const a = await serve(ws);
  const b = await serve(ws);
  const c = await serve(workspace(), true);
  starts.push(a.ms);
  attaches.push(b.ms);
  bares.push(c.ms);
  await c.fe.close();
  relay ??= await relayedTerminal(a.fe, b.fe);
  console.log(
    `round ${i + 1}: first (starts the workbench) ${a.ms.toFixed(0)} ms, second (attaches) ${b.ms.toFixed(0)} ms, baseline --no-workbench ${c.ms.toFixed(0)} ms`,
  );
  await b.fe.close();
  await a.fe.close();
}

// (2) memory: three front ends on one workbench vs three workbenches, alternating.
const sharedKb: number[] = [];
const separateKb: number[] = [];
for (let i = 0; i < MEM_ROUNDS * 2; i++) {
  const shared = i % 2 === 0;
  const spaces = shared ? [workspace()] : [workspace(), workspace(), workspace()];
  const fes: FrontEnd[] = [];
  for (let k = 0; k < 3; k++) fes.push((await serve(spaces[k % spaces.length] as string)).fe);
  await settle();
  const kb = rssKb(fes.map((f) => f.pid));
  (shared ? sharedKb : separateKb).push(kb);
  console.log(
    `${shared ? "one shared workbench" : "three workbenches  "}: RSS of all processes ${(kb / 1024).toFixed(0)} MiB`,
  );
  for (const f of fes.reverse()) await f.close();
}

// (4) one front end with its workbench in a host vs in its own process (--no-share), alternating.
const hosted: Array<{ fe: number; host: number; all: number }> = [];
const inProcess: Array<{ fe: number; all: number }> = [];
for (let i = 0; i < MEM_ROUNDS * 2; i++) {
  const withHost = i % 2 === 0;
  const { fe } = await serve(workspace(), false, withHost ? [] : ["--no-share"]);
  await settle();
  if (withHost) {
    const host = hostOf(fe.pid);
    if (!host) throw new Error("the front end started no workbench host");
    // the host is the spawner's child until the spawner exits: count it once
    const all = rssKb([fe.pid, host]);
    hosted.push({ fe: ownRssKb(fe.pid), host: ownRssKb(host), all });
    console.log(
      `workbench in a host:       front end ${(ownRssKb(fe.pid) / 1024).toFixed(0)} MiB + host ${(ownRssKb(host) / 1024).toFixed(0)} MiB; all processes ${(all / 1024).toFixed(0)} MiB`,
    );
  } else {
    const all = rssKb([fe.pid]);
    inProcess.push({ fe: ownRssKb(fe.pid), all });
    console.log(
      `workbench in the front end: front end ${(ownRssKb(fe.pid) / 1024).toFixed(0)} MiB; all processes ${(all / 1024).toFixed(0)} MiB`,
    );
  }
  await fe.close();
  await new Promise((r) => setTimeout(r, 3000));
}

rmSync(dir, { recursive: true, force: true });
const s = median(starts);
const a = median(attaches);
const base = median(bares);
const sm = median(sharedKb);
const xm = median(separateKb);
console.log("== shared workbench (code-server, headless Chromium; the machine is shared and loaded) ==");
console.log(
  `first front end: spawn -> editor_state answers (starts the workbench)  median ${s.toFixed(0)} ms (n=${starts.length})`,
);
console.log(
  `second front end: spawn -> editor_state answers (attaches)             median ${a.toFixed(0)} ms   ratio ${ratio(a, s)}`,
);
console.log(
  `baseline: spawn -> editor_state answers with --no-workbench (process start-up)  median ${base.toFixed(0)} ms; attach beyond start-up ${(a - base).toFixed(0)} ms`,
);
console.log(
  `RSS, three front ends: one shared workbench ${(sm / 1024).toFixed(0)} MiB vs three workbenches ${(xm / 1024).toFixed(0)} MiB   ratio ${ratio(sm, xm)}`,
);
if (relay)
  console.log(
    `terminal_read p50 / p99: on the owner ${relay.owner.map((x) => x.toFixed(2)).join(" / ")} ms, relayed from an attached front end ${relay.attached.map((x) => x.toFixed(2)).join(" / ")} ms   ratio ${ratio(relay.attached[0] as number, relay.owner[0] as number)}`,
  );
const mib = (kb: number) => (kb / 1024).toFixed(0);
const hFe = median(hosted.map((h) => h.fe));
const hHost = median(hosted.map((h) => h.host));
const hAll = median(hosted.map((h) => h.all));
const pFe = median(inProcess.map((p) => p.fe));
const pAll = median(inProcess.map((p) => p.all));
console.log(
  `RSS, one front end: front end + host ${mib(hFe)} + ${mib(hHost)} MiB vs the owner front end alone ${mib(pFe)} MiB   ratio ${ratio(hFe + hHost, pFe)}; all processes ${mib(hAll)} vs ${mib(pAll)} MiB   ratio ${ratio(hAll, pAll)}`,
);
console.log(
  JSON.stringify({
    bench: "workbench-shared",
    rssHostedFrontEndMiB: Math.round(hFe / 1024),
    rssHostMiB: Math.round(hHost / 1024),
    rssOwnerFrontEndMiB: Math.round(pFe / 1024),
    rssHostedAllMiB: Math.round(hAll / 1024),
    rssOwnerAllMiB: Math.round(pAll / 1024),
    startToBridgeMs: Math.round(s),
    attachToBridgeMs: Math.round(a),
    attachVsStart: +(a / s).toFixed(3),
    startupBaselineMs: Math.round(base),
    rssSharedMiB: Math.round(sm / 1024),
    rssSeparateMiB: Math.round(xm / 1024),
    rssSharedVsSeparate: +(sm / xm).toFixed(3),
    ...(relay ? { terminalReadOwnerP50Ms: relay.owner[0], terminalReadRelayedP50Ms: relay.attached[0] } : {}),
  }),
);
