// Startup and memory of `ccb serve`:
//  1. idle RSS (and time to the initialize answer) of `ccb serve --stdio` vs a bare
//     @modelcontextprotocol/sdk server with one echo tool (bench/fixtures/bare-mcp-server.mjs),
//     after initialize + tools/list + one tool call;
//  2. compiled `ccb --version` (scripts/compile.mjs -> Bun single binary) vs a compiled one-line
//     hello world (same bun flags), timed with hyperfine when installed, else a timing loop.
//   node --import tsx bench/startup-rss.bench.ts [--skip-compile]
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ratio, summarize } from "./lib.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const ROUNDS = 5;
const work = mkdtempSync(join(tmpdir(), "ccb-bench-startup-"));
const env = { ...process.env, CCB_LOG_LEVEL: "error" } as Record<string, string>;
const summary: Record<string, unknown> = { loadavgBefore: loadavg().map((x) => +x.toFixed(1)) };

function rssKiB(pid: number): { rss: number; hwm: number } {
  const s = readFileSync(`/proc/${pid}/status`, "utf8");
  const get = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(s)?.[1] ?? Number.NaN);
  return { rss: get("VmRSS"), hwm: get("VmHWM") };
}

async function idle(
  command: string,
  args: string[],
  tool: string,
): Promise<{ rss: number; hwm: number; readyMs: number }> {
  const transport = new StdioClientTransport({ command, args, env, stderr: "ignore" });
  const client = new Client({ name: "bench", version: "1" });
  const t0 = performance.now();
  await client.connect(transport);
  const readyMs = performance.now() - t0;
  await client.listTools();
  await client.callTool({ name: tool, arguments: {} });
  // measure the idle server, a second after its last request
  await new Promise((r) => setTimeout(r, 1000));
  const pid = transport.pid;
  if (pid === null) throw new Error("no pid");
  const m = rssKiB(pid);
  await client.close();
  return { ...m, readyMs };
}

const median = (xs: number[]) => summarize(xs).p50;

