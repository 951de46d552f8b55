// What race-free path resolution costs, in the same run:
// 1. a small fs_read (1 KiB at depth 3) through FileService vs the path-based resolution ccb used
//    before (realpath of the path, prefix check, open by path with O_NOFOLLOW, fstat, read, hash);
// 2. fs_search on the generated 50k-file tree through SearchService (start path located through
//    directory handles, matches confirmed by a re-read through handles) vs the bare engine on the
//    same root (searchRg / searchJs, no resolution or confirmation).
// Run: node --import tsx bench/confine.bench.ts   Env: BENCH_N (reads, default 3000), BENCH_FILES (50000), BENCH_SEARCH_N (10).
import { createHash } from "node:crypto";
import { constants, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { open, realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";
import { createCore } from "../src/core/core.ts";
import { silentLogger } from "../src/core/log.ts";
import type { EngineQuery } from "../src/core/search/common.ts";
import { searchJs } from "../src/core/search/js.ts";
import { findRgOnPath, searchRg } from "../src/core/search/rg.ts";
import { fmt, ratio, summarize } from "./lib.ts";
import { generateTree } from "./tree.ts";

const N = Number(process.env.BENCH_N ?? 3000);
const FILES = Number(process.env.BENCH_FILES ?? 50_000);
const SN = Number(process.env.BENCH_SEARCH_N ?? 10);
const NEEDLE = "zqxj_needle_marker";

async function pathBasedRead(rootReal: string, rel: string): Promise<string> {
  const real = await realpath(join(rootReal, rel));
  if (!real.startsWith(rootReal + sep)) throw new Error("outside");
  const fh = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const st = await fh.stat();
    if (!st.isFile() || st.nlink > 1) throw new Error("not a single-linked file");
    const buf = await fh.readFile();
    createHash("sha256").update(buf).digest("hex");
    return buf.toString("utf8");
  } finally {
    await fh.close();
  }
}

const base = mkdtempSync(join(tmpdir(), "ccb-bench-confine-"));
try {
  // 1. small read
  const small = join(base, "small");
  mkdirSync(join(small, "src", "a", "b"), { recursive: true });
  writeFileSync(join(small, "src", "a", "b", "small.ts"), `${"x".repeat(1023)}\n`);
  const rootReal = await realpath(small);
  const core = createCore({ roots: [small], log: silentLogger });
  const rel = "src/a/b/small.ts";
  const before: number[] = [];
  const after: number[] = [];
  for (let i = 0; i < N + 200; i++) {
    const t0 = performance.now();
    await pathBasedRead(rootReal, rel);
    const t1 = performance.now();
    await core.files.read(rel);
    const t2 = performance.now();
    if (i >= 200) {
      before.push(t1 - t0);
      after.push(t2 - t1);
    }
  }
  await core.dispose();
  const sb = summarize(before);
  const sa = summarize(after);
  console.log(`small read, path-based (before) n=${N}: p50 ${fmt(sb.p50)} p99 ${fmt(sb.p99)}`);
  console.log(
    `small read, FileService (after)  n=${N}: p50 ${fmt(sa.p50)} p99 ${fmt(sa.p99)}  ratio p50 ${ratio(sa.p50, sb.p50)} p99 ${ratio(sa.p99, sb.p99)}`,
  );

  // 2. search on the 50k tree
  const tree = join(base, "tree");
  mkdirSync(tree);
  const { files } = generateTree(tree, FILES, 20, NEEDLE);
  const treeCore = createCore({ roots: [tree], log: silentLogger });
  const rg = await findRgOnPath();
  const q: EngineQuery = {
    rootAbs: await realpath(tree),
    startRel: "",
    startIsFile: false,
    query: NEEDLE,
    regex: false,
    ignoreCase: false,
    include: [],
    exclude: [],
    respectGitignore: true,
    includeHidden: false,
    contextLines: 0,
    limit: 1001,
  };
  const rows: Array<Record<string, unknown>> = [];
  for (const engine of ["ripgrep", "js"] as const) {
    if (engine === "ripgrep" && !rg) continue;
    const raw: number[] = [];
    const svc: number[] = [];
    for (let i = 0; i < SN + 1; i++) {
      const t0 = performance.now();
      const r1 = engine === "ripgrep" ? await searchRg(rg as string, q) : await searchJs(q);
      const t1 = performance.now();
      const r2 = await treeCore.search.search({ query: NEEDLE, engine, maxResults: 1000 });
      const t2 = performance.now();
      if (r1.matches.length !== 20 || r2.matches.length !== 20)
        throw new Error(`${engine}: expected 20 matches, got ${r1.matches.length}/${r2.matches.length}`);
      if (i > 0) {
        raw.push(t1 - t0);
        svc.push(t2 - t1);
      }
    }
    const r = summarize(raw);
    const s = summarize(svc);
    console.log(`search ${files} files, ${engine} engine alone (before) n=${SN}: p50 ${fmt(r.p50)}`);
    console.log(
      `search ${files} files, SearchService ${engine} (after)  n=${SN}: p50 ${fmt(s.p50)}  ratio p50 ${ratio(s.p50, r.p50)}`,
    );
    rows.push({
      engine,
      beforeP50Ms: +r.p50.toFixed(2),
      afterP50Ms: +s.p50.toFixed(2),
      ratioP50: +(s.p50 / r.p50).toFixed(3),
    });
  }
  await treeCore.dispose();
  console.log(
    JSON.stringify({
      bench: "confine",
      smallReadBeforeP50Ms: +sb.p50.toFixed(3),
      smallReadAfterP50Ms: +sa.p50.toFixed(3),
      smallReadRatioP50: +(sa.p50 / sb.p50).toFixed(3),
      smallReadRatioP99: +(sa.p99 / sb.p99).toFixed(3),
      search: rows,
    }),
  );
} finally {
  rmSync(base, { recursive: true, force: true });
}
