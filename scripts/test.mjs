#!/usr/bin/env node
// `npm test`: builds, then runs every test/**/*.test.ts with Node's test runner (through tsx).
// Arguments filter test files by substring: `npm test -- files git`.
// `--unit` (`npm run test:unit`): the edit-test loop, test/unit only, with no Debian check, no peers,
// no compiled binary: the quick build (dist/, ~1 s) and the unit tests, which start no peer.
// Before any test: the Debian packages are checked (one line names the apt-get command) and the npm-side
// peers are provisioned (scripts/setup-peers.sh, cached; CCB_SKIP_PEERS=1 skips it).
// CCB_TEST_BIN=/path/to/ccb makes the end-to-end tests spawn that binary (e.g. the Bun build);
// CCB_TEST_RUNTIME=deno runs them with `deno run -A dist/node/main.mjs`.
// `npm run test:soak` (scripts/soak.mjs) runs chosen files many times, optionally under load.
// Scheduling: the files run as separate test runners, CCB_TEST_JOBS (default 2, the CI machine's cores)
// at a time, longest first (test/durations.json), at most CCB_TEST_WORKBENCH_JOBS (default 1) of them
// a file with a real workbench or browser while other files wait; the unit tests are one runner, and
// start while the peers install (they start no peer; every other file waits for the peers). Each file's output is
// printed whole when it ends; the run ends with each file's time (also in .cache/test-durations.json).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  build,
  checkDebian,
  compileFor,
  debianPackages,
  expectedSeconds,
  isWorkbenchFile,
  root,
  setupPeersInBackground,
  testEnv,
  testFiles,
  testRunnerArgs,
} from "./test-setup.mjs";

const filters = process.argv.slice(2).filter((a) => !a.startsWith("-"));
const unit = process.argv.includes("--unit");
const passThrough = process.argv.slice(2).filter((a) => a.startsWith("-") && a !== "--unit");

const files = testFiles(filters, { unit });
if (files.length === 0) {
  console.error(`no test files match ${filters.join(", ")}`);
  process.exit(1);
}

// `node scripts/test.mjs --debian-packages` prints the Debian packages (what .ci/run installs).
if (process.argv.includes("--debian-packages")) {
  process.stdout.write(`${debianPackages().join(" ")}\n`);
  process.exit(0);
}
let peersReady = Promise.resolve();
if (!unit) {
  checkDebian();
  peersReady = setupPeersInBackground();
  peersReady.catch(() => undefined); // awaited by the scheduler; a failure stops the run there
}
build();

function runTests(list, env) {
  const r = spawnSync(process.execPath, testRunnerArgs(list, passThrough), {
    stdio: "inherit",
    cwd: root,
    env: testEnv(env),
  });
  return r.status ?? 1;
}

/**
 * The unit tests run in this process's children, most of them in process (a core, its tools, its
 * checkpoints): they get a state folder of their own (XDG_STATE_HOME), removed at the end, instead
 * of the real `~/.local/state/ccb`. End-to-end files make one per file (test/helpers/serve.ts).
 */
let unitState;
function unitEnv() {
  if (!unitState) {
    unitState = mkdtempSync(join(tmpdir(), "ccb-unit-state-"));
    process.once("exit", () => rmSync(unitState, { recursive: true, force: true }));
  }
  return { XDG_STATE_HOME: unitState };
}

const jobsFrom = (name, fallback) => {
  const n = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`${name} takes a whole number of 1 or more, got ${JSON.stringify(process.env[name])}`);
    process.exit(2);
  }
  return n;
};

/** What the runner printed at its end: ℹ tests N, ℹ pass N, ... */
const counts = (out) =>
  Object.fromEntries(
    [...out.matchAll(/^ℹ (tests|pass|fail|cancelled|skipped|todo) (\d+)$/gm)].map((m) => [m[1], Number(m[2])]),
  );

