import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { isCcbError } from "../../../src/core/errors.ts";
import { extractArchive, resolveInArchive, scanArchive } from "../../../src/runtime-fetch/extract.ts";
import { goodEntries, makeTarGz, FIXTURE_TOP as T, type TarEntry } from "../../fixtures/runtime/archives.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

const rules = { topLevelDir: T, maxUnpackedBytes: 8 * 1024 * 1024 };

async function withArchive<R>(entries: TarEntry[], fn: (file: string, dir: string) => Promise<R>): Promise<R> {
  await using d = tmpdirFixture({ prefix: "ccb-extract-" });
  const file = join(d.path, "a.tar.gz");
  writeFileSync(file, makeTarGz(entries));
  return await fn(file, d.path);
}

async function refused(entries: TarEntry[], message: RegExp) {
  await withArchive(entries, async (file) => {
    await assert.rejects(scanArchive(file, rules), (err: unknown) => {
      assert.ok(isCcbError(err, "INTEGRITY_FAILED"), String(err));
      assert.match(err.message, message);
      assert.equal(err.details?.reason, "unsafe-entry");
      return true;
    });
  });
}

describe("scanArchive refuses unsafe entries", () => {
  const base = goodEntries();
  test("absolute path", () =>
    refused([...base, { type: "file", path: "/tmp/ccb-evil", data: "x" }], /"\/tmp\/ccb-evil" has an absolute path/));
  test(".. in the middle of a path", () =>
    refused([...base, { type: "file", path: `${T}/bin/../../x`, data: "x" }], /has a "\.\." path/));
  test("entry outside the top-level folder", () =>
    refused([...base, { type: "file", path: "other/x", data: "x" }], /outside the top-level folder/));
  test("character device", () => refused([...base, { type: "chardev", path: `${T}/dev` }], /is a CharacterDevice/));
  test("block device", () => refused([...base, { type: "blockdev", path: `${T}/disk` }], /is a BlockDevice/));
  test("FIFO", () => refused([...base, { type: "fifo", path: `${T}/pipe` }], /is a FIFO/));
  test("symlink to an absolute path", () =>
    refused([...base, { type: "symlink", path: `${T}/etc`, target: "/etc" }], /symbolic link to an absolute path/));
  test("symlink climbing out with ..", () =>
    refused([...base, { type: "symlink", path: `${T}/bin/up`, target: "../.." }], /points outside/));
  test("symlink to a sibling of the top-level folder", () =>
    refused([...base, { type: "symlink", path: `${T}/sib`, target: "../other" }], /points outside/));
  test("a chain of individually harmless symlinks that escapes", () =>
    refused(
      [
        ...base,
        { type: "dir", path: `${T}/sub/` },
        { type: "symlink", path: `${T}/s`, target: "sub" },
        { type: "symlink", path: `${T}/sub/t`, target: ".." },
        { type: "symlink", path: `${T}/u`, target: "s/t/.." },
      ],
      /"[^"]*\/u" is a symbolic link that points outside/,
    ));
  test("a symlink loop", () =>
    refused(
      [...base, { type: "symlink", path: `${T}/a`, target: "b" }, { type: "symlink", path: `${T}/b`, target: "a" }],
      /points outside/,
    ));
  test("hard link to a path outside the folder", () =>
    refused([...base, { type: "hardlink", path: `${T}/pw`, target: "../etc/passwd" }], /"\.\." link target/));
  test("hard link through an escaping symlink", () =>
    refused(
      [
        ...base,
        { type: "symlink", path: `${T}/out2`, target: "../x" },
        { type: "hardlink", path: `${T}/h`, target: `${T}/out2/y` },
      ],
      /points outside/,
    ));
  test("an entry written through a symlink", () =>
    refused(
      [
        ...base,
        { type: "symlink", path: `${T}/lnk`, target: "out" },
        { type: "file", path: `${T}/lnk/x.js`, data: "x" },
      ],
      /placed through a symbolic link/,
    ));
  test("more unpacked bytes than the limit", async () => {
    await withArchive(
      [
        { type: "dir", path: `${T}/` },
        { type: "file", path: `${T}/big`, data: Buffer.alloc(1024 * 1024) },
      ],
      async (file) => {
        await assert.rejects(scanArchive(file, { ...rules, maxUnpackedBytes: 1000 }), /unpacked size over 1000 bytes/);
      },
    );
  });
  test("not a tar.gz at all", async () => {
    await using d = tmpdirFixture({ prefix: "ccb-extract-" });
    const file = join(d.path, "junk.tar.gz");
    writeFileSync(file, "this is not gzip");
    await assert.rejects(scanArchive(file, rules), (err: unknown) => isCcbError(err, "INTEGRITY_FAILED"));
  });
});

