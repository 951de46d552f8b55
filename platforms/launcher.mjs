#!/usr/bin/env node
// The `ccb` command of the npm dispatcher package: finds the compiled binary of this platform in
// its platform package (an optionalDependency, installed by npm/pnpm/yarn/bun for the matching
// os/cpu/libc only) and runs it with the same arguments and stdio. No install scripts.
// Copied verbatim into the generated dispatcher package by platforms/generate.mjs.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { constants } from "node:os";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);
const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const exeName = process.platform === "win32" ? "ccb.exe" : "ccb";

function isMusl() {
  if (process.platform !== "linux") return false;
  try {
    // glibcVersionRuntime is absent from the report on musl.
    return !process.report.getReport().header.glibcVersionRuntime;
  } catch {
    return existsSync("/etc/alpine-release");
  }
}

/** True for an x64 Node running under Rosetta on an Apple silicon Mac. */
function isRosetta() {
  if (process.platform !== "darwin" || process.arch !== "x64") return false;
  try {
    return execFileSync("sysctl", ["-in", "sysctl.proc_translated"], { encoding: "utf8" }).trim() === "1";
  } catch {
    return false;
  }
}

function platformKeys() {
  const base = `${process.platform}-${process.arch}${isMusl() ? "-musl" : ""}`;
  // Under Rosetta prefer the native arm64 build when it is installed.
  return isRosetta() ? ["darwin-arm64", base] : [base];
}

function findBinary() {
  const override = process.env.CCB_BINARY;
  if (override) {
    if (!existsSync(override)) fail(`CCB_BINARY points to ${override}, which does not exist.`);
    return override;
  }
  const known = Object.keys(pkg.optionalDependencies ?? {});
  const keys = platformKeys();
  for (const key of keys) {
    const name = `${pkg.name}-${key}`;
    try {
      const dir = dirname(require.resolve(`${name}/package.json`));
      const bin = join(dir, "bin", exeName);
      if (existsSync(bin)) return bin;
    } catch {
      /* not installed: try the next key, then explain */
    }
  }
  const key = keys[keys.length - 1];
  const name = `${pkg.name}-${key}`;
  const release = releaseUrl();
  if (!known.includes(name)) {
    fail(
      `ccb ${pkg.version} has no build for this platform (${key}).\n` +
        `Builds: ${known.map((n) => n.slice(pkg.name.length + 1)).join(", ")}.\n` +
        (process.platform === "win32" ? "On Windows, install and run ccb inside WSL2.\n" : "") +
        `Or run from source (Node >= 20): git clone the repository, npm install, then node bin/ccb.mjs` +
        (release ? `\nReleases: ${release}` : ""),
    );
  }
  fail(
    `The package ${name}@${pkg.version}, which holds ccb's binary for ${key}, is not installed.\n` +
      `It is an optional dependency: it is skipped by --omit=optional / --no-optional, by\n` +
      `npm_config_optional=false, or when the lock file was made on another platform with an old npm.\n` +
      `Reinstall with optional dependencies (npm install ${pkg.name}@${pkg.version} --include=optional),\n` +
      `or download the ${key} tarball of the release${release ? ` (${release})` : ""} and set CCB_BINARY to the ccb binary inside.`,
  );
}

function releaseUrl() {
  const repo = typeof pkg.repository === "string" ? pkg.repository : pkg.repository?.url;
  const m = repo && /github\.com[/:]([^/]+\/[^/.]+)/.exec(repo);
  return m ? `https://github.com/${m[1]}/releases/tag/v${pkg.version}` : undefined;
}

function fail(message) {
  process.stderr.write(`ccb: ${message}\n`);
  process.exit(1);
}

const bin = findBinary();
// spawn + forwarding rather than spawnSync: a signal sent to this launcher alone (an MCP host
// stopping `ccb serve`) must reach the real process too. The handlers go in before the spawn: the
// real process can start and answer before this one runs its next line (a loaded machine), and a
// signal sent in that moment would end this launcher by default and leave the real process running.
// Node runs a signal's handler on its event loop, so `child` is set by the time one runs.
let child;
const forward = (signal) => () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill(signal);
};
for (const s of ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"]) {
  if (process.platform === "win32" && s !== "SIGINT") continue;
  process.on(s, forward(s));
}
child = spawn(bin, process.argv.slice(2), { stdio: "inherit", windowsHide: true });
child.on("error", (err) => fail(`cannot run ${bin}: ${err.message}`));
child.on("exit", (code, signal) => {
  // A child killed by a signal exits like a shell reports it: 128 + the signal number.
  process.exit(signal ? 128 + (constants.signals[signal] ?? 0) : (code ?? 1));
});
