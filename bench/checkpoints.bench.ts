// ccb checkpoint benchmark: recording a checkpoint after a one-file change in a 50,000-file
// workspace, against a plain `git add -A && git commit` of the same tree (its own GIT_DIR) in the
// same run: by a full scan (a flush, a command's effects) and by the named path alone (what
// fs_write/fs_delete/fs_move do); and what the recording adds to one tool call that changes one file.
// Run: node --import tsx bench/checkpoints.bench.ts   (BENCH_N=…, BENCH_FILES=…)
import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Checkpoints } from "../src/core/checkpoints/index.ts";
import { CheckpointStore } from "../src/core/checkpoints/store.ts";
import { FileService } from "../src/core/files/files.ts";
import { silentLogger } from "../src/core/log.ts";
import { Workspace } from "../src/core/workspace.ts";
import { fmt, ratio, summarize } from "./lib.ts";

const N = Number(process.env.BENCH_N ?? 15);
const FILES = Number(process.env.BENCH_FILES ?? 50_000);
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
async function time(fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let k = 0; k < N + 2; k++) {
    change();
    const s = performance.now();
    await fn();
    if (k >= 2) out.push(performance.now() - s); // two warm-up rounds
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
// kernel does for fs_write, and not (a tool that does not name its paths: two full scans).
const bare = summarize(await time(async () => {}));
const around = summarize(
  await time(() =>
    cps.around({ name: "fs_write", annotations: { readOnlyHint: false }, paths: [target] }, who, async () => change()),
  ),
);
const aroundFull = summarize(
  await time(() => cps.around({ name: "fs_write", annotations: { readOnlyHint: false } }, who, async () => change())),
);
console.log(
  `one-file tool call (${FILES} files): with records, path named p50 ${fmt(around.p50)} p99 ${fmt(around.p99)} | full scans p50 ${fmt(aroundFull.p50)} p99 ${fmt(aroundFull.p99)} | bare p50 ${fmt(bare.p50)}`,
);
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
  }),
);