describe("scanArchive and extractArchive accept a well-formed runtime", () => {
  test("inside symlinks and hard links pass; extraction drops set-id bits", async () => {
    const entries: TarEntry[] = [
      ...goodEntries(),
      { type: "file", path: `${T}/bin/helper`, data: "#!/bin/sh\n", mode: 0o4755 },
    ];
    await withArchive(entries, async (file, dir) => {
      const summary = await scanArchive(file, rules);
      assert.equal(summary.entries, entries.length);
      assert.equal(summary.symlinks, 2);
      const out = join(dir, "x");
      mkdirSync(out);
      await extractArchive(file, out, rules);
      assert.deepEqual(readdirSync(out), [T]);
      const mode = statSync(join(out, T, "bin/helper")).mode;
      assert.equal(mode & 0o7000, 0, "no setuid/setgid/sticky bits");
      assert.equal(mode & 0o100, 0o100, "still executable");
      assert.match(readFileSync(join(out, T, "bin/code"), "utf8"), /openvscode-server fixture/);
    });
  });
});

describe("archives made by GNU tar (the upstream release format)", () => {
  for (const format of ["gnu", "posix"] as const) {
    test(`--format=${format}: long names, symlinks, hard links and modes pass the scan and extract`, async () => {
      await using d = tmpdirFixture({ prefix: "ccb-gnutar-" });
      const src = join(d.path, "src");
      const long = `${"node_modules/".repeat(6)}${"a-rather-long-package-name".repeat(4)}`;
      mkdirSync(join(src, T, "bin"), { recursive: true });
      mkdirSync(join(src, T, long), { recursive: true });
      writeFileSync(join(src, T, "bin/openvscode-server"), "#!/bin/sh\n", { mode: 0o755 });
      writeFileSync(join(src, T, long, "index.js"), "module.exports = 1;\n");
      execFileSync("ln", ["-s", `../${long}/index.js`, join(src, T, "bin/linked.js")]);
      execFileSync("ln", [join(src, T, "bin/openvscode-server"), join(src, T, "bin/hard")]);
      const file = join(d.path, "a.tar.gz");
      execFileSync("tar", [`--format=${format}`, "-czf", file, "-C", src, T]);
      const summary = await scanArchive(file, rules);
      assert.equal(summary.symlinks, 1);
      const out = join(d.path, "out");
      mkdirSync(out);
      await extractArchive(file, out, rules);
      assert.equal(readFileSync(join(out, T, "bin/linked.js"), "utf8"), "module.exports = 1;\n");
      assert.equal(statSync(join(out, T, "bin/openvscode-server")).mode & 0o111, 0o111);
    });
  }
});

describe("resolveInArchive", () => {
  const links = new Map([
    ["r/a", "b/c"],
    ["r/b/c", "../d"],
    ["r/loop", "loop"],
  ]);
  test("follows chains of archive links", () =>
    assert.deepEqual(resolveInArchive(["r", "a", "f"], links), ["r", "d", "f"]));
  test("leaving the root is undefined", () => assert.equal(resolveInArchive(["r", "..", ".."], links), undefined));
  test("loops are undefined", () => assert.equal(resolveInArchive(["r", "loop"], links), undefined));
});
