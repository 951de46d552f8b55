// ccb git benchmarks: GitService.status() / run(["log", ...]) / diff() against plain `git` with the
// same arguments in the same run. The difference is ccb's preflight (rev-parse and config listing,
// run side by side), the argument policy and the fixed environment.
// Run: node --import tsx bench/git.bench.ts   (BENCH_N=… for more samples)
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GitService } from "../src/core/git/git.ts";
import { Workspace } from "../src/core/workspace.ts";
import { fmt, ratio, summarize } from "./lib.ts";

const N = Number(process.env.BENCH_N ?? 40);
const dir = mkdtempSync(join(tmpdir(), "ccb-git-bench-"));
const env = {
  ...process.env,
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "b",
  GIT_AUTHOR_EMAIL: "b@e",
  GIT_COMMITTER_NAME: "b",
  GIT_COMMITTER_EMAIL: "b@e",
};
const sh = (...args: string[]) => execFileSync("git", args, { cwd: dir, env, stdio: "ignore" });
sh("init", "-q", "-b", "main");
for (let i = 0; i < 2000; i++) writeFileSync(join(dir, `f${i}.txt`), `file ${i}\n`);
sh("add", ".");
sh("commit", "-q", "-m", "initial");
for (let i = 0; i < 50; i++) writeFileSync(join(dir, `f${i}.txt`), `changed ${i}\n`);

const plain = (args: string[]) =>
  new Promise<void>((resolve, reject) =>
    execFile("git", args, { cwd: dir, env, maxBuffer: 64 << 20 }, (e) => (e ? reject(e) : resolve())),
  );

async function time(fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < 3; i++) await fn(); // warm-up
  const out: number[] = [];
  for (let i = 0; i < N; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}

const svc = new GitService(new Workspace([dir]));
const cases: [string, () => Promise<unknown>, () => Promise<unknown>][] = [
  [
    "status (2000 files, 50 modified)",
    () => svc.status(),
    () => plain(["status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all"]),
  ],
  ["diff (50 files)", () => svc.diff(), () => plain(["diff", "--no-color", "--no-ext-diff"])],
  ["run log -1", () => svc.run(["log", "-1"]), () => plain(["log", "-1"])],
];
const summary: Record<string, unknown> = {};
for (const [name, ccb, base] of cases) {
  const a = summarize(await time(ccb));
  const b = summarize(await time(base));
  console.log(
    `${name}: ccb p50 ${fmt(a.p50)} p99 ${fmt(a.p99)} | git p50 ${fmt(b.p50)} p99 ${fmt(b.p99)} | ratio p50 ${ratio(a.p50, b.p50)} p99 ${ratio(a.p99, b.p99)}`,
  );
  summary[name] = { ccbP50: a.p50, gitP50: b.p50, p50Ratio: a.p50 / b.p50, p99Ratio: a.p99 / b.p99 };
}
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify({ bench: "git", n: N, ...summary }));
