#!/usr/bin/env node
// `npm test`: builds, then runs every test/**/*.test.ts with Node's test runner (through tsx).
// Arguments filter test files by substring: `npm test -- files git`.
// CCB_TEST_BIN=/path/to/ccb makes the end-to-end tests spawn that binary (e.g. the Bun build).
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const filters = process.argv.slice(2).filter((a) => !a.startsWith("-"));
const passThrough = process.argv.slice(2).filter((a) => a.startsWith("-"));

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name === "fixtures") continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else if (name.endsWith(".test.ts")) out.push(relative(root, p));
  }
  return out;
}

const files = walk(join(root, "test"))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${filters.join(", ")}`);
  process.exit(1);
}

if (!process.env.CCB_SKIP_BUILD) {
  const b = spawnSync(process.execPath, [join(root, "scripts/build.mjs")], { stdio: "inherit", cwd: root });
  if (b.status !== 0) process.exit(b.status ?? 1);
}

function runTests(list, env) {
  const r = spawnSync(
    process.execPath,
    ["--import", "tsx", "--test", "--test-reporter=spec", "--test-concurrency=1", "--test-timeout=600000", ...passThrough, ...list],
    { stdio: "inherit", cwd: root, env: { ...process.env, CCB_REPO_ROOT: root, ...env } },
  );
  return r.status ?? 1;
}

let status = runTests(files, {});

// The full run also proves the Bun-compiled single binary: compile it and run the smoke suite
// against it (CCB_TEST_BIN makes test/helpers/cli.ts spawn the binary instead of Node).
if (filters.length === 0 && !process.env.CCB_TEST_BIN) {
  const c = spawnSync(process.execPath, [join(root, "scripts/compile.mjs")], { stdio: "inherit", cwd: root });
  if (c.status !== 0) process.exit(c.status ?? 1);
  const smoke = files.filter((f) => f.includes("smoke"));
  if (smoke.length > 0) {
    console.error("\n== smoke suite against the compiled binary dist/ccb ==");
    status = runTests(smoke, { CCB_TEST_BIN: join(root, "dist/ccb") }) || status;
  }
}
process.exit(status);
