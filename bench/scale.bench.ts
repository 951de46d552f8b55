// How cost grows with the workspace: on generated trees of 5k, 50k and 500k files (bench/tree.ts,
// the 50k tree of bench/search.bench.ts at other sizes), the p50 of a small fs_read (FileService,
// with the confinement of src/core/fs-safe: root handle, component-wise open) of the deepest needle
// file (10 components) and of a file at the root (.gitignore), and of a search for
// 20 needles (SearchService with ripgrep), each next to its baseline in the same run: readFileSync
// of the same file, and `rg` run directly. Prints a table and the slope of each column per 10x.
//   node --import tsx bench/scale.bench.ts        Env: BENCH_SIZES (default 5000,50000,500000)
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createCore } from "../src/core/core.ts";
import { silentLogger } from "../src/core/log.ts";
import { findRgOnPath } from "../src/core/search/rg.ts";
import { rgFixedString, summarize } from "./lib.ts";
import { generateTree } from "./tree.ts";

const SIZES = (process.env.BENCH_SIZES ?? "5000,50000,500000").split(",").map(Number);
const READS = 400;
const SEARCHES = Number(process.env.BENCH_N ?? 7);
const NEEDLE = "zqxj_needle_marker";

const rgDirect = (rg: string, root: string) => rgFixedString(rg, root, NEEDLE);

const rg = await findRgOnPath();
if (!rg) throw new Error("rg is not on PATH (Debian: apt-get install ripgrep)");
const loadBefore = loadavg().map((x) => +x.toFixed(1));
const rows: Array<{
  files: number;
  readP50: number;
  baseReadP50: number;
  rootReadP50: number;
  searchP50: number;
  rgP50: number;
  found: number;
}> = [];
for (const size of SIZES) {
  const root = mkdtempSync(join(tmpdir(), "ccb-bench-scale-"));
  try {
    const g0 = performance.now();
    const { files, needlePaths } = generateTree(root, size, 20, NEEDLE);
    const deepest = needlePaths.reduce((a, b) => (b.split("/").length > a.split("/").length ? b : a));
    console.log(`generated ${files} files in ${((performance.now() - g0) / 1000).toFixed(1)} s; reading ${deepest}`);
    const core = createCore({ roots: [root], log: silentLogger });
    const abs = join(root, deepest);
    const reads: number[] = [];
    const base: number[] = [];
    const rootReads: number[] = [];
    for (let i = 0; i < 50; i++) await core.files.read(deepest);
    for (let i = 0; i < READS; i++) {
      let t0 = performance.now();
      readFileSync(abs);
      base.push(performance.now() - t0);
      t0 = performance.now();
      await core.files.read(deepest);
      reads.push(performance.now() - t0);
      t0 = performance.now();
      await core.files.read(".gitignore");
      rootReads.push(performance.now() - t0);
    }
    await rgDirect(rg, root);
    await core.search.search({ query: NEEDLE, engine: "ripgrep", maxResults: 1000 });
    const searches: number[] = [];
    const direct: number[] = [];
    let found = 0;
    for (let i = 0; i < SEARCHES; i++) {
      const d = await rgDirect(rg, root);
      direct.push(d.ms);
      const t0 = performance.now();
      const r = await core.search.search({ query: NEEDLE, engine: "ripgrep", maxResults: 1000 });
      searches.push(performance.now() - t0);
      found = r.truncated ? -1 : r.matches.length;
    }
    await core.dispose();
    rows.push({
      files,
      readP50: summarize(reads).p50,
      baseReadP50: summarize(base).p50,
      rootReadP50: summarize(rootReads).p50,
      searchP50: summarize(searches).p50,
      rgP50: summarize(direct).p50,
      found,
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
const slope = (k: "readP50" | "baseReadP50" | "rootReadP50" | "searchP50" | "rgP50") => {
  if (rows.length < 2) return Number.NaN;
  const a = rows[0]!;
  const b = rows.at(-1)!;
  return Math.log10(b[k] / a[k]) / Math.log10(b.files / a.files);
};
console.log(
  `\n  ${"files".padStart(8)} ${"read root".padStart(10)} ${"read deep".padStart(10)} ${"readFileSync".padStart(12)} ${"ratio".padStart(6)} ${"search p50".padStart(11)} ${"rg p50".padStart(9)} ${"ratio".padStart(6)}  found`,
);
for (const r of rows) {
  console.log(
    `  ${String(r.files).padStart(8)} ${`${(r.rootReadP50 * 1000).toFixed(0)} µs`.padStart(10)} ${`${(r.readP50 * 1000).toFixed(0)} µs`.padStart(10)} ${`${(r.baseReadP50 * 1000).toFixed(0)} µs`.padStart(12)} ${`${(r.readP50 / r.baseReadP50).toFixed(1)}x`.padStart(6)} ${`${r.searchP50.toFixed(0)} ms`.padStart(11)} ${`${r.rgP50.toFixed(0)} ms`.padStart(9)} ${`${(r.searchP50 / r.rgP50).toFixed(2)}x`.padStart(6)}  ${r.found}/20`,
  );
}
console.log(
  `  slope (log time / log files, first to last size): fs_read root ${slope("rootReadP50").toFixed(2)}, deep ${slope("readP50").toFixed(2)}, readFileSync ${slope("baseReadP50").toFixed(2)}, search ${slope("searchP50").toFixed(2)}, rg ${slope("rgP50").toFixed(2)}`,
);
const loadAfter = loadavg().map((x) => +x.toFixed(1));
console.log(`load average before/after: ${String(loadBefore)} / ${String(loadAfter)}`);
console.log(
  JSON.stringify({
    bench: "scale",
    rows: rows.map((r) => ({
      ...r,
      readP50: +r.readP50.toFixed(4),
      rootReadP50: +r.rootReadP50.toFixed(4),
      baseReadP50: +r.baseReadP50.toFixed(4),
      searchP50: +r.searchP50.toFixed(1),
      rgP50: +r.rgP50.toFixed(1),
    })),
    slope: {
      read: +slope("readP50").toFixed(2),
      rootRead: +slope("rootReadP50").toFixed(2),
      search: +slope("searchP50").toFixed(2),
      rg: +slope("rgP50").toFixed(2),
    },
    loadavg: { before: loadBefore, after: loadAfter },
  }),
);
if (rows.some((r) => r.found !== 20)) process.exitCode = 1;
