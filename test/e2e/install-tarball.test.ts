// The release tarball, made by the script release.yml runs (scripts/release-assets.mjs): checked
// against SHA256SUMS, extracted into an empty folder, and run. A tampered archive fails the check.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { repoRoot } from "../helpers/cli.ts";
import { compiledBinary, homeEnv, sha256File } from "../helpers/install.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

const version = (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string }).version;

describe("release tarball", { timeout: 180_000 }, () => {
  const dir = tmpdirFixture({ prefix: "ccb-tarball-" });
  after(() => dir.cleanup());
  const out = join(dir.path, "release");
  const name = `ccb-v${version}-linux-x64.tar.gz`;

  it("is built by scripts/release-assets.mjs and matches SHA256SUMS", () => {
    const script = join(repoRoot, "scripts/release-assets.mjs");
    execFileSync(process.execPath, [
      script,
      "archive",
      "--target",
      "linux-x64",
      "--binary",
      compiledBinary(),
      "--out",
      out,
    ]);
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
    assert.deepEqual(readdirSync(x).sort(), ["LICENSE", "THIRD_PARTY_NOTICES", "ccb"]);
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

  it("a tampered archive fails the SHA256SUMS check (control)", () => {
    appendFileSync(join(out, name), "x");
    const r = spawnSync("sha256sum", ["-c", "SHA256SUMS"], { cwd: out, encoding: "utf8" });
    assert.notEqual(r.status, 0);
    assert.match(r.stdout, /FAILED/);
  });
});