/**
 * Every file in a test runner of its own (the unit tests in one), `CCB_TEST_JOBS` at a time, longest
 * first, at most `CCB_TEST_WORKBENCH_JOBS` workbench files at once while other files wait (then any
 * number); `extra` runners (a set of files under another runtime) are scheduled with them. Returns the
 * exit status and the failed tests' report.
 */
async function runScheduled(list, peersReady, extra = []) {
  const slots = jobsFrom("CCB_TEST_JOBS", 2);
  const workbenchSlots = jobsFrom("CCB_TEST_WORKBENCH_JOBS", 1);
  const known = expectedSeconds();
  /** A runner's expected seconds: its files' times in the last full run (`unknown` for a file not in it). */
  const secondsOf = (files, unknown = 10) => files.reduce((t, f) => t + (known[f] ?? unknown), 0);
  const units = list.filter((f) => f.startsWith("test/unit/"));
  const jobs = [
    ...(units.length > 0
      ? [
          {
            name: "test/unit",
            files: units,
            workbench: false,
            seconds: secondsOf(units, 1),
            env: unitEnv(),
          },
        ]
      : []),
    ...list
      .filter((f) => !f.startsWith("test/unit/"))
      .map((f) => ({ name: f, files: [f], workbench: isWorkbenchFile(f), seconds: secondsOf([f]) })),
    ...extra.map((job) => ({ ...job, workbench: false, seconds: secondsOf(job.files) })),
  ].sort((a, b) => b.seconds - a.seconds);
  if (jobs.length === 1) {
    if (jobs[0].name !== "test/unit") await peersReady.catch((err) => process.exit(err.status ?? 1));
    return { status: runTests(jobs[0].files, jobs[0].env ?? {}), failures: "" };
  }
  // The unit tests start no peer: they run while the peers install; every other file waits for them.
  let peers = false;
  const mayStart = (job) => peers || job.name === "test/unit";

  const started = Date.now();
  const done = [];
  const running = new Set();
  const children = new Set();
  const stop = (sig) => {
    for (const c of children) c.kill(sig);
    process.exit(130);
  };
  process.once("SIGINT", () => stop("SIGINT"));
  process.once("SIGTERM", () => stop("SIGTERM"));
  console.error(
    `npm test: ${jobs.length} test runners, ${slots} at a time (at most ${workbenchSlots} with a workbench or browser while other files wait), longest first`,
  );
  const run = (job) =>
    new Promise((resolve) => {
      const t0 = Date.now();
      console.error(`▷ ${job.name}${job.files.length > 1 ? ` (${job.files.length} files)` : ""}`);
      const child = spawn(process.execPath, testRunnerArgs(job.files, passThrough), {
        cwd: root,
        env: testEnv(job.env ?? {}),
        stdio: ["ignore", "pipe", "pipe"],
      });
      children.add(child);
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (out += d));
      child.on("close", (code, signal) => {
        children.delete(child);
        const seconds = Math.round((Date.now() - t0) / 1000);
        const ok = code === 0;
        process.stdout.write(
          `\n━━ ${job.name}: ${ok ? "passed" : `FAILED (${code ?? signal})`}, ${seconds} s ━━\n${out}`,
        );
        done.push({ ...job, ok, seconds, counts: counts(out), failures: ok ? "" : failingTests(out) });
        resolve();
      });
    });
  const pending = [...jobs];
  await new Promise((allDone) => {
    const next = () => {
      if (pending.length === 0 && running.size === 0) return allDone();
      while (running.size < slots) {
        // The workbench files are the run's longest lane: one starts whenever it may, the others fill
        // in. Once only workbench files are left, they share every slot (the lane would otherwise
        // run alone on a machine with a core to spare for the run's last minutes).
        const wb = [...running].filter((j) => j.workbench).length;
        const wbLimit = pending.some((j) => !j.workbench) ? workbenchSlots : Math.max(workbenchSlots, slots);
        const first = pending.findIndex((j) => j.workbench && wb < wbLimit && mayStart(j));
        const i = first >= 0 ? first : pending.findIndex((j) => !j.workbench && mayStart(j));
        if (i < 0) break;
        const [job] = pending.splice(i, 1);
        running.add(job);
        void run(job).then(() => {
          running.delete(job);
          next();
        });
      }
    };
    peersReady.then(
      () => {
        peers = true;
        next();
      },
      (err) => {
        for (const c of children) c.kill("SIGTERM");
        process.exit(err.status ?? 1);
      },
    );
    next();
  });

  // Each file's time: printed (slowest first) and kept for the next run's order.
  const times = Object.fromEntries(done.flatMap((j) => (j.files.length === 1 ? [[j.name, j.seconds]] : [])));
  const path = join(root, ".cache/test-durations.json");
  mkdirSync(join(root, ".cache"), { recursive: true });
  const before = existsSync(path) ? JSON.parse(readFileSync(path, "utf8")) : {};
  writeFileSync(path, `${JSON.stringify({ ...before, ...times }, null, 2)}\n`);
  const total = (k) => done.reduce((t, j) => t + (j.counts[k] ?? 0), 0);
  console.error(`\n== each test runner's time (${path}), slowest first ==`);
  for (const j of [...done].sort((a, b) => b.seconds - a.seconds))
    console.error(`${String(j.seconds).padStart(6)} s  ${j.ok ? "  " : "✖ "}${j.name}`);
  const failed = done.filter((j) => !j.ok);
  console.error(
    `\nnpm test: ${total("tests")} tests, ${total("pass")} passed, ${total("fail")} failed, ${total("cancelled")} cancelled, ${total("skipped")} skipped; ${done.length} runners in ${Math.round((Date.now() - started) / 1000)} s${failed.length ? `; failed: ${failed.map((j) => j.name).join(", ")}` : ""}`,
  );
  return {
    status: failed.length === 0 ? 0 : 1,
    failures: failed.map((j) => `\n━━ ${j.name}: what failed ━━\n${j.failures}`).join(""),
  };
}

