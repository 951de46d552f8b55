// ccb checkpoint benchmark: recording a checkpoint after a one-file change in a 50,000-file
// workspace, against a plain `git add -A && git commit` of the same tree (its own GIT_DIR) in the
// same run: by a full scan (a flush, a command's effects) and by the named path alone (what
// fs_write/fs_delete/fs_move do); and what the recording adds to one tool call that changes one file.
// Run: node --import tsx bench/checkpoints.bench.ts   (BENCH_N=…, BENCH_FILES=…, BENCH_CALLS=…, CCB_BENCH_BASE=…)
import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Checkpoints, checkpointsOf } from "../src/core/checkpoints/index.ts";
import { CheckpointStore } from "../src/core/checkpoints/store.ts";
import { createCore } from "../src/core/core.ts";
import { FileService } from "../src/core/files/files.ts";
import { silentLogger } from "../src/core/log.ts";
import { Workspace } from "../src/core/workspace.ts";
import { createMcpServer } from "../src/protocols/mcp/server.ts";
import { fmt, ratio, summarize } from "./lib.ts";

const N = Number(process.env.BENCH_N ?? 15);
const FILES = Number(process.env.BENCH_FILES ?? 50_000);
/** fs_write calls per block (blocks alternate checkpoints on and off; the first call of each block is not counted). */
const CALLS = Number(process.env.BENCH_CALLS ?? 5);
const tmp = mkdtempSync(join(tmpdir(), "ccb-ckpt-bench-"));
const ws = join(tmp, "ws");
const plainGitDir = join(tmp, "plain.git");
for (let d = 0; d < FILES / 100; d++) {
  mkdirSync(join(ws, `d${d}`), { recursive: true });
  for (let f = 0; f < 100; f++) writeFileSync(join(ws, `d${d}`, `f${f}.txt`), `file ${d}/${f}\n`);
}
const env = {
  ...process.env,
  GIT_DIR: plainGitDir,
  GIT_WORK_TREE: ws,
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "b",
  GIT_AUTHOR_EMAIL: "b@e",
  GIT_COMMITTER_NAME: "b",
  GIT_COMMITTER_EMAIL: "b@e",
};
const git = (args: string[]) =>
  new Promise<void>((resolve, reject) =>
    execFile("git", args, { cwd: ws, env, maxBuffer: 64 << 20 }, (e) => (e ? reject(e) : resolve())),
  );
execFileSync("git", ["init", "-q", "--bare", plainGitDir], {
  env: { ...env, GIT_DIR: undefined, GIT_WORK_TREE: undefined },
});
let t = performance.now();
await git(["add", "-A"]);
await git(["commit", "-q", "-m", "initial"]);
const plainFirst = performance.now() - t;

const workspace = new Workspace([ws]);
const cps = new Checkpoints(
  new CheckpointStore(workspace.roots, { baseDir: join(tmp, "state") }),
  { files: new FileService(workspace), workspace },
  silentLogger,
);
const who = { frontEnd: "mcp" as const, client: "bench" };
const a = { ...who, tool: "fs_write", call: "c", phase: "after" as const };
t = performance.now();
await cps.store.record("flush", a);
const ccbFirst = performance.now() - t;
console.log(`first record of ${FILES} files: ccb ${fmt(ccbFirst)} | plain git add -A && commit ${fmt(plainFirst)}`);

