// The ACP Registry entry: agent.json validates against ccb's schema of the registry's format, and
// the checks fail on the mistakes they exist for (controls); the icon follows the registry's rules.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, it } from "node:test";
import { repoRoot } from "../../helpers/cli.ts";

const require = createRequire(import.meta.url);
const Ajv = require("ajv") as new (
  o: object,
) => { compile(s: object): ((d: unknown) => boolean) & { errors?: unknown[] } };
const read = (f: string) => JSON.parse(readFileSync(join(repoRoot, f), "utf8"));
const { agentJson, iconProblems, registryPlatform } = (await import(join(repoRoot, "scripts/acp-registry.mjs"))) as {
  agentJson(pkg: object, targets?: object[]): any;
  iconProblems(svg: string): string[];
  registryPlatform(t: object): string | undefined;
};

describe("ACP Registry entry", () => {
  const validate = new Ajv({ strict: false, validateFormats: false }).compile(read("schemas/acp-agent.schema.json"));
  const pkg = read("package.json");

  it("agent.json from package.json validates; broken copies do not (controls)", () => {
    const agent = agentJson(pkg);
    assert.equal(validate(agent), true, JSON.stringify(validate.errors));
    assert.equal(agent.id, "ccb");
    assert.equal(agent.version, pkg.version);
    assert.deepEqual(agent.distribution.npx, { package: `ccb@${pkg.version}`, args: ["acp"] });
    assert.deepEqual(Object.keys(agent.distribution.binary).sort(), [
      "darwin-aarch64",
      "darwin-x86_64",
      "linux-aarch64",
      "linux-x86_64",
    ]);
    assert.equal(
      agent.distribution.binary["linux-x86_64"].archive,
      `https://github.com/ccb-dev/ccb/releases/download/v${pkg.version}/ccb-v${pkg.version}-linux-x64.tar.gz`,
    );
    assert.equal(agent.distribution.binary["linux-x86_64"].cmd, "./ccb");
    assert.equal(validate({ ...agent, id: "CCB" }), false, "an id with capitals");
    assert.equal(validate({ ...agent, version: "next" }), false, "a version that is not semver");
    const { distribution: _, ...noDist } = agent;
    assert.equal(validate(noDist), false, "no distribution");
    assert.equal(
      validate({ ...agent, distribution: { binary: { "linux-x64": agent.distribution.binary["linux-x86_64"] } } }),
      false,
      "a platform key the registry does not know",
    );
    assert.equal(validate({ ...agent, distribution: { npx: { args: ["acp"] } } }), false, "npx without a package");
  });

  it("targets map to the registry's platform keys; musl has none", () => {
    assert.equal(registryPlatform({ os: "linux", cpu: "x64", libc: "glibc", exe: "ccb" }), "linux-x86_64");
    assert.equal(registryPlatform({ os: "linux", cpu: "x64", libc: "musl", exe: "ccb" }), undefined);
    assert.equal(registryPlatform({ os: "win32", cpu: "arm64", exe: "ccb.exe" }), "windows-aarch64");
    const win = agentJson(pkg, [{ key: "win32-x64", os: "win32", cpu: "x64", exe: "ccb.exe" }]);
    assert.match(win.distribution.binary["windows-x86_64"].archive, /ccb-v[^/]+-win32-x64\.zip$/);
    assert.equal(win.distribution.binary["windows-x86_64"].cmd, "./ccb.exe");
  });

  it("the icon is 16x16 and monochrome in currentColor; icons that break a rule are caught (controls)", () => {
    const icon = readFileSync(join(repoRoot, "acp-registry/icon.svg"), "utf8");
    assert.deepEqual(iconProblems(icon), []);
    const bad = (svg: string, re: RegExp) =>
      assert.ok(
        iconProblems(svg).some((p) => re.test(p)),
        `${svg} -> ${JSON.stringify(iconProblems(svg))}`,
      );
    bad(icon.replace('fill="currentColor"', 'fill="#d97757"'), /hard-coded fill/);
    bad(icon.replace('fill="currentColor"', 'fill="red"'), /hard-coded fill/);
    bad(icon.replace('fill="currentColor"', 'style="fill: rgb(0,0,0)"'), /in a style|colour literal/);
    bad(icon.replace('fill="currentColor"', 'stroke="black"'), /hard-coded stroke/);
    bad(icon.replace('viewBox="0 0 16 16"', 'viewBox="0 0 24 24"'), /viewBox must be 16x16/);
    bad(icon.replace('width="16"', 'width="32"'), /width must be 16/);
    bad(icon.replace(' viewBox="0 0 16 16"', ""), /needs a viewBox/);
    bad(icon.replace('fill="currentColor"', 'fill="none"'), /must paint with currentColor/);
    bad(icon.replace("<path", '<image href="x.png"/><path'), /embedded images/);
  });
});
