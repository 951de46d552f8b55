import assert from "node:assert/strict";
import { linkSync, mkdirSync, realpathSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { isCcbError } from "../../../src/core/errors.ts";
import { assertSingleLink, Workspace } from "../../../src/core/workspace.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

function rejectsCode(p: Promise<unknown>, code: string): Promise<void> {
  return assert.rejects(p, (err) => isCcbError(err) && err.code === code && err.message.length > 0);
}

describe("Workspace confinement", () => {
  const base = tmpdirFixture({ prefix: "ccb-ws-" });
  const root = join(base.path, "root");
  const outside = join(base.path, "outside");
  let ws: Workspace;

  before(() => {
    mkdirSync(join(root, "src"), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(root, "src", "a.txt"), "a\n");
    writeFileSync(join(outside, "secret.txt"), "secret\n");
    symlinkSync(join(outside, "secret.txt"), join(root, "to-secret"));
    symlinkSync(outside, join(root, "to-outside-dir"));
    symlinkSync(join(outside, "missing.txt"), join(root, "dangling-out"));
    symlinkSync(join(root, "src", "missing.txt"), join(root, "dangling-in"));
    symlinkSync(join(root, "src"), join(root, "src-link"));
    symlinkSync(join(root, "loop-b"), join(root, "loop-a"));
    symlinkSync(join(root, "loop-a"), join(root, "loop-b"));
    symlinkSync(root, join(base.path, "root-alias"));
    ws = new Workspace([root]);
  });
  after(() => base.cleanup());

  it("resolves relative and absolute paths inside the root", async () => {
    const r = await ws.resolve("src/a.txt");
    assert.equal(r.abs, join(root, "src", "a.txt"));
    assert.equal(r.rel, "src/a.txt");
    assert.equal(r.exists, true);
    const abs = await ws.resolve(join(root, "src"));
    assert.equal(abs.rel, "src");
    const dot = await ws.resolve(".");
    assert.equal(dot.rel, "");
    assert.ok(ws.isRoot(dot));
    assert.equal(ws.display(dot), ".");
  });

  it("resolves a path that does not exist yet through its nearest existing ancestor", async () => {
    const r = await ws.resolve("src/new/deeper/file.txt");
    assert.equal(r.exists, false);
    assert.equal(r.rel, "src/new/deeper/file.txt");
    await rejectsCode(ws.resolve("src/nope.txt", { mustExist: true }), "NOT_FOUND");
  });

  it("refuses .., absolute paths outside, NUL bytes and empty paths", async () => {
    await rejectsCode(ws.resolve("../outside/secret.txt"), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(ws.resolve("src/../../outside"), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(ws.resolve(join(outside, "secret.txt")), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(ws.resolve("/etc/passwd"), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(ws.resolve("src/a.txt\0.png"), "INVALID_PATH");
    await rejectsCode(ws.resolve(""), "INVALID_PATH");
  });

  it("refuses symlinks that point outside, also as parent directories and for new children", async () => {
    await rejectsCode(ws.resolve("to-secret"), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(ws.resolve("to-outside-dir"), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(ws.resolve("to-outside-dir/secret.txt"), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(ws.resolve("to-outside-dir/new-file.txt"), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(ws.resolve("to-outside-dir/new/dir/file.txt"), "PATH_OUTSIDE_WORKSPACE");
  });

  it("refuses dangling symlinks (their target cannot be checked) and symlink loops", async () => {
    await rejectsCode(ws.resolve("dangling-out"), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(ws.resolve("dangling-in"), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(ws.resolve("dangling-out/child"), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(ws.resolve("loop-a"), "INVALID_PATH");
  });

  it("follows symlinks that stay inside", async () => {
    const r = await ws.resolve("src-link/a.txt");
    assert.equal(r.abs, join(root, "src", "a.txt"));
    assert.equal(r.rel, "src/a.txt");
  });

  it("with followFinal: false keeps the link itself (for delete/move), but still confines its parent", async () => {
    const r = await ws.resolve("to-secret", { followFinal: false, mustExist: true });
    assert.equal(r.abs, join(root, "to-secret"));
    const d = await ws.resolve("dangling-out", { followFinal: false, mustExist: true });
    assert.equal(d.rel, "dangling-out");
    await rejectsCode(ws.resolve("to-outside-dir/secret.txt", { followFinal: false }), "PATH_OUTSIDE_WORKSPACE");
    const rootItself = await ws.resolve(".", { followFinal: false });
    assert.ok(ws.isRoot(rootItself));
  });

  it("accepts the root named through a symlinked alias", async () => {
    const r = await ws.resolve(join(base.path, "root-alias", "src", "a.txt"));
    assert.equal(r.abs, join(root, "src", "a.txt"));
  });

  it("refuses to prove a hard-linked file inside", () => {
    linkSync(join(outside, "secret.txt"), join(root, "hard.txt"));
    const st = statSync(join(root, "hard.txt"));
    assert.throws(
      () => assertSingleLink(st, "hard.txt"),
      (err) => isCcbError(err, "PATH_OUTSIDE_WORKSPACE") && /hard link/.test(err.message) && !!err.hint,
    );
    assertSingleLink(statSync(join(root, "src", "a.txt")), "src/a.txt");
  });

  it("never resolves a generated path (.., ., symlinks in and out, absolute) to something outside", async () => {
    const segment = fc.constantFrom(
      "..",
      ".",
      "src",
      "a.txt",
      "to-outside-dir",
      "src-link",
      "to-secret",
      "new",
      "dangling-in",
      "",
    );
    const input = fc
      .tuple(fc.boolean(), fc.array(segment, { minLength: 1, maxLength: 6 }))
      .map(([abs, parts]) => (abs ? join(root, ...parts) : parts.join("/")));
    await fc.assert(
      fc.asyncProperty(input, fc.boolean(), async (p, followFinal) => {
        let r: Awaited<ReturnType<typeof ws.resolve>>;
        try {
          r = await ws.resolve(p, { followFinal });
        } catch (err) {
          assert.ok(isCcbError(err), String(err));
          assert.ok(["PATH_OUTSIDE_WORKSPACE", "INVALID_PATH"].includes(err.code), `${p}: ${err.code}`);
          return;
        }
        assert.ok(r.abs === root || r.abs.startsWith(`${root}/`), `${p} -> ${r.abs}`);
        // What exists of it really is inside: the real path of its nearest existing ancestor.
        let cur = followFinal || r.rel === "" ? r.abs : dirname(r.abs);
        let real: string | undefined;
        while (real === undefined) {
          try {
            real = realpathSync(cur);
          } catch {
            cur = dirname(cur);
          }
        }
        assert.ok(
          real === root || real.startsWith(`${root}/`),
          `${p} (followFinal ${followFinal}): ${cur} is really ${real}`,
        );
      }),
      { numRuns: 400 },
    );
  });

  it("refuses roots that do not exist or are files", () => {
    assert.throws(
      () => new Workspace([join(base.path, "missing")]),
      (err) => isCcbError(err, "NOT_FOUND"),
    );
    assert.throws(
      () => new Workspace([join(root, "src", "a.txt")]),
      (err) => isCcbError(err, "NOT_DIRECTORY"),
    );
    assert.throws(
      () => new Workspace([]),
      (err) => isCcbError(err, "INVALID_ARGUMENT"),
    );
  });
});

describe("Workspace with several roots", () => {
  const base = tmpdirFixture({ prefix: "ccb-ws-multi-" });
  const a = join(base.path, "alpha");
  const b = join(base.path, "beta");
  const nested = join(a, "inner");
  const dupA = join(base.path, "x", "proj");
  const dupB = join(base.path, "y", "proj");
  after(() => base.cleanup());
  before(() => {
    for (const d of [a, b, nested, dupA, dupB]) mkdirSync(d, { recursive: true });
    writeFileSync(join(b, "file.txt"), "b\n");
  });

  it("displays paths prefixed with the root name and resolves them back", async () => {
    const ws = new Workspace([a, b]);
    assert.deepEqual(ws.names, ["alpha", "beta"]);
    const r = await ws.resolve(join(b, "file.txt"));
    assert.equal(ws.display(r), "beta/file.txt");
    const back = await ws.resolve("beta/file.txt");
    assert.equal(back.abs, join(b, "file.txt"));
    assert.equal(ws.display(await ws.resolve("beta")), "beta");
    // A relative path not naming a root resolves in the primary root.
    assert.equal((await ws.resolve("src/x.ts")).abs, join(a, "src", "x.ts"));
    // `..` from the primary root into a sibling root is inside that root.
    assert.equal((await ws.resolve("../beta/file.txt")).root, b);
  });

  it("makes duplicate root names unique", () => {
    const ws = new Workspace([dupA, dupB]);
    assert.deepEqual(ws.names, ["proj", "proj~2"]);
  });

  it("knows a nested root is a root (so it cannot be deleted through the outer one)", async () => {
    const ws = new Workspace([a, nested]);
    const r = await ws.resolve(nested);
    assert.equal(r.root, nested, "innermost root wins");
    assert.ok(ws.isRoot(r));
    assert.ok(ws.containsRoot(nested));
    assert.ok(ws.containsRoot(a));
    assert.ok(!ws.containsRoot(join(a, "other")));
  });
});