let i = 0;
const change = () => writeFileSync(join(ws, "d7", "f7.txt"), `change ${i++}\n`);
/** `fn`'s times after a one-file change each; `after`, untimed, between rounds. */
async function time(fn: () => Promise<unknown>, after?: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let k = 0; k < N + 2; k++) {
    change();
    const s = performance.now();
    await fn();
    if (k >= 2) out.push(performance.now() - s); // two warm-up rounds
    await after?.();
  }
  return out;
}
const ccb = summarize(await time(() => cps.store.record("flush", a)));
const target = join(ws, "d7", "f7.txt");
const named = summarize(
  await time(async () => {
    await cps.store.record("start", a, { paths: [target] });
    await cps.store.record("end", a, { paths: [target] });
  }),
);
const plain = summarize(
  await time(async () => {
    await git(["add", "-A"]);
    await git(["commit", "-q", "-m", "x"]);
  }),
);
console.log(
  `checkpoint after a one-file change (${FILES} files), full scan: ccb p50 ${fmt(ccb.p50)} p99 ${fmt(ccb.p99)} | git add -A && commit p50 ${fmt(plain.p50)} p99 ${fmt(plain.p99)} | ratio p50 ${ratio(ccb.p50, plain.p50)}`,
);
console.log(
  `checkpoint after a one-file change (${FILES} files), path named (start+end): ccb p50 ${fmt(named.p50)} p99 ${fmt(named.p99)} | ratio p50 ${ratio(named.p50, plain.p50)}`,
);
// A tool call that writes one file, with and without the records around it: naming its path as the
// kernel does for fs_write (until its answer; its queued commit awaited between rounds), and not (a
// tool that does not name its paths: two full scans).
const bare = summarize(await time(async () => {}));
const around = summarize(
  await time(
    () =>
      cps.around({ name: "fs_write", annotations: { readOnlyHint: false }, paths: [target] }, who, async () =>
        change(),
      ),
    () => cps.idle(),
  ),
);
const aroundFull = summarize(
  await time(() => cps.around({ name: "fs_write", annotations: { readOnlyHint: false } }, who, async () => change())),
);
console.log(
  `one-file tool call (${FILES} files): with records, path named p50 ${fmt(around.p50)} p99 ${fmt(around.p99)} | full scans p50 ${fmt(aroundFull.p50)} p99 ${fmt(aroundFull.p99)} | bare p50 ${fmt(bare.p50)}`,
);

// An fs_write as an agent makes it (an MCP client in the same process, the kernel's runTool), on a
// core with checkpoints and on one with `CCB_CHECKPOINTS=off`, in a small workspace and in the
// large one; blocks of calls alternate between them. Two pacings: back to back (the next call at
// once, so it waits for any record the previous one queued) and paced (between calls, untimed, the
// records queued are awaited: an agent's turn between its calls). CCB_BENCH_BASE=<a checkout of
// another commit, its node_modules linked>: the same calls through that tree's core, server and
// checkpoints too (e.g. the commit before a change), blocks alternating with this tree's, one store.
// Printed as ratios: on/off within a tree, and this tree's "on" to the base's.
type Impl = {
  name: string;
  createCore: typeof createCore;
  checkpointsOf: typeof checkpointsOf;
  createMcpServer: typeof createMcpServer;
};
const here: Impl = { name: "this tree", createCore, checkpointsOf, createMcpServer };
async function baseImpl(dir: string): Promise<Impl> {
  const src = (p: string) => pathToFileURL(join(dir, "src", p)).href;
  return {
    name: `base ${dir}`,
    createCore: (await import(src("core/core.ts"))).createCore,
    checkpointsOf: (await import(src("core/checkpoints/index.ts"))).checkpointsOf,
    createMcpServer: (await import(src("protocols/mcp/server.ts"))).createMcpServer,
  };
}
const impls = [here, ...(process.env.CCB_BENCH_BASE ? [await baseImpl(process.env.CCB_BENCH_BASE)] : [])];

