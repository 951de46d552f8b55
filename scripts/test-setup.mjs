// What `scripts/test.mjs` (npm test) and `scripts/soak.mjs` (npm run test:soak) share: the test files a
// filter names, the Debian packages checked, the peers provisioned, the build, and the test runner's
// command line and environment.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const root = fileURLToPath(new URL("..", import.meta.url));

// `npm test` hands its script the parent npm's configuration as npm_* variables (npm_config_user_agent
// names the parent's Node, npm_config_* its flags). Nothing started from here inherits them: every nested
// npm (the peers' installs, the install tests' registries) reads its own .npmrc and flags, as it would
// in a shell. This is why `npm test` and `node scripts/test.mjs` behave the same.
export const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));

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

/** The test files (relative to the repository) under test/ (or test/unit) whose path contains a filter. */
export function testFiles(filters, { unit = false } = {}) {
  return walk(join(root, unit ? "test/unit" : "test"))
    .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
    .sort();
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

/** Every Debian package the suite needs, once each. */
export const debianPackages = () => [...new Set(SYSTEM.map((s) => s.pkg))];

const onPath = (cmd) =>
  cmd.includes("/")
    ? existsSync(cmd)
    : [...(process.env.PATH ?? "").split(":"), "/usr/sbin", "/sbin"].some((d) => d && existsSync(join(d, cmd)));

/** Exits with the apt-get line to run when a Debian package is missing. */
export function checkDebian() {
  const missing = SYSTEM.filter((s) => (s.file ? !existsSync(s.file) : !onPath(s.cmd))).map((s) => s.pkg);
  if (missing.length === 0) return;
  console.error(
    `npm test needs Debian packages that are missing: run \`apt-get update && apt-get install -y --no-install-recommends ${[...new Set(missing)].join(" ")}\` (as root), then npm test again.`,
  );
  process.exit(1);
}

// The npm-side peers (Node 24, code-server, the Claude Code CLI, verdaccio, pnpm): installed once into
// CCB_PEERS_DIR (default .cache/peers), kept while their pinned versions match. CCB_SKIP_PEERS=1 skips it.
export function setupPeers() {
  if (process.env.CCB_SKIP_PEERS) return;
  const p = spawnSync("bash", [join(root, "scripts/setup-peers.sh")], { stdio: "inherit", cwd: root, env: cleanEnv });
  if (p.status !== 0) {
    console.error("scripts/setup-peers.sh failed: the test peers could not be installed (see above).");
    process.exit(p.status ?? 1);
  }
}

/**
 * setupPeers in the background (a full `npm test`: the unit tests, which start no peer, run while the
 * peers install; most of that install is one core compiling code-server's native modules, and the
 * machine has two). Resolves when the peers are ready; rejects with the exit status when they could
 * not be installed.
 */
export function setupPeersInBackground() {
  if (process.env.CCB_SKIP_PEERS) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const p = spawn("bash", [join(root, "scripts/setup-peers.sh")], { stdio: "inherit", cwd: root, env: cleanEnv });
    p.on("error", (err) => reject(Object.assign(err, { status: 1 })));
    p.on("close", (code, signal) => {
      if (code === 0) return resolve();
      console.error("scripts/setup-peers.sh failed: the test peers could not be installed (see above).");
      reject(Object.assign(new Error(`setup-peers exited ${code ?? signal}`), { status: code ?? 1 }));
    });
  });
}

/** `node scripts/<script>` with the clean environment; exits with its status when it fails. */
export function runScript(script) {
  const b = spawnSync(process.execPath, [join(root, "scripts", script)], {
    stdio: "inherit",
    cwd: root,
    env: cleanEnv,
  });
  if (b.status !== 0) process.exit(b.status ?? 1);
}

/**
 * The install tests (and `npm test`'s full run, for its smoke suite against it) need the Bun-compiled binary
 * dist/ccb: compile it, unless CCB_COMPILED_BIN names one.
 */
export function compileFor(files, { full = false } = {}) {
  if ((full || files.some((f) => f.includes("install-"))) && !process.env.CCB_COMPILED_BIN) runScript("compile.mjs");
}

/** The build the tests run against (dist/), unless CCB_SKIP_BUILD is set. */
export function build() {
  if (!process.env.CCB_SKIP_BUILD) runScript("build.mjs");
}

/** Node's test runner over `list` (through tsx), one file at a time: its argv. */
export function testRunnerArgs(list, passThrough = []) {
  return [
    "--import",
    "tsx",
    // every file keeps what a failed test needs to be read without running it again
    "--import",
    pathToFileURL(join(root, "test/helpers/keep-failed.ts")).href,
    "--test",
    "--test-reporter=spec",
    "--test-concurrency=1",
    "--test-timeout=600000",
    ...passThrough,
    ...list,
  ];
}

/** The tests' environment: `env` over the clean one. */
export function testEnv(env = {}) {
  // A workbench host stops as soon as its last front end leaves (not 600 s later), so hosts do not
  // pile up between tests; the tests of the grace period set their own.
  return { CCB_WORKBENCH_GRACE: "0", ...cleanEnv, CCB_REPO_ROOT: root, ...env };
}

/**
 * A file that runs a real workbench runtime or a browser (code-server, headless or a person's
 * Chromium): `npm test` runs at most one such file at a time (`CCB_TEST_WORKBENCH_JOBS`) while
 * lighter ones wait, so a browser test meets about the load a soak's `--load` gives, not two
 * workbenches fighting over two cores; the short workbench files left at the run's end run two at a
 * time (about 2 minutes of a full run).
 */
export function isWorkbenchFile(file) {
  const text = readFileSync(join(root, file), "utf8");
  // A file whose time is its own work, with a workbench only for a moment at its end, says so.
  if (text.includes("npm test: not a workbench file")) return false;
  // (the e2e fixture starts one when asked: `workbench: "serve"`, `workbench: "ide"`, `person: true`)
  return /helpers\/(workbench|person-page|ide-workbench|proc-scan)\.ts|launchChromium|codeServerArgs|workbench: "(serve|ide)"|person: true/.test(
    text,
  );
}

/**
 * Seconds each test file took in a full run on a 2-core machine (`test/durations.json`, what the
 * last full run printed; a file not listed counts as 10 s): `npm test` starts the longest first, so
 * no long file starts last and the run's tail is short.
 */
export function expectedSeconds() {
  const p = join(root, "test/durations.json");
  return existsSync(p) ? JSON.parse(readFileSync(p, "utf8")) : {};
}
