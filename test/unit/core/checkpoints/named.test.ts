import assert from "node:assert/strict";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { Checkpoints } from "../../../../src/core/checkpoints/index.ts";
import { ShadowRepo } from "../../../../src/core/checkpoints/shadow.ts";
import { CheckpointStore } from "../../../../src/core/checkpoints/store.ts";
import { FileService } from "../../../../src/core/files/files.ts";
import { silentLogger } from "../../../../src/core/log.ts";
import { Workspace } from "../../../../src/core/workspace.ts";
import { tmpdirFixture } from "../../../helpers/tmp.ts";

/*
 * Calls that name their paths (fs_write, fs_delete, fs_move) are recorded by those paths alone:
 * what anyone else changed meanwhile is still found by the next full scan and given to the right
 * caller; a named path that is a symlink falls back to a full scan; a command's pending effects
 * stay its own across a named call.
 */

const quiet = silentLogger;

function setup() {
  const ws = tmpdirFixture({ prefix: "ccb-ckptn-ws-" });
  const state = tmpdirFixture({ prefix: "ccb-ckptn-state-" });
  const workspace = new Workspace([ws.path]);
  const root = workspace.primary;
  const make = () =>
    new Checkpoints(
      new CheckpointStore(workspace.roots, { baseDir: join(state.path, "checkpoints"), maxFileBytes: 1000 }),
      { files: new FileService(workspace), workspace },
      quiet,
    );
  return { root, make, cps: make() };
}

const A = { frontEnd: "mcp" as const, client: "alpha", session: "s-a" };
const B = { frontEnd: "mcp" as const, client: "beta", session: "s-b" };
const fw = (root: string, ...rels: string[]) => ({
  name: "fs_write",
  annotations: { readOnlyHint: false },
  paths: rels.map((r) => join(root, r)),
});

test("named calls record their paths; others' changes meanwhile go to the person at the next full scan", async () => {
  const { root, cps, make } = setup();
  writeFileSync(join(root, "base.txt"), "base\n");
  await cps.around(fw(root, "a.txt"), A, async () => writeFileSync(join(root, "a.txt"), "from a\n"));
  // The person, between calls: elsewhere, and on the file the next call writes.
  writeFileSync(join(root, "person.txt"), "by hand\n");
  writeFileSync(join(root, "a.txt"), "by hand over a\n");
  await cps.around(fw(root, "a.txt"), B, async () => writeFileSync(join(root, "a.txt"), "from b\n"));
  // The person again, while a named call runs, and another process (store) flushing then.
  const other = make();
  await cps.around(fw(root, "c.txt"), A, async () => {
    writeFileSync(join(root, "c.txt"), "from a\n");
    writeFileSync(join(root, "person2.txt"), "by hand meanwhile\n");
    await other.flush();
  });
  const list = await cps.list({ limit: 100 });
  const rows = list.map((c) => `${c.phase} ${c.client} ${c.files.join(",")}`).reverse();
  assert.deepEqual(rows, [
    "after alpha a.txt",
    "before outside ccb a.txt", // the person's edit of a.txt, found at beta's start
    "after beta a.txt",
    "before outside ccb person.txt,person2.txt", // found by the other process's flush, not given to alpha
    "after alpha c.txt",
  ]);
  const diff = (await cps.store.diff(list.find((c) => c.phase === "before" && c.files.includes("a.txt"))!.id)).diff;
  assert.match(diff, /-from a\n\+by hand over a/, "nothing lost: the person's version is in the history");
  assert.equal(
    list.find((c) => c.files.includes("base.txt")),
    undefined,
  );
});

test("a named path that is a symlink is scanned for fully: what it points at is the call's", async () => {
  const { root, cps } = setup();
  writeFileSync(join(root, "real.txt"), "one\n");
  symlinkSync("real.txt", join(root, "lnk"));
  await cps.around(fw(root, "x.txt"), A, async () => writeFileSync(join(root, "x.txt"), "x\n")); // the base
  await cps.around(fw(root, "lnk"), A, async () => writeFileSync(join(root, "lnk"), "two\n"));
  const [c] = await cps.list({});
  assert.equal(c?.client, "alpha");
  assert.equal(c?.phase, "after");
  assert.deepEqual(c?.files, ["real.txt"]);
});

test("a command's pending effects stay its own across a named call", async () => {
  const { root, cps } = setup();
  await cps.around(fw(root, "x.txt"), B, async () => writeFileSync(join(root, "x.txt"), "x\n"));
  await cps.around({ name: "terminal_write", annotations: { readOnlyHint: false }, lingers: true }, A, async () => {});
  writeFileSync(join(root, "made-by-command.txt"), "out\n");
  await cps.around(fw(root, "y.txt"), B, async () => writeFileSync(join(root, "y.txt"), "y\n"));
  const rows = (await cps.list({})).map((c) => `${c.phase} ${c.client} ${c.files.join(",")}`).reverse();
  assert.deepEqual(rows, ["after beta x.txt", "effects alpha made-by-command.txt", "after beta y.txt"]);
});

test("fs_delete of a directory and fs_move of a file, named, record every file under them", async () => {
  const { root, cps } = setup();
  mkdirSync(join(root, "dir", "sub"), { recursive: true });
  writeFileSync(join(root, "dir", "sub", "t.txt"), "t\n");
  writeFileSync(join(root, "dir", "u.txt"), "u\n");
  writeFileSync(join(root, "m.txt"), "m\n");
  await cps.around(fw(root, "x.txt"), B, async () => writeFileSync(join(root, "x.txt"), "x\n")); // the base
  const files = new FileService(new Workspace([root]));
  await cps.around({ ...fw(root, "dir"), name: "fs_delete" }, A, () => files.delete("dir", { recursive: true }));
  await cps.around({ ...fw(root, "m.txt", "n.txt"), name: "fs_move" }, A, () => files.move("m.txt", "n.txt"));
  const rows = (await cps.list({})).map((c) => `${c.tool} ${c.client} ${c.files.sort().join(",")}`).reverse();
  assert.deepEqual(rows, [
    "fs_write beta x.txt",
    "fs_delete alpha dir/sub/t.txt,dir/u.txt",
    "fs_move alpha m.txt,n.txt",
  ]);
  assert.equal(readFileSync(join(root, "n.txt"), "utf8"), "m\n");
});

