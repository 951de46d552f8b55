// scripts/check-layers.mjs passes on the repository, and fails on the imports it exists to stop, each
// planted in a copy of the tree: the wire (src/editor-wire) reaching up or into a package other than zod,
// the bridge extension (extension/) reaching past the wire, ccb reaching into the extension, an import circle.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { repoRoot } from "../../helpers/cli.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

function check(root?: string): { status: number | null; stderr: string } {
  const args = [join(repoRoot, "scripts/check-layers.mjs"), ...(root ? [root] : [])];
  return spawnSync(process.execPath, args, { encoding: "utf8" });
}

describe("check-layers", () => {
  it("passes on the repository", () => {
    const r = check();
    assert.equal(r.status, 0, r.stderr);
  });

  /** One copy of src/, cli/ and extension/; planted() appends a line to one file of it, checks, and puts the file back. */
  const copy = tmpdirFixture({ prefix: "ccb-layers-" });
  before(() => {
    for (const d of ["src", "cli", "extension"])
      cpSync(join(repoRoot, d), join(copy.path, d), { recursive: true, filter: (p) => !p.includes("node_modules") });
  });
  after(() => copy.cleanup());
  function planted(file: string, line: string): { status: number | null; stderr: string } {
    if (!file) return check(copy.path);
    const path = join(copy.path, file);
    const original = readFileSync(path, "utf8");
    writeFileSync(path, `${original}\n${line}\n`);
    try {
      return check(copy.path);
    } finally {
      writeFileSync(path, original);
    }
  }

  it("the copy passes unchanged, and with imports that point down (controls)", () => {
    assert.equal(planted("", "").status, 0);
    const down = [
      ["src/core/errors.ts", 'import "../editor-wire/contract.ts";'],
      ["src/platform/cdp-pipe.ts", 'import { PendingCalls } from "../editor-wire/pending.ts";'],
      ["extension/src/convert.ts", 'import "../../src/editor-wire/contract-shapes.ts";'],
      ["extension/src/convert.ts", 'import "./review/hunks.mts";'],
      ["extension/src/review/hunks.mts", 'import "../../../src/editor-wire/contract-shapes.ts";'],
    ] as const;
    for (const [file, line] of down) {
      const r = planted(file, line);
      assert.equal(r.status, 0, `${file}: ${line}\n${r.stderr}`);
    }
  });

  const cases: Array<[string, string, string, RegExp]> = [
    [
      "the wire imports the core",
      "src/editor-wire/contract.ts",
      'import { CcbError } from "../core/errors.ts";',
      /src\/editor-wire\/contract\.ts imports src\/core\/errors\.ts \(src\/editor-wire → src\/core\)/,
    ],
    [
      "the wire imports util (a side-effect import)",
      "src/editor-wire/contract-shapes.ts",
      'import "../util/secrets.ts";',
      /src\/editor-wire\/contract-shapes\.ts imports src\/util\/secrets\.ts/,
    ],
    [
      "the wire imports a package other than zod",
      "src/editor-wire/contract.ts",
      'import { WebSocket } from "ws";',
      /src\/editor-wire\/contract\.ts imports the package ws \(src\/editor-wire takes only zod\)/,
    ],
    [
      "the extension imports the core",
      "extension/src/extension.ts",
      'import { CcbError } from "../../src/core/errors.ts";',
      /extension\/src\/extension\.ts imports src\/core\/errors\.ts \(extension may import only src\/editor-wire\)/,
    ],
    [
      "the extension imports the workbench it runs in",
      "extension/src/diff.ts",
      'import type { BridgeServer } from "../../src/workbench/bridge-server.ts";',
      /extension\/src\/diff\.ts imports src\/workbench\/bridge-server\.ts/,
    ],
    [
      "the review code imports the core",
      "extension/src/review/hunks.mts",
      'export { CcbError } from "../../../src/core/errors.ts";',
      /extension\/src\/review\/hunks\.mts imports src\/core\/errors\.ts \(extension may import only src\/editor-wire\)/,
    ],
    [
      "the review code imports the bottom of ccb (util)",
      "extension/src/review/hunk-review.mts",
      'import "../../../src/util/secrets.ts";',
      /extension\/src\/review\/hunk-review\.mts imports src\/util\/secrets\.ts \(extension may import only/,
    ],
    [
      "the extension imports a file outside every unit",
      "extension/src/move.ts",
      'import "../../test/helpers/cli.ts";',
      /extension\/src\/move\.ts imports test\/helpers\/cli\.ts \(extension may import only/,
    ],
    [
      "ccb imports the extension",
      "src/workbench/bridge-server.ts",
      'import("../../extension/src/convert.ts");',
      /src\/workbench\/bridge-server\.ts imports extension\/src\/convert\.ts \(src\/workbench → extension\)/,
    ],
    [
      "the cli imports the extension's review code",
      "cli/main.ts",
      'import type { HunkReview } from "../extension/src/review/hunk-review.mts";',
      /cli\/main\.ts imports extension\/src\/review\/hunk-review\.mts \(cli → extension\)/,
    ],
    [
      "a circle inside the wire",
      "src/editor-wire/contract-shapes.ts",
      'import type { JsonValue } from "./contract.ts";',
      /import circle among: .*src\/editor-wire\/contract-shapes\.ts/,
    ],
  ];
  for (const [name, file, line, expected] of cases) {
    it(`fails when ${name}`, () => {
      const r = planted(file, line);
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, expected);
    });
  }
});