async function mcpClient(impl: Impl, root: string, checkpoints: boolean) {
  const core = impl.createCore({ roots: [root] });
  // The same store folder as `cps` above: the large workspace's store has its base already.
  const cp = checkpoints ? impl.checkpointsOf(core, { baseDir: join(tmp, "state") }) : undefined;
  if (checkpoints) await cp?.flush();
  else {
    process.env.CCB_CHECKPOINTS = "off";
    if (impl.checkpointsOf(core)) throw new Error("CCB_CHECKPOINTS=off did not turn checkpoints off");
    delete process.env.CCB_CHECKPOINTS;
  }
  const server = impl.createMcpServer({ core, log: silentLogger });
  const [x, y] = InMemoryTransport.createLinkedPair();
  await server.connect(x);
  const client = new Client({ name: "bench", version: "0" });
  await client.connect(y);
  return {
    client,
    idle: () => cp?.idle() ?? Promise.resolve(),
    close: () => client.close().then(() => core.dispose()),
  };
}
type Row = { impl: string; paced: boolean; on: number; off: number };
async function callLatency(root: string, rel: string): Promise<Row[]> {
  const clients = [];
  for (const impl of impls)
    clients.push({ impl, on: await mcpClient(impl, root, true), off: await mcpClient(impl, root, false) });
  const samples = new Map<string, number[]>();
  let n = 0;
  const call = async (c: Client) => {
    const s = performance.now();
    const r = await c.callTool({ name: "fs_write", arguments: { path: rel, content: `call ${n++}\n` } }, undefined, {
      timeout: 600_000,
    });
    if (r.isError) throw new Error(JSON.stringify(r.content));
    return performance.now() - s;
  };
  for (let block = 0; block < 4; block++)
    for (const paced of [false, true])
      for (const c of block % 2 ? [...clients].reverse() : clients)
        for (const k of block % 2 ? (["off", "on"] as const) : (["on", "off"] as const)) {
          const key = `${c.impl.name}|${paced}|${k}`;
          for (let j = 0; j < CALLS + 1; j++) {
            const ms = await call(c[k].client);
            if (j >= 1) samples.set(key, [...(samples.get(key) ?? []), ms]);
            if (paced) await c[k].idle();
          }
          // The next block (another tree's core on the same store) starts with nothing queued.
          await c[k].idle();
        }
  for (const c of clients) {
    await c.on.close();
    await c.off.close();
  }
  const p50 = (key: string) => summarize(samples.get(key) ?? []).p50;
  return impls.flatMap((impl) =>
    [false, true].map((paced) => ({
      impl: impl.name,
      paced,
      on: p50(`${impl.name}|${paced}|on`),
      off: p50(`${impl.name}|${paced}|off`),
    })),
  );
}
const small = join(tmp, "small");
mkdirSync(small);
for (let f = 0; f < 100; f++) writeFileSync(join(small, `f${f}.txt`), `file ${f}\n`);
const callSmall = await callLatency(small, "f7.txt");
const callLarge = await callLatency(ws, "d7/f7.txt");
for (const [label, rows] of [
  ["100 files", callSmall],
  [`${FILES} files`, callLarge],
] as const)
  for (const r of rows) {
    const base = rows.find((b) => b.impl !== here.name && b.paced === r.paced);
    console.log(
      `fs_write over MCP, ${label}, ${r.paced ? "paced" : "back to back"}, ${r.impl}: checkpoints on p50 ${fmt(r.on)} | off ${fmt(r.off)} | on/off ${ratio(r.on, r.off)}${
        base && r.impl === here.name ? ` | on vs the base's on ${ratio(r.on, base.on)}` : ""
      }`,
    );
  }
rmSync(tmp, { recursive: true, force: true });
console.log(
  JSON.stringify({
    bench: "checkpoints",
    n: N,
    files: FILES,
    firstCcbMs: ccbFirst,
    firstPlainMs: plainFirst,
    ccbP50: ccb.p50,
    plainP50: plain.p50,
    p50Ratio: ccb.p50 / plain.p50,
    namedP50: named.p50,
    namedP50Ratio: named.p50 / plain.p50,
    toolCallNamedP50: around.p50,
    toolCallFullScanP50: aroundFull.p50,
    fsWriteSmall: callSmall.map((r) => ({ ...r, ratio: r.on / r.off })),
    fsWriteLarge: callLarge.map((r) => ({ ...r, ratio: r.on / r.off })),
  }),
);
