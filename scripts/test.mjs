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
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import {
  build,
  checkDebian,
  debianPackages,
  root,
  runScript,
  setupPeers,
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
if (!unit) {
  checkDebian();
  setupPeers();
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

// The install tests and the full run's second pass need the compiled binary: compile it first.
const full = filters.length === 0 && !process.env.CCB_TEST_BIN && !unit;
if ((full || files.some((f) => f.includes("install-"))) && !process.env.CCB_COMPILED_BIN) runScript("compile.mjs");

let status = runTests(files, {});

// The full run also proves the other runtimes: the smoke suite against the Bun-compiled binary
// (CCB_TEST_BIN) and under Deno (CCB_TEST_RUNTIME=deno: `deno run -A dist/node/main.mjs`).
if (full) {
  const smoke = files.filter((f) => f.includes("smoke"));
  if (smoke.length > 0) {
    console.error("\n== smoke suite against the compiled binary dist/ccb ==");
    status = runTests(smoke, { CCB_TEST_BIN: process.env.CCB_COMPILED_BIN ?? join(root, "dist/ccb") }) || status;
    console.error("\n== smoke suite under Deno (deno run -A dist/node/main.mjs) ==");
    status = runTests(smoke, { CCB_TEST_RUNTIME: "deno" }) || status;
  }
}
process.exit(status);
