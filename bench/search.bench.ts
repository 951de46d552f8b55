// fs_search on a generated tree of ~50k files vs running `rg` directly on the same tree, in the
// same run. Both must find all 20 needles (complete results). Run: node --import tsx bench/search.bench.ts
// Env: BENCH_FILES (default 50000), BENCH_N (rg-engine iterations, default 15), BENCH_JS_N (default 5).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCore } from "../src/core/core.ts";
import { silentLogger } from "../src/core/log.ts";
import { findRgOnPath } from "../src/core/search/rg.ts";
import fsSearch from "../src/tools/fs_search.ts";
import { fmt, ratio, rgFixedString, summarize } from "./lib.ts";
import { generateTree } from "./tree.ts";

const FILES = Number(process.env.BENCH_FILES ?? 50_000);
const N = Number(process.env.BENCH_N ?? 15);
const JS_N = Number(process.env.BENCH_JS_N ?? 5);
const NEEDLES = 20;
const NEEDLE = "zqxj_needle_marker";
const generate = (root: string) => generateTree(root, FILES, NEEDLES, NEEDLE);

const runRgDirect = (rg: string, root: string) => rgFixedString(rg, root, NEEDLE);

const rg = await findRgOnPath();
if (!rg) throw new Error("rg is not on PATH (Debian: apt-get install ripgrep)");
const root = mkdtempSync(join(tmpdir(), "ccb-bench-search-"));
try {
  const g0 = performance.now();
  const { files, needlePaths } = generate(root);
  console.log(
    `generated ${files} files (+200 ignored) with ${needlePaths.length} needles in ${((performance.now() - g0) / 1000).toFixed(1)} s; deepest needle: ${needlePaths.reduce((a, b) => (b.split("/").length > a.split("/").length ? b : a))}`,
  );

  const core = createCore({ roots: [root], log: silentLogger });
  const ctx = { core, signal: new AbortController().signal, log: silentLogger };
  const ccbRg = async () => {
    const t0 = performance.now();
    const r = await core.search.search({ query: NEEDLE, engine: "ripgrep", maxResults: 1000 });
    return { ms: performance.now() - t0, found: r.matches.length, truncated: r.truncated };
  };
  const ccbTool = async () => {
    const t0 = performance.now();
    const r = await fsSearch.execute(fsSearch.input.parse({ query: NEEDLE, maxResults: 1000 }), ctx);
    return {
      ms: performance.now() - t0,
      found: (r.structured?.matches as unknown[]).length,
      truncated: r.structured?.truncated as boolean,
    };
  };
  const ccbJs = async () => {
    const t0 = performance.now();
    const r = await core.search.search({ query: NEEDLE, engine: "js", maxResults: 1000 });
    return { ms: performance.now() - t0, found: r.matches.length, truncated: r.truncated };
  };

  // Warm the page cache and the engines.
  await runRgDirect(rg, root);
  await ccbRg();
  await ccbJs();

  const direct: number[] = [];
  const viaRg: number[] = [];
  const viaTool: number[] = [];
  let complete = { direct: 0, rg: 0, tool: 0, js: 0 };
  for (let i = 0; i < N; i++) {
    const d = await runRgDirect(rg, root);
    const a = await ccbRg();
    const t = await ccbTool();
    direct.push(d.ms);
    viaRg.push(a.ms);
    viaTool.push(t.ms);
    complete = { ...complete, direct: d.lines, rg: a.truncated ? -1 : a.found, tool: t.truncated ? -1 : t.found };
  }
  const viaJs: number[] = [];
  for (let i = 0; i < JS_N; i++) {
    const j = await ccbJs();
    viaJs.push(j.ms);
    complete.js = j.truncated ? -1 : j.found;
  }
  await core.dispose();

  const sd = summarize(direct);
  const sr = summarize(viaRg);
  const st = summarize(viaTool);
  const sj = summarize(viaJs);
  console.log(
    `rg direct          (n=${N}): p50 ${fmt(sd.p50)} p99 ${fmt(sd.p99)}  needles found ${complete.direct}/${NEEDLES}`,
  );
  console.log(
    `SearchService rg   (n=${N}): p50 ${fmt(sr.p50)} p99 ${fmt(sr.p99)}  needles found ${complete.rg}/${NEEDLES}  ratio p50 ${ratio(sr.p50, sd.p50)} p99 ${ratio(sr.p99, sd.p99)} (target <= 1.5x)`,
  );
  console.log(
    `fs_search tool     (n=${N}): p50 ${fmt(st.p50)} p99 ${fmt(st.p99)}  needles found ${complete.tool}/${NEEDLES}  ratio p50 ${ratio(st.p50, sd.p50)} p99 ${ratio(st.p99, sd.p99)}`,
  );
  console.log(
    `SearchService JS   (n=${JS_N}): p50 ${fmt(sj.p50)} p99 ${fmt(sj.p99)}  needles found ${complete.js}/${NEEDLES}  ratio p50 ${ratio(sj.p50, sd.p50)} p99 ${ratio(sj.p99, sd.p99)} (fallback, no target)`,
  );
  const allFound =
    complete.direct === NEEDLES && complete.rg === NEEDLES && complete.tool === NEEDLES && complete.js === NEEDLES;
  console.log(
    JSON.stringify({
      bench: "search",
      files,
      needles: NEEDLES,
      complete: allFound,
      found: complete,
      rgDirectP50Ms: +sd.p50.toFixed(2),
      rgDirectP99Ms: +sd.p99.toFixed(2),
      ccbRgP50Ms: +sr.p50.toFixed(2),
      ccbRgP99Ms: +sr.p99.toFixed(2),
      ratioRgP50: +(sr.p50 / sd.p50).toFixed(3),
      ratioRgP99: +(sr.p99 / sd.p99).toFixed(3),
      ratioToolP50: +(st.p50 / sd.p50).toFixed(3),
      ratioJsP50: +(sj.p50 / sd.p50).toFixed(3),
    }),
  );
  if (!allFound) process.exitCode = 1;
} finally {
  rmSync(root, { recursive: true, force: true });
}
