import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { WebSocket, WebSocketServer } from "ws";
import { createCore } from "../src/core/core.ts";
import { silentLogger } from "../src/core/log.ts";
import { Gateway } from "../src/net/gateway.ts";
import editorState from "../src/tools/editor_state.ts";
import { startWorkbench } from "../src/workbench/index.ts";
import { codeServerRoot, node24 } from "../test/helpers/peers.ts";
import { fmt, ratio, summarize } from "./lib.ts";
import { benchWorkspace } from "./workbench-lib.ts";

const N = Number(process.env.BENCH_N ?? 200);

const { dir, ws, env } = benchWorkspace("ccb-wb-bench-");
writeFileSync(join(ws, "a.ts"), "export const a = 1;\n");

const core = createCore({ roots: [ws], log: silentLogger });
const gw = new Gateway({ host: "127.0.0.1", port: 0, log: silentLogger });
// The baseline: a raw WebSocket echo mounted on the same gateway as /bridge.
const echo = new WebSocketServer({ noServer: true });
echo.on("connection", (s) => s.on("message", (d, bin) => s.send(d, { binary: bin })));
gw.addUpgrade(
  "/bench-echo",
  (req, socket, head) => echo.handleUpgrade(req, socket, head, (s) => echo.emit("connection", s, req)),
  { name: "bench-echo", origin: { kind: "none" }, auth: [] },
);
const url = await gw.listen();
const http = { gateway: gw, url };

const rssBefore = process.memoryUsage().rss;
const wb = startWorkbench({
  core,
  editor: core.claimEditor("bench"),
  http,
  log: silentLogger,
  runtime: "code-server",
  runtimeRoot: codeServerRoot(),
  runtimeNode: node24(),
  headlessClient: true,
  env,
});
await wb.ready;
await wb.bridgeConnected;
const t = wb.status().timings;
const bootMs = t.runtimeBootMs ?? Number.NaN;
const bridgeMs = t.bridgeConnectedMs ?? Number.NaN;

// (2) round trips
const ctx = { core, signal: new AbortController().signal, log: silentLogger };
const args = editorState.input.parse({});
for (let i = 0; i < 10; i++) await editorState.execute(args, ctx); // warm-up
const stateSamples: number[] = [];
for (let i = 0; i < N; i++) {
  const t0 = performance.now();
  await editorState.execute(args, ctx);
  stateSamples.push(performance.now() - t0);
}
const sock = new WebSocket(`${url.replace(/^http/, "ws")}/bench-echo`);
await new Promise((r) => sock.once("open", r));
const payload = JSON.stringify({ type: "request", id: 1, method: "editor.state", params: { includeText: true } });
const echoOnce = () =>
  new Promise<void>((r) => {
    sock.once("message", () => r());
    sock.send(payload);
  });
for (let i = 0; i < 10; i++) await echoOnce();
const echoSamples: number[] = [];
for (let i = 0; i < N; i++) {
  const t0 = performance.now();
  await echoOnce();
  echoSamples.push(performance.now() - t0);
}
sock.close();

// (3) memory
function rssKb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}
function groupRssKb(pgid: number): number {
  let sum = 0;
  for (const p of readdirSync("/proc").filter((x) => /^\d+$/.test(x))) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(f[2]) === pgid) sum += rssKb(Number(p));
    } catch {
      // gone
    }
  }
  return sum;
}
function treeRssKb(pid: number): number {
  let sum = rssKb(pid);
  for (const p of readdirSync("/proc").filter((x) => /^\d+$/.test(x))) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(f[1]) === pid) sum += treeRssKb(Number(p));
    } catch {
      // gone
    }
  }
  return sum;
}
const ccbRss = process.memoryUsage().rss;
const runtimeRssKb = groupRssKb(wb.runtimePid() ?? -1);
const chromiumRssKb = treeRssKb(wb.headless()?.pid ?? -1);

await wb.close();
await gw.close();
echo.close();
await core.dispose();
rmSync(dir, { recursive: true, force: true });

const st = summarize(stateSamples);
const ec = summarize(echoSamples);
console.log("== workbench (code-server, headless Chromium) ==");
console.log(`runtime boot (spawn -> /healthz 200)      ${fmt(bootMs)}`);
console.log(
  `start -> bridge connected                 ${fmt(bridgeMs)}   (${ratio(bridgeMs, bootMs)} of the runtime's own boot)`,
);
console.log(`editor_state round trip  p50 ${fmt(st.p50)}  p99 ${fmt(st.p99)}   (n=${st.n})`);
console.log(
  `raw WS echo (same gw)    p50 ${fmt(ec.p50)}  p99 ${fmt(ec.p99)}   ratio p50 ${ratio(st.p50, ec.p50)}  p99 ${ratio(st.p99, ec.p99)}`,
);
console.log(
  `ccb RSS ${(ccbRss / 1048576).toFixed(1)} MiB (before the workbench ${(rssBefore / 1048576).toFixed(1)} MiB); runtime group ${(runtimeRssKb / 1024).toFixed(1)} MiB; Chromium ${(chromiumRssKb / 1024).toFixed(1)} MiB`,
);
console.log(
  JSON.stringify({
    bench: "workbench",
    runtimeBootMs: Math.round(bootMs),
    bridgeConnectedMs: Math.round(bridgeMs),
    bridgeVsBoot: +(bridgeMs / bootMs).toFixed(2),
    editorStateP50Ms: +st.p50.toFixed(3),
    editorStateP99Ms: +st.p99.toFixed(3),
    echoP50Ms: +ec.p50.toFixed(3),
    echoP99Ms: +ec.p99.toFixed(3),
    ratioP50: +(st.p50 / ec.p50).toFixed(2),
    ratioP99: +(st.p99 / ec.p99).toFixed(2),
    ccbRssMiB: +(ccbRss / 1048576).toFixed(1),
    runtimeRssMiB: +(runtimeRssKb / 1024).toFixed(1),
    chromiumRssMiB: +(chromiumRssKb / 1024).toFixed(1),
  }),
);
