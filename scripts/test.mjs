#!/usr/bin/env node
// `npm test`: builds, then runs every test/**/*.test.ts with Node's test runner (through tsx).
// Arguments filter test files by substring: `npm test -- files git`.
// `--unit` (`npm run test:unit`): the edit-test loop, test/unit only, with no Debian check, no peers,
// no compiled binary: the quick build (dist/, ~1 s) and the unit tests, which start no peer.
// Before any test: the Debian packages are checked (one line names the apt-get command) and the npm-side
// peers are provisioned (scripts/setup-peers.sh, cached; CCB_SKIP_PEERS=1 skips it).
// CCB_TEST_BIN=/path/to/ccb makes the end-to-end tests spawn that binary (e.g. the Bun build);
// CCB_TEST_RUNTIME=deno runs them with `deno run -A dist/node/main.mjs`.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

// `npm test` hands this script the parent npm's configuration as npm_* variables (npm_config_user_agent
// names the parent's Node, npm_config_* its flags). Nothing started from here inherits them: every nested
// npm (the peers' installs, the install tests' registries) reads its own .npmrc and flags, as it would
// in a shell. This is why `npm test` and `node scripts/test.mjs` behave the same.
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
const filters = process.argv.slice(2).filter((a) => !a.startsWith("-"));

const unit = process.argv.includes("--unit");
const passThrough = process.argv.slice(2).filter((a) => a.startsWith("-") && a !== "--unit");

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

const files = walk(join(root, unit ? "test/unit" : "test"))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${filters.join(", ")}`);
  process.exit(1);
}

// The Debian packages the suite talks to, checked before any test runs: one line says what to install.
// `node scripts/test.mjs --debian-packages` prints them all (what .ci/run installs: the same list).
const SYSTEM = [
  { cmd: "rg", pkg: "ripgrep" },
  { cmd: process.env.CHROME_PATH ?? "chromium", pkg: "chromium" },
  { cmd: "git", pkg: "git" },
  { cmd: "script", pkg: "util-linux" },
  { cmd: "zip", pkg: "zip" },
  { cmd: "ps", pkg: "procps" },
  { cmd: "tmux", pkg: "tmux" },
  { cmd: "useradd", pkg: "passwd" },
  { file: "/usr/include/krb5.h", pkg: "libkrb5-dev" },
  // the Kubernetes manifests (kubectl kustomize) and the container image test (podman builds and runs
  // the image; crun refuses hybrid cgroups, so runc; mmdebstrap makes the Debian base with no registry)
  { cmd: "kubectl", pkg: "kubectl" },
  { cmd: "podman", pkg: "podman" },
  { cmd: "runc", pkg: "runc" },
  { file: "/usr/lib/cni/bridge", pkg: "containernetworking-plugins" },
  { cmd: "iptables", pkg: "iptables" },
  { cmd: "mmdebstrap", pkg: "mmdebstrap" },
];
if (process.argv.includes("--debian-packages")) {
  process.stdout.write(`${[...new Set(SYSTEM.map((s) => s.pkg))].join(" ")}\n`);
  process.exit(0);
}
const onPath = (cmd) =>
  cmd.includes("/")
    ? existsSync(cmd)
    : [...(process.env.PATH ?? "").split(":"), "/usr/sbin", "/sbin"].some((d) => d && existsSync(join(d, cmd)));
const missing = SYSTEM.filter((s) => (s.file ? !existsSync(s.file) : !onPath(s.cmd))).map((s) => s.pkg);
if (missing.length > 0 && !unit) {
  console.error(
    `npm test needs Debian packages that are missing: run \`apt-get update && apt-get install -y --no-install-recommends ${[...new Set(missing)].join(" ")}\` (as root), then npm test again.`,
  );
  process.exit(1);
}

// The npm-side peers (Node 24, code-server, the Claude Code CLI, verdaccio, pnpm): installed once into
// CCB_PEERS_DIR (default .cache/peers), kept while their pinned versions match.
if (!process.env.CCB_SKIP_PEERS && !unit) {
  const p = spawnSync("bash", [join(root, "scripts/setup-peers.sh")], { stdio: "inherit", cwd: root, env: cleanEnv });
  if (p.status !== 0) {
    console.error("scripts/setup-peers.sh failed: the test peers could not be installed (see above).");
    process.exit(p.status ?? 1);
  }
}

if (!process.env.CCB_SKIP_BUILD) {
  const b = spawnSync(process.execPath, [join(root, "scripts/build.mjs")], {
    stdio: "inherit",
    cwd: root,
    env: cleanEnv,
  });
  if (b.status !== 0) process.exit(b.status ?? 1);
}

function runTests(list, env) {
  const r = spawnSync(
    process.execPath,
    [
      "--import",
      "tsx",
      "--test",
      "--test-reporter=spec",
      "--test-concurrency=1",
      "--test-timeout=600000",
      ...passThrough,
      ...list,
    ],
    {
      stdio: "inherit",
      cwd: root,
      // A workbench host stops as soon as its last front end leaves (not 600 s later), so hosts do not
      // pile up between tests; the tests of the grace period set their own.
      env: { CCB_WORKBENCH_GRACE: "0", ...cleanEnv, CCB_REPO_ROOT: root, ...env },
    },
  );
  return r.status ?? 1;
}

// The install tests and the full run's second pass need the compiled binary: compile it first.
const full = filters.length === 0 && !process.env.CCB_TEST_BIN && !unit;
if ((full || files.some((f) => f.includes("install-"))) && !process.env.CCB_COMPILED_BIN) {
  const c = spawnSync(process.execPath, [join(root, "scripts/compile.mjs")], {
    stdio: "inherit",
    cwd: root,
    env: cleanEnv,
  });
  if (c.status !== 0) process.exit(c.status ?? 1);
}

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
