// The release tarball, made by the script release.yml runs (scripts/release-assets.mjs) with the
// workbench runtime inside (a live OpenVSCode-shaped archive, test/fixtures/runtime/live.ts, checked
// against its pin as the release checks the real one): checked against SHA256SUMS, extracted into an
// empty folder, and run: `ccb serve` with no runtime flag gets a live bridge from the runtime it
// carries. A tampered archive fails the check.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { LIVE_FILE, LIVE_VERSION, liveRuntime } from "../fixtures/runtime/live.ts";
import { repoRoot } from "../helpers/cli.ts";
import { compiledBinary, liveBridge, sha256File } from "../helpers/install.ts";
import { homeEnv, tmpdirFixture } from "../helpers/tmp.ts";

const version = (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string }).version;

describe("release tarball", { timeout: 600_000 }, () => {
  const dir = tmpdirFixture({ prefix: "ccb-tarball-" });
  after(() => dir.cleanup());
  const live = liveRuntime();
  const manifest = join(dir.path, "runtime-manifest.json");
  writeFileSync(manifest, JSON.stringify(live.manifest));
  const out = join(dir.path, "release");
  const name = `ccb-v${version}-linux-x64.tar.gz`;

  it("is built by scripts/release-assets.mjs and matches SHA256SUMS", () => {
    const script = join(repoRoot, "scripts/release-assets.mjs");
    execFileSync(
      process.execPath,
      [script, "archive", "--target", "linux-x64", "--binary", compiledBinary(), "--runtime", live.file, "--out", out],
      { env: { ...process.env, CCB_RUNTIME_MANIFEST: manifest } },
    );
    execFileSync(process.execPath, [script, "sums", "--out", out]);
    assert.deepEqual(readdirSync(out).sort(), ["SHA256SUMS", name]);
    const sums = readFileSync(join(out, "SHA256SUMS"), "utf8");
    assert.match(sums, new RegExp(`^[0-9a-f]{64}  ${name.replaceAll(".", "\\.")}\\n$`));
    execFileSync("sha256sum", ["-c", "SHA256SUMS"], { cwd: out });
  });

  it("extracts to the same binary, with its license files, and runs from an empty folder", () => {
    const x = join(dir.path, "x");
    mkdirSync(x);
    execFileSync("tar", ["-xzf", join(out, name), "-C", x]);
    assert.deepEqual(readdirSync(x).sort(), ["LICENSE", "THIRD_PARTY_NOTICES", "ccb", "runtime"]);
    assert.deepEqual(readdirSync(join(x, "runtime")), [LIVE_FILE]);
    assert.equal(sha256File(join(x, "runtime", LIVE_FILE)), sha256File(live.file), "the runtime archive unchanged");
    assert.equal(
      sha256File(join(x, "ccb")),
      sha256File(compiledBinary()),
      "the tarball carries the compiled binary unchanged",
    );
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", ...homeEnv(join(dir.path, "home")) };
    assert.equal(execFileSync(join(x, "ccb"), ["--version"], { cwd: x, env, encoding: "utf8" }).trim(), version);
    const help = spawnSync(join(x, "ccb"), ["serve", "--help"], { cwd: x, env, encoding: "utf8" });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /--workspace/);
  });

  it("runs the workbench it carries: no runtime flag, no download, a live bridge", async () => {
    const x = join(dir.path, "x");
    const home = join(dir.path, "home-live");
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      ...homeEnv(home),
      CCB_RUNTIME_MANIFEST: manifest,
    };
    const st = JSON.parse(execFileSync(join(x, "ccb"), ["runtime", "status", "--json"], { env, encoding: "utf8" }));
    assert.equal(st.inUse, "openvscode-package");
    assert.equal(st.packaged.via, "release tarball");
    const stderr = await liveBridge(join(x, "ccb"), x, home, {
      runtimeArgs: [],
      env: { CCB_RUNTIME_MANIFEST: manifest },
    });
    assert.match(stderr, new RegExp(`runtime: OpenVSCode Server ${LIVE_VERSION} \\(linux-x64\\) from release tarball`));
    assert.match(stderr, /bridge: extension host \d+ serves/);
  });

  it("a runtime archive that is not the pinned one is refused when the tarball is made", () => {
    const bad = join(dir.path, "bad", LIVE_FILE);
    mkdirSync(join(dir.path, "bad"));
    writeFileSync(bad, "not the runtime");
    const r = spawnSync(
      process.execPath,
      [
        join(repoRoot, "scripts/release-assets.mjs"),
        "archive",
        "--target",
        "linux-x64",
        "--binary",
        compiledBinary(),
        "--runtime",
        bad,
        "--out",
        join(dir.path, "bad-out"),
      ],
      { env: { ...process.env, CCB_RUNTIME_MANIFEST: manifest }, encoding: "utf8" },
    );
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /refusing to package/);
  });

  it("a tampered archive fails the SHA256SUMS check (control)", () => {
    appendFileSync(join(out, name), "x");
    const r = spawnSync("sha256sum", ["-c", "SHA256SUMS"], { cwd: out, encoding: "utf8" });
    assert.notEqual(r.status, 0);
    assert.match(r.stdout, /FAILED/);
  });
});
