// `fetchRuntime` (streamed download with SHA-256, full safety scan, node-tar extraction, rename)
// vs the baseline a shell script would do (plain download to disk, then system `tar -xzf`), in the
// same run, from a local HTTP mirror. Run: node --import tsx bench/runtime-fetch.bench.ts
// Env: BENCH_N (iterations, default 5), BENCH_FILES (files in the archive, default 3000).
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fetchRuntime } from "../src/runtime-fetch/index.ts";
import {
  FIXTURE_FILE,
  FIXTURE_TAG,
  FIXTURE_TOP,
  fixtureManifest,
  goodEntries,
  makeTarGz,
  type TarEntry,
} from "../test/fixtures/runtime/archives.ts";
import { startMirror } from "../test/fixtures/runtime/mirror.ts";
import { fmt, ratio, summarize } from "./lib.ts";

const N = Number(process.env.BENCH_N ?? 5);
const FILES = Number(process.env.BENCH_FILES ?? 3000);

// A runtime-shaped archive: many small, compressible source files (like out/ and node_modules/ of the real one).
const entries: TarEntry[] = goodEntries();
for (let d = 0; d < FILES / 100; d++) {
  entries.push({ type: "dir", path: `${FIXTURE_TOP}/lib/m${d}/` });
  for (let f = 0; f < 100; f++) {
    const body = `// module ${d}/${f}\n${`export const value${f} = ${JSON.stringify("x".repeat(40 + ((d * 7 + f) % 50)))};\n`.repeat(120)}`;
    entries.push({ type: "file", path: `${FIXTURE_TOP}/lib/m${d}/f${f}.js`, data: body });
  }
}
const archive = makeTarGz(entries);
const manifest = fixtureManifest(archive);
const mirror = await startMirror({ [`/${FIXTURE_TAG}/${FIXTURE_FILE}`]: { body: archive } });
const url = `${mirror.url}/${FIXTURE_TAG}/${FIXTURE_FILE}`;
const work = mkdtempSync(join(tmpdir(), "ccb-bench-runtime-"));

try {
  let i = 0;
  const baseline = async () => {
    const dir = join(work, `base-${i++}`);
    mkdirSync(dir);
    const t0 = performance.now();
    const res = await fetch(url);
    await writeFile(join(dir, "a.tar.gz"), Buffer.from(await res.arrayBuffer()));
    const r = spawnSync("tar", ["-xzf", "a.tar.gz"], { cwd: dir });
    const ms = performance.now() - t0;
    if (r.status !== 0) throw new Error("tar failed");
    rmSync(dir, { recursive: true, force: true });
    return ms;
  };
  const ccb = async () => {
    const cacheDir = join(work, `ccb-${i++}`);
    const t0 = performance.now();
    const r = await fetchRuntime({
      manifest,
      mirror: mirror.url,
      cacheDir,
      host: { platform: "linux", arch: "x64" },
      env: {},
    });
    const ms = performance.now() - t0;
    if (r.status !== "installed") throw new Error("not installed");
    rmSync(cacheDir, { recursive: true, force: true });
    return ms;
  };

  await baseline();
  await ccb();
  const b: number[] = [];
  const c: number[] = [];
  for (let k = 0; k < N; k++) {
    b.push(await baseline());
    c.push(await ccb());
  }
  const sb = summarize(b);
  const sc = summarize(c);
  const mb = (archive.length / 1024 / 1024).toFixed(1);
  console.log(`archive: ${mb} MB gzip, ${entries.length} entries`);
  console.log(`download + tar -xzf      (n=${N}): p50 ${fmt(sb.p50)} p99 ${fmt(sb.p99)}`);
  console.log(
    `fetchRuntime (verified)  (n=${N}): p50 ${fmt(sc.p50)} p99 ${fmt(sc.p99)}  ratio p50 ${ratio(sc.p50, sb.p50)} p99 ${ratio(sc.p99, sb.p99)}`,
  );
  console.log(
    JSON.stringify({
      bench: "runtime-fetch",
      archiveBytes: archive.length,
      entries: entries.length,
      n: N,
      baselineP50Ms: +sb.p50.toFixed(1),
      baselineP99Ms: +sb.p99.toFixed(1),
      fetchRuntimeP50Ms: +sc.p50.toFixed(1),
      fetchRuntimeP99Ms: +sc.p99.toFixed(1),
      ratioP50: +(sc.p50 / sb.p50).toFixed(2),
      ratioP99: +(sc.p99 / sb.p99).toFixed(2),
    }),
  );
} finally {
  await mirror.close();
  rmSync(work, { recursive: true, force: true });
}