test("a named path is recorded as a scan would: ignored, large and binary files not, a file grown past the limit dropped", async () => {
  const { root, cps } = setup();
  writeFileSync(join(root, ".gitignore"), "ignored.txt\n");
  await cps.around(fw(root, "x.txt"), B, async () => writeFileSync(join(root, "x.txt"), "x\n")); // the base
  await cps.around(fw(root, "ignored.txt"), A, async () => writeFileSync(join(root, "ignored.txt"), "no\n"));
  await cps.around(fw(root, "big.txt"), A, async () => writeFileSync(join(root, "big.txt"), "x".repeat(2000)));
  await cps.around(fw(root, "bin.dat"), A, async () => writeFileSync(join(root, "bin.dat"), Buffer.from([1, 0, 2])));
  // positive control: the same calls record a small text file, and one that grows past the limit leaves the store
  await cps.around(fw(root, "small.txt"), A, async () => writeFileSync(join(root, "small.txt"), "yes\n"));
  await cps.around(fw(root, "small.txt"), A, async () => writeFileSync(join(root, "small.txt"), "y".repeat(2000)));
  const rows = (await cps.list({})).map((c) => `${c.client} ${c.files.join(",")}`).reverse();
  assert.deepEqual(rows, ["beta x.txt", "alpha small.txt", "alpha small.txt"]);
  const [last] = await cps.list({ limit: 1 });
  assert.match((await cps.store.diff(last!.id)).diff, /deleted file mode 100644/);
});

test("a named call that changed nothing asks git nothing; one that changed a file it knows, four processes", async () => {
  const { root, cps } = setup();
  writeFileSync(join(root, "a.txt"), "one\n");
  await cps.around(fw(root, "x.txt"), B, async () => writeFileSync(join(root, "x.txt"), "x\n")); // the base
  await cps.around(fw(root, "a.txt"), A, async () => writeFileSync(join(root, "a.txt"), "two\n"));
  await cps.idle(); // its queued commit
  let calls: string[] = [];
  const seen = () => calls; // read through a call: the assertions below do not narrow it
  const git = ShadowRepo.prototype.git;
  ShadowRepo.prototype.git = function (this: ShadowRepo, args, o) {
    calls.push(args[0] as string);
    return git.call(this, args, o);
  };
  try {
    await cps.around(fw(root, "a.txt"), A, async () => writeFileSync(join(root, "a.txt"), "two\n"));
    await cps.idle();
    assert.deepEqual(seen(), [], "the same content again: nothing to record");
    await cps.around(fw(root, "a.txt"), A, async () => writeFileSync(join(root, "a.txt"), "three\n"));
    assert.deepEqual(seen(), [], "the answer waited for no git process: its commit is queued");
    await cps.idle();
    assert.deepEqual(seen(), ["update-index", "write-tree", "commit-tree", "update-ref"]);
    // positive control: a call that does not name its paths asks git what changed
    calls = [];
    await cps.around({ name: "fs_write", annotations: { readOnlyHint: false } }, A, async () => {});
    assert.ok(seen().includes("ls-files"), seen().join(" "));
  } finally {
    ShadowRepo.prototype.git = git;
  }
  const [last] = await cps.list({ limit: 1 });
  assert.match((await cps.store.diff(last!.id)).diff, /-two\n\+three/);
});

test("a commit by another writer of the store (an older ccb) voids the cached tip: the next named call still records", async () => {
  const { root, cps } = setup();
  await cps.around(fw(root, "x.txt"), B, async () => writeFileSync(join(root, "x.txt"), "x\n")); // the base
  await cps.around(fw(root, "a.txt"), A, async () => writeFileSync(join(root, "a.txt"), "one\n"));
  await cps.idle(); // its queued commit (the older ccb below takes no lock)
  // An older ccb records b.txt its way (update-index, write-tree, commit-tree, update-ref), keeping
  // the state file's fields it does not know as it found them.
  const repo = cps.store.repos[0]!;
  writeFileSync(join(root, "b.txt"), "by the older ccb\n");
  const oid = (await repo.git(["hash-object", "-w", "--", "b.txt"])).stdout.toString().trim();
  await repo.git(["update-index", "--add", "--cacheinfo", `100644,${oid},b.txt`]);
  const tree = (await repo.git(["write-tree"])).stdout.toString().trim();
  const tip = (await repo.git(["rev-parse", "refs/ckpt/000001"])).stdout.toString().trim();
  const commit = (await repo.git(["commit-tree", tree, "-p", tip, "-m", "older"])).stdout.toString().trim();
  await repo.git(["update-ref", "refs/ckpt/000001", commit, tip]);
  await cps.around(fw(root, "a.txt"), A, async () => writeFileSync(join(root, "a.txt"), "two\n"));
  const [last] = await cps.list({ limit: 1 });
  assert.equal(last?.client, "alpha");
  assert.deepEqual(last?.files, ["a.txt"]);
  assert.equal(
    (await repo.git(["rev-parse", `${last?.id}^`])).stdout.toString().trim(),
    commit,
    "on top of the older ccb's commit",
  );
});