/**
 * The runner's own "failing tests" section (each failed test with its error), without the stack
 * frames of Node's internals; what it printed when it ended with no such section (a crash, a
 * timeout), its last lines.
 */
function failingTests(out) {
  const at = out.lastIndexOf("✖ failing tests:");
  const text = at >= 0 ? out.slice(at) : out.split("\n").slice(-60).join("\n");
  const lines = text.split("\n").filter((l) => !/^\s+at (node:|async node:|.*\(node:)/.test(l));
  return lines.length > 200
    ? `${lines.slice(0, 200).join("\n")}\n... (${lines.length - 200} more lines: the file's whole output is above)`
    : lines.join("\n");
}

// The install tests and the full run's smoke suite against the binary need it compiled: compile it first.
const full = filters.length === 0 && !process.env.CCB_TEST_BIN && !unit;
compileFor(files, { full });

// The full run also proves the other runtimes: the smoke suite against the Bun-compiled binary
// (CCB_TEST_BIN) and under Deno (CCB_TEST_RUNTIME=deno: `deno run -A dist/node/main.mjs`), each a
// runner scheduled beside the files (not after them, with a core idle).
const smoke = full ? files.filter((f) => f.includes("smoke")) : [];
const otherRuntimes =
  smoke.length === 0
    ? []
    : [
        {
          name: "smoke suite against the compiled binary dist/ccb",
          files: smoke,
          env: { CCB_TEST_BIN: process.env.CCB_COMPILED_BIN ?? join(root, "dist/ccb") },
        },
        {
          name: "smoke suite under Deno (deno run -A dist/node/main.mjs)",
          files: smoke,
          env: { CCB_TEST_RUNTIME: "deno" },
        },
      ];
/** The failed tests and their errors (`failures`), printed last: the end of a long run's output is what is read first. */
const { status, failures } = unit
  ? { status: runTests(files, unitEnv()), failures: "" }
  : await runScheduled(files, peersReady, otherRuntimes);
if (failures) console.error(`\n== the failed tests again, with their errors ==${failures}`);
process.exit(status);
