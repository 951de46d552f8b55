// fs_read of a 1 MB text file through FileService (and the fs_read tool) vs the baseline
// fs.readFile + SHA-256 + UTF-8 decode, in the same run. Run: node --import tsx bench/fs-read.bench.ts
// Env: BENCH_N (iterations, default 300).
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCore } from "../src/core/core.ts";
import { silentLogger } from "../src/core/log.ts";
import fsRead from "../src/tools/fs_read.ts";
import { fmt, ratio, summarize } from "./lib.ts";

const N = Number(process.env.BENCH_N ?? 300);
const SIZE = 1024 * 1024;

const root = mkdtempSync(join(tmpdir(), "ccb-bench-read-"));
try {
  const line = "export function example(value: number): number { return value * 2; } // padding text\n";
  const content = `${line.repeat(Math.ceil(SIZE / line.length)).slice(0, SIZE - 1)}\n`;
  const file = join(root, "big.ts");
  writeFileSync(file, content);
  const core = createCore({ roots: [root], log: silentLogger });
  const ctx = { core, signal: new AbortController().signal, log: silentLogger };
  const expected = createHash("sha256").update(content).digest("hex");

  const baseline = async () => {
    const t0 = performance.now();
    const buf = await readFile(file);
    const v = createHash("sha256").update(buf).digest("hex");
    const text = buf.toString("utf8");
    const ms = performance.now() - t0;
    if (v !== expected || text.length !== SIZE) throw new Error("baseline read wrong");
    return ms;
  };
  const service = async () => {
    const t0 = performance.now();
    const r = await core.files.read("big.ts", { maxBytes: 2 * SIZE });
    const ms = performance.now() - t0;
    if (r.version !== expected || r.content.length !== SIZE || r.truncated) throw new Error("service read wrong");
    return ms;
  };
  const tool = async () => {
    const t0 = performance.now();
    const r = await fsRead.execute(fsRead.input.parse({ path: "big.ts", maxBytes: 2 * SIZE }), ctx);
    const ms = performance.now() - t0;
    if (r.structured?.version !== expected) throw new Error("tool read wrong");
    return ms;
  };
  const serviceDefault = async () => {
    const t0 = performance.now();
    const r = await core.files.read("big.ts");
    const ms = performance.now() - t0;
    if (r.version !== expected || !r.truncated) throw new Error("default read should be cut at 256 KiB");
    return ms;
  };

  for (let i = 0; i < 20; i++) {
    await baseline();
    await service();
    await tool();
    await serviceDefault();
  }
  const b: number[] = [];
  const s: number[] = [];
  const t: number[] = [];
  const d: number[] = [];
  for (let i = 0; i < N; i++) {
    b.push(await baseline());
    s.push(await service());
    t.push(await tool());
    d.push(await serviceDefault());
  }
  await core.dispose();
  const sb = summarize(b);
  const ss = summarize(s);
  const st = summarize(t);
  const sd = summarize(d);
  console.log(`readFile+sha256+utf8 (n=${N}): p50 ${fmt(sb.p50)} p99 ${fmt(sb.p99)}`);
  console.log(
    `FileService.read 1 MB (n=${N}): p50 ${fmt(ss.p50)} p99 ${fmt(ss.p99)}  ratio p50 ${ratio(ss.p50, sb.p50)} p99 ${ratio(ss.p99, sb.p99)}`,
  );
  console.log(
    `fs_read tool 1 MB     (n=${N}): p50 ${fmt(st.p50)} p99 ${fmt(st.p99)}  ratio p50 ${ratio(st.p50, sb.p50)} p99 ${ratio(st.p99, sb.p99)}`,
  );
  console.log(
    `FileService.read default cap 256 KiB (n=${N}): p50 ${fmt(sd.p50)} p99 ${fmt(sd.p99)}  ratio p50 ${ratio(sd.p50, sb.p50)}`,
  );
  console.log(
    JSON.stringify({
      bench: "fs-read",
      bytes: SIZE,
      baselineP50Ms: +sb.p50.toFixed(3),
      baselineP99Ms: +sb.p99.toFixed(3),
      serviceP50Ms: +ss.p50.toFixed(3),
      serviceP99Ms: +ss.p99.toFixed(3),
      ratioP50: +(ss.p50 / sb.p50).toFixed(3),
      ratioP99: +(ss.p99 / sb.p99).toFixed(3),
      toolRatioP50: +(st.p50 / sb.p50).toFixed(3),
      defaultCapRatioP50: +(sd.p50 / sb.p50).toFixed(3),
    }),
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}
