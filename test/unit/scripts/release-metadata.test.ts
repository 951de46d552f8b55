// server.json and the release checks: the committed files pass, and the checks do fail on the
// mistakes they exist for (schema violations, disagreeing versions, unpinned actions).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
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

describe("release metadata", () => {
  const validate = new Ajv({ strict: false, validateFormats: false }).compile(read("schemas/mcp-server.schema.json"));

  it("scripts/check-release.mjs passes on the repository", () => {
    const r = spawnSync(process.execPath, [join(repoRoot, "scripts/check-release.mjs")], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
  });

  it("server.json validates; broken copies do not (controls)", () => {
    const server = read("server.json");
    assert.equal(validate(server), true, JSON.stringify(validate.errors));
    assert.equal(validate({ ...server, name: "ccb" }), false, "a name without a namespace");
    assert.equal(validate({ ...server, description: "x".repeat(101) }), false, "a description over 100 characters");
    const pkgs = structuredClone(server.packages);
    pkgs[0].version = "latest";
    assert.equal(validate({ ...server, packages: pkgs }), false, "a package version of latest");
  });

  it("server.json agrees with package.json", () => {
    const server = read("server.json");
    const pkg = read("package.json");
    assert.equal(server.name, pkg.mcpName);
    assert.equal(server.version, pkg.version);
    assert.equal(server.packages[0].identifier, pkg.name);
    assert.equal(server.packages[0].version, pkg.version);
    assert.deepEqual(
      server.packages[0].packageArguments.slice(0, 2).map((a: { value: string }) => a.value),
      ["serve", "--stdio"],
    );
  });
});
