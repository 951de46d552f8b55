// The compiled binary is complete: copied ALONE into an empty folder outside the checkout, with a
// fresh HOME, it unpacks its embedded files into its cache (verified by SHA-256) and runs a live
// workbench bridge with code-server. A tampered cache is detected and replaced.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { compiledBinary, liveBridge } from "../helpers/install.ts";
import { homeEnv, tmpdirFixture } from "../helpers/tmp.ts";

describe("the compiled binary alone, outside the checkout", () => {
  const dir = tmpdirFixture({ prefix: "ccb-bin-alone-" });
  after(() => dir.cleanup());
  const bin = join(dir.path, "bin", "ccb");
  const home = join(dir.path, "home");

  it("runs from an empty folder and unpacks its assets into the cache", () => {
    execFileSync("mkdir", ["-p", join(dir.path, "bin")]);
    copyFileSync(compiledBinary(), bin);
    execFileSync("chmod", ["755", bin]);
    assert.deepEqual(readdirSync(join(dir.path, "bin")), ["ccb"]);
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", ...homeEnv(home) };
    const version = execFileSync(bin, ["--version"], { cwd: dir.path, env, encoding: "utf8" }).trim();
    assert.equal(
      version,
      JSON.parse(readFileSync(join(process.env.CCB_REPO_ROOT ?? ".", "package.json"), "utf8")).version,
    );
    // `--version` is answered by the binary's entry before the pack is opened; anything that runs
    // ccb's code (here `--help`) unpacks it.
    execFileSync(bin, ["--help"], { cwd: dir.path, env, encoding: "utf8" });
    const packs = readdirSync(join(home, "cache/ccb/assets"));
    assert.equal(packs.length, 1, `one content-addressed folder: ${packs}`);
    assert.match(packs[0] as string, /^[0-9a-f]{64}$/);
    const ext = readdirSync(join(home, "cache/ccb/assets", packs[0] as string, "bridge-extension"));
    assert.ok(
      ext.some((n) => n.startsWith("ccb.ccb-bridge-")),
      `bridge extension unpacked: ${ext}`,
    );
  });

  it("replaces a tampered unpacked file instead of running it", () => {
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", ...homeEnv(home) };
    const pack = join(home, "cache/ccb/assets", readdirSync(join(home, "cache/ccb/assets"))[0] as string);
    const main = join(pack, "code/main.js");
    const good = readFileSync(main);
    // An attacker-controlled main.js would print PWNED; the binary must notice the hash mismatch.
    writeFileSync(main, 'console.log("PWNED"); process.exit(0);\n');
    const out = execFileSync(bin, ["--help"], { cwd: dir.path, env, encoding: "utf8" });
    assert.doesNotMatch(out, /PWNED/);
    assert.match(out, /Usage: ccb/);
    assert.deepEqual(readFileSync(main), good, "the original file is restored");
  });

  it("gets a live bridge with code-server", async () => {
    const stderr = await liveBridge(bin, dir.path, home);
    assert.match(stderr, /bridge: extension host \d+ serves/);
    assert.doesNotMatch(stderr, /DEP0169|url\.parse\(\)/, "no url.parse deprecation warning");
  });
});
