import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import {
  createPack,
  materializePack,
  packId,
  readPackHeader,
  statVerifyDir,
  verifyDir,
} from "../../../src/util/assets.ts";

const root = mkdtempSync(join(tmpdir(), "ccb-assets-test-"));
after(() => rmSync(root, { recursive: true, force: true }));

const files = [
  { path: "code/main.js", data: Buffer.from("console.log('main');\n") },
  { path: "code/chunk-a.js", data: Buffer.from("export const a = 1;\n") },
];
const pack = createPack(files);
const { header } = readPackHeader(pack);

describe("asset pack: start-up check by stat, SHA-256 when a file changed", () => {
  it("an unpacked folder passes the stat check, and a second start reuses it", () => {
    const dir = materializePack(pack, root);
    assert.equal(dir, join(root, packId(pack)));
    assert.equal(statVerifyDir(dir, header), true);
    const ino = statSync(join(dir, "code/main.js")).ino;
    assert.equal(materializePack(pack, root), dir);
    assert.equal(statSync(join(dir, "code/main.js")).ino, ino, "not unpacked again");
  });

  it("a file rewritten with other bytes of the same size fails the stat check and is restored", () => {
    const dir = materializePack(pack, root);
    const target = join(dir, "code/chunk-a.js");
    writeFileSync(target, "export const a = 2;\n");
    assert.equal(statVerifyDir(dir, header), false);
    assert.equal(verifyDir(dir, header), false);
    materializePack(pack, root);
    assert.equal(readFileSync(target, "utf8"), "export const a = 1;\n");
    assert.equal(statVerifyDir(dir, header), true);
  });

  it("a file replaced by one of the same size with the old mtime put back still fails (new inode), and is restored", () => {
    const dir = materializePack(pack, root);
    const target = join(dir, "code/main.js");
    const before = statSync(target);
    writeFileSync(`${target}.new`, "console.log('evil');\n");
    utimesSync(`${target}.new`, before.atime, before.mtime);
    renameSync(`${target}.new`, target);
    assert.equal(statVerifyDir(dir, header), false);
    materializePack(pack, root);
    assert.equal(readFileSync(target, "utf8"), "console.log('main');\n");
  });

  it("a touched but unchanged file passes SHA-256, and its new stats are recorded", () => {
    const dir = materializePack(pack, root);
    const target = join(dir, "code/main.js");
    utimesSync(target, new Date(), new Date(Date.now() + 5000));
    assert.equal(statVerifyDir(dir, header), false);
    const ino = statSync(target).ino;
    materializePack(pack, root);
    assert.equal(statSync(target).ino, ino, "verified in place, not unpacked again");
    assert.equal(statVerifyDir(dir, header), true);
  });

  it("a marker without the stat record (older ccb) is verified by SHA-256, then recorded", () => {
    const dir = materializePack(pack, root);
    writeFileSync(join(dir, ".ccb-pack.json"), JSON.stringify(header));
    assert.equal(statVerifyDir(dir, header), false);
    materializePack(pack, root);
    assert.equal(statVerifyDir(dir, header), true);
  });
});