console.log(`idle RSS after initialize + tools/list + one call (median of ${ROUNDS}):`);
const rows: Array<[string, string, string[], string]> = [
  ["bare SDK server (node)", process.execPath, [join(root, "bench/fixtures/bare-mcp-server.mjs")], "echo"],
  [
    "ccb serve --stdio (node)",
    process.execPath,
    [join(root, "bin/ccb.mjs"), "serve", "--no-workbench", "--stdio", "--workspace", work],
    "workspace_status",
  ],
];
const compiledCcb = join(work, "ccb");
const compiledHello = join(work, "hello");
const skipCompile = process.argv.includes("--skip-compile");
if (!skipCompile) {
  const bun = join(root, "node_modules/.bin/bun");
  const c1 = spawnSync(process.execPath, [join(root, "scripts/compile.mjs"), compiledCcb], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (c1.status !== 0) throw new Error("compiling ccb failed");
  writeFileSync(join(work, "hello.ts"), 'console.log("hello");\n');
  const c2 = spawnSync(
    bun,
    [
      "build",
      "--compile",
      "--minify",
      "--bytecode",
      "--format=esm",
      join(work, "hello.ts"),
      "--outfile",
      compiledHello,
    ],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  if (c2.status !== 0) throw new Error("compiling hello failed");
  rows.push([
    "ccb serve --stdio (compiled)",
    compiledCcb,
    ["serve", "--no-workbench", "--stdio", "--workspace", work],
    "workspace_status",
  ]);
}
const results = new Map<string, { rss: number; hwm: number; readyMs: number }>();
for (const [name, cmd, args, tool] of rows) {
  const runs: Array<{ rss: number; hwm: number; readyMs: number }> = [];
  for (let i = 0; i < ROUNDS; i++) runs.push(await idle(cmd, args, tool));
  const r = {
    rss: median(runs.map((x) => x.rss)),
    hwm: median(runs.map((x) => x.hwm)),
    readyMs: median(runs.map((x) => x.readyMs)),
  };
  results.set(name, r);
}
const base = results.get("bare SDK server (node)")!;
console.log(
  `  ${"server".padEnd(30)} ${"RSS".padStart(9)} ${"peak".padStart(9)} ${"ready".padStart(10)}   RSS ratio  ready ratio`,
);
for (const [name, r] of results) {
  console.log(
    `  ${name.padEnd(30)} ${`${(r.rss / 1024).toFixed(1)} MB`.padStart(9)} ${`${(r.hwm / 1024).toFixed(1)} MB`.padStart(9)} ${`${r.readyMs.toFixed(0)} ms`.padStart(10)}   ${ratio(r.rss, base.rss).padStart(9)}  ${ratio(r.readyMs, base.readyMs).padStart(11)}`,
  );
  summary[`rss.${name.replace(/[ ()-]+/g, "_").replace(/_$/, "")}`] = {
    rssMB: +(r.rss / 1024).toFixed(1),
    peakMB: +(r.hwm / 1024).toFixed(1),
    readyMs: +r.readyMs.toFixed(0),
    rssRatio: +(r.rss / base.rss).toFixed(2),
  };
}

if (!skipCompile) {
  console.log(
    `\ncompiled binaries: ccb ${(statSync(compiledCcb).size / 1e6).toFixed(1)} MB, hello ${(statSync(compiledHello).size / 1e6).toFixed(1)} MB`,
  );
  const hf = spawnSync("hyperfine", ["--version"], { encoding: "utf8" });
  let ccbMs: number;
  let helloMs: number;
  let cpu: { ccbMs: number; helloMs: number } | undefined;
  if (hf.status === 0) {
    const out = join(work, "hyperfine.json");
    const r = spawnSync(
      "hyperfine",
      ["-N", "--warmup", "3", "--runs", "30", "--export-json", out, `${compiledCcb} --version`, compiledHello],
      { stdio: ["ignore", "inherit", "inherit"] },
    );
    if (r.status !== 0) throw new Error("hyperfine failed");
    const res = (
      JSON.parse(readFileSync(out, "utf8")) as { results: Array<{ median: number; user: number; system: number }> }
    ).results;
    ccbMs = (res[0]?.median ?? Number.NaN) * 1000;
    helloMs = (res[1]?.median ?? Number.NaN) * 1000;
    // CPU time (user + system) is far less sensitive to other load on the machine than wall time
    cpu = {
      ccbMs: ((res[0]?.user ?? 0) + (res[0]?.system ?? 0)) * 1000,
      helloMs: ((res[1]?.user ?? 0) + (res[1]?.system ?? 0)) * 1000,
    };
    summary.timer = "hyperfine";
  } else {
    const time = (cmd: string, args: string[]) => {
      const xs: number[] = [];
      for (let i = 0; i < 33; i++) {
        const t0 = performance.now();
        spawnSync(cmd, args, { stdio: "ignore" });
        if (i >= 3) xs.push(performance.now() - t0);
      }
      return median(xs);
    };
    ccbMs = time(compiledCcb, ["--version"]);
    helloMs = time(compiledHello, []);
    summary.timer = "spawnSync loop";
  }
  console.log(
    `\ncompiled \`ccb --version\` median ${ccbMs.toFixed(1)} ms vs compiled hello world ${helloMs.toFixed(1)} ms: ${ratio(ccbMs, helloMs)}`,
  );
  if (cpu)
    console.log(
      `CPU time (user+sys, mean): ccb --version ${cpu.ccbMs.toFixed(1)} ms vs hello ${cpu.helloMs.toFixed(1)} ms: ${ratio(cpu.ccbMs, cpu.helloMs)}`,
    );
  summary.compiledVersion = {
    ccbMs: +ccbMs.toFixed(1),
    helloMs: +helloMs.toFixed(1),
    ratio: +(ccbMs / helloMs).toFixed(2),
    ...(cpu
      ? {
          ccbCpuMs: +cpu.ccbMs.toFixed(1),
          helloCpuMs: +cpu.helloMs.toFixed(1),
          cpuRatio: +(cpu.ccbMs / cpu.helloMs).toFixed(2),
        }
      : {}),
    ccbMB: +(statSync(compiledCcb).size / 1e6).toFixed(1),
    helloMB: +(statSync(compiledHello).size / 1e6).toFixed(1),
  };
}
rmSync(work, { recursive: true, force: true });
summary.loadavgAfter = loadavg().map((x) => +x.toFixed(1));
console.log(`\nload average before/after: ${String(summary.loadavgBefore)} / ${String(summary.loadavgAfter)}`);
console.log(`\n${JSON.stringify({ bench: "startup-rss", ...summary })}`);
process.exit(0);
