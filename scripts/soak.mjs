#!/usr/bin/env node
// `npm run test:soak -- <files> [--rounds N] [--load[=K]] [--duty P]`: runs the named test files (substrings
// of their paths, as `npm test` takes them) N times (default 5), each round every file in a fresh test
// runner, and prints per file how many rounds passed and failed, with the first failure's message, its
// whole output and the artifacts it kept (test/helpers/artifacts.ts). Nothing is retried: a flake shows
// as a failed round.
// --load starts K CPU burners (default: one per core), each busy P% of the time (default 50): beside this
// machine's own work, about what a CI machine running the suite does. They stop by themselves at the end
// of the soak, when this script goes away, and after --load-minutes (default 90) in any case.
import { spawn } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, readdirSync } from "node:fs";
import { availableParallelism } from "node:os";
import { basename, join, relative } from "node:path";
import { build, checkDebian, compileFor, root, setupPeers, testEnv, testFiles, testRunnerArgs } from "./test-setup.mjs";

const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const i = argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i < 0) return fallback;
  const a = argv[i];
  if (a.includes("=")) return a.slice(a.indexOf("=") + 1);
  const next = argv[i + 1];
  return next !== undefined && !next.startsWith("-") && /^\d+$/.test(next) ? next : true;
};
const positiveInt = (name, v) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`--${name} takes a whole number of 1 or more, got ${JSON.stringify(v)}`);
    process.exit(2);
  }
  return n;
};

const rounds = positiveInt("rounds", option("rounds", "5"));
const loadOpt = option("load", false);
const burners = loadOpt === false ? 0 : loadOpt === true ? availableParallelism() : positiveInt("load", loadOpt);
const duty = positiveInt("duty", option("duty", "50"));
const loadMinutes = positiveInt("load-minutes", option("load-minutes", "90"));
if (duty > 100) {
  console.error(`--duty is a percentage (1-100), got ${duty}`);
  process.exit(2);
}
const valued = new Set(["--rounds", "--load", "--duty", "--load-minutes"]);
const filters = argv.filter((a, i) => !a.startsWith("-") && !(valued.has(argv[i - 1]) && /^\d+$/.test(a)));
if (filters.length === 0) {
  console.error("usage: npm run test:soak -- <test files> [--rounds N] [--load[=K]] [--duty P] [--load-minutes M]");
  process.exit(2);
}
const files = testFiles(filters);
if (files.length === 0) {
  console.error(`no test files match ${filters.join(", ")}`);
  process.exit(1);
}

checkDebian();
setupPeers();
build();
compileFor(files);

const stamp = new Date().toISOString().replace(/[:.]/g, "-");
const out = join(root, ".cache/soak", stamp);
mkdirSync(out, { recursive: true });

// A burner: busy `duty`% of every 100 ms until its deadline, or until its parent (this script) is gone.
const BURNER = `const end = Date.now() + Number(process.argv[1]); const duty = Number(process.argv[2]); const parent = process.ppid;
const tick = () => { const t = Date.now(); if (t > end || process.ppid !== parent) process.exit(0);
  while (Date.now() - t < duty) {} setTimeout(tick, 100 - duty); }; tick();`;
const load = [];
for (let i = 0; i < burners; i++) {
  const b = spawn(process.execPath, ["-e", BURNER, String(loadMinutes * 60_000), String(duty)], { stdio: "ignore" });
  b.unref();
  load.push(b);
}
const stopLoad = () => {
  for (const b of load) if (b.exitCode === null) b.kill();
};
process.on("exit", stopLoad);
for (const sig of ["SIGINT", "SIGTERM"])
  process.on(sig, () => {
    stopLoad();
    process.exit(130);
  });

console.error(
  `soak: ${files.length} file(s) × ${rounds} round(s)${burners ? `, ${burners} burner(s) at ${duty}%` : ""}; output in ${relative(root, out)}`,
);

/**
 * The first failure the spec reporter lists under "failing tests": where it is, its name and its
 * message (up to 12 lines, stack frames left out; the whole output is in the round's log).
 */
function firstFailure(text) {
  const lines = text.split("\n");
  const at = lines.findIndex((l) => l.includes("✖ failing tests:"));
  if (at < 0) return undefined;
  const block = [];
  for (const l of lines.slice(at + 1)) {
    if (l.trim() === "") continue;
    if (block.length > 0 && l.startsWith("test at ")) break;
    if (/^\s+at /.test(l)) continue;
    block.push(l);
    if (block.length >= 14) break;
  }
  return block.length > 0 ? block.join("\n") : undefined;
}

function runOnce(file, round) {
  const name = basename(file).replace(/\.test\.ts$/, "");
  const log = join(out, `round-${round}`, `${name}.log`);
  const artifacts = join(out, `round-${round}`, "artifacts");
  mkdirSync(join(out, `round-${round}`), { recursive: true });
  const started = Date.now();
  return new Promise((resolve) => {
    const sink = createWriteStream(log);
    let text = "";
    const child = spawn(process.execPath, testRunnerArgs([file]), {
      cwd: root,
      env: testEnv({ CCB_TEST_ARTIFACTS: artifacts }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    for (const s of [child.stdout, child.stderr])
      s.on("data", (d) => {
        sink.write(d);
        text += d;
      });
    child.on("close", (code, signal) => {
      sink.end();
      const kept = join(artifacts, name);
      resolve({
        ok: code === 0,
        seconds: Math.round((Date.now() - started) / 1000),
        failure: code === 0 ? undefined : (firstFailure(text) ?? `exit ${code ?? signal}`),
        log,
        artifacts: existsSync(kept) ? readdirSync(kept).map((t) => join(kept, t)) : [],
      });
    });
  });
}

const results = new Map(files.map((f) => [f, []]));
for (let round = 1; round <= rounds; round++) {
  for (const file of files) {
    const r = await runOnce(file, round);
    results.get(file).push(r);
    console.error(`round ${round}/${rounds} ${file}: ${r.ok ? "pass" : "FAIL"} (${r.seconds} s)`);
  }
}
stopLoad();

console.log(`\nsoak summary: ${rounds} round(s)${burners ? ` under ${burners} burner(s) at ${duty}%` : ""}`);
let failed = 0;
for (const [file, rs] of results) {
  const fails = rs.filter((r) => !r.ok);
  failed += fails.length;
  const secs = rs.map((r) => r.seconds);
  console.log(
    `${fails.length === 0 ? "ok  " : "FAIL"} ${file}: ${rs.length - fails.length} passed, ${fails.length} failed (${Math.min(...secs)}-${Math.max(...secs)} s a round)`,
  );
  const first = fails[0];
  if (first) {
    console.log(`     first failure (round ${rs.indexOf(first) + 1}):`);
    console.log(first.failure.replace(/^/gm, "       "));
    console.log(`     its output: ${relative(root, first.log)}`);
    for (const a of first.artifacts) console.log(`     kept: ${relative(root, a)}`);
  }
}
process.exit(failed === 0 ? 0 : 1);
