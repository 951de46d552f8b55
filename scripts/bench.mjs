#!/usr/bin/env node
// `npm run bench [-- name...]`: builds, compiles the Bun binary, then runs bench/*.bench.ts one
// after another (each compares against its own baseline in the same run and prints ratios) and
// collects every benchmark's one-line JSON summary into bench/results/latest.json.
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const filters = process.argv.slice(2);
const files = readdirSync(join(root, "bench"))
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();

for (const step of ["build.mjs", "compile.mjs"]) {
  const r = spawnSync(process.execPath, [join(root, "scripts", step)], { cwd: root, stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const summaries = [];
let failed = 0;
for (const f of files) {
  console.log(`\n== bench/${f} ==`);
  const r = spawnSync(process.execPath, ["--import", "tsx", join(root, "bench", f)], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 64 * 1024 * 1024,
  });
  process.stdout.write(r.stdout ?? "");
  if (r.status !== 0) {
    failed++;
    console.log(`bench/${f} failed (exit ${r.status})`);
    continue;
  }
  for (const line of (r.stdout ?? "").split("\n")) {
    if (line.startsWith("{") && line.includes('"bench"')) {
      try {
        summaries.push(JSON.parse(line));
      } catch {
        // not a summary line
      }
    }
  }
}
mkdirSync(join(root, "bench/results"), { recursive: true });
writeFileSync(join(root, "bench/results/latest.json"), `${JSON.stringify(summaries, null, 2)}\n`);
console.log(
  `\n${summaries.length} summaries written to bench/results/latest.json${failed ? `; ${failed} benchmark(s) failed` : ""}`,
);
process.exit(failed ? 1 : 0);
