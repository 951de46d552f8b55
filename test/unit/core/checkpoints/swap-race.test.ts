import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdirSync, openSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { Checkpoints } from "../../../../src/core/checkpoints/index.ts";
import { CheckpointStore } from "../../../../src/core/checkpoints/store.ts";
import { FileService } from "../../../../src/core/files/files.ts";
import { silentLogger } from "../../../../src/core/log.ts";
import { Workspace } from "../../../../src/core/workspace.ts";
import { startSwapper, treeSnapshot } from "../../../helpers/swap.ts";
import { tmpdirFixture } from "../../../helpers/tmp.ts";

/*
 * Attack: a directory of the root is exchanged with a symlink to a directory outside
 * (renameat2(RENAME_EXCHANGE), test/helpers/swap.py) in a tight loop while the checkpoint store
 * scans, stages, records (full scans and named paths) and restores. Nothing outside may ever be
 * recorded (no object of the store holds outside content) nor written by a restore. A positive
 * control shows that reading by path, as `git add` does, does record outside content under the
 * same swap.
 */

const SECRET = "OUTSIDE-SECRET";
const quiet = silentLogger;

const snapshot = treeSnapshot;

test("a directory swapped for a symlink to outside while the store reads: nothing outside is recorded or restored", {
  timeout: 300_000,
}, async () => {
  const base = tmpdirFixture({ prefix: "ccb-ckpt-swap-" });
  const ws = join(base.path, "ws");
  const outside = join(base.path, "outside");
  mkdirSync(join(ws, "d", "sub"), { recursive: true });
  mkdirSync(join(outside, "sub"), { recursive: true });
  writeFileSync(join(ws, "d", "f.txt"), "inside 0\n");
  writeFileSync(join(ws, "d", "sub", "g.txt"), "inside too\n");
  writeFileSync(join(outside, "f.txt"), `${SECRET} f\n`);
  writeFileSync(join(outside, "sub", "g.txt"), `${SECRET} g\n`);
  writeFileSync(join(outside, "only-outside.txt"), `${SECRET} only\n`);
  symlinkSync(outside, join(ws, "alt"));
  const outsideBefore = snapshot(outside);
  const workspace = new Workspace([ws]);
  const cps = new Checkpoints(
    new CheckpointStore(workspace.roots, { baseDir: join(base.path, "state", "checkpoints") }),
    { files: new FileService(workspace), workspace },
    quiet,
  );
  const gitDir = cps.store.repos[0]!.gitDir;
  const who = { frontEnd: "mcp" as const, client: "alpha" };
  await cps.flush(who); // the base, before the swap
  const [first] = await cps.list({});
  assert.equal(first, undefined);
  // The real directory, by handle: the test's own writes stay inside whatever its name is now.
  const d = openSync(join(ws, "d"), constants.O_RDONLY | constants.O_DIRECTORY);
  const named = ["d/f.txt", "d/sub/g.txt", "d/only-outside.txt", "d/sub"].map((r) => join(ws, r));
  const swapper = await startSwapper(join(ws, "d"), join(ws, "alt"));
  let restores = 0;
  const restoreOnce = async () => {
    const [c] = await cps.list({});
    if (c)
      await cps.restore(c.id, who).then(
        () => restores++,
        () => undefined,
      );
  };
  try {
    for (let i = 1; i <= 30; i++) {
      const change = async () => {
        writeFileSync(`/proc/self/fd/${d}/f.txt`, `inside ${i}\n`);
        writeFileSync(`/proc/self/fd/${d}/sub/g.txt`, `inside too ${i}\n`);
      };
      if (i % 3 === 0) await cps.around({ name: "terminal_write", annotations: { readOnlyHint: false } }, who, change);
      else await cps.around({ name: "fs_write", annotations: { readOnlyHint: false }, paths: named }, who, change);
      if (i % 10 === 0) await restoreOnce();
    }
    // A restore is refused when the swap moves between its check and its writes (fine: nothing may
    // go outside either way). Under load every one of the three above can be: the test means a
    // restore that ran under the swap, so it goes on until one has (bounded), the swap still running.
    for (let tries = 0; restores === 0 && tries < 200; tries++) await restoreOnce();
  } finally {
    const n = await swapper.stop();
    closeSync(d);
    assert.ok(n > 100, `the swapper really swapped (${n} exchanges)`);
  }
  const objects = execFileSync("git", ["--git-dir", gitDir, "cat-file", "--batch-all-objects", "--batch"], {
    maxBuffer: 256 << 20,
  }).toString("latin1");
  assert.ok(!objects.includes(SECRET), "no object of the store holds outside content");
  assert.match(objects, /inside \d+\n/, "the store did record inside changes under the swap");
  assert.ok((await cps.list({ limit: 1000 })).length > 5, "checkpoints were recorded under the swap");
  assert.ok(restores > 0, "a restore ran under the swap");
  assert.deepEqual(snapshot(outside), outsideBefore, "nothing outside was created, changed or deleted");
  base.cleanup();
});

test("positive control: hashing by path, as git add does, records outside content under the same swap", {
  timeout: 120_000,
}, async () => {
  const base = tmpdirFixture({ prefix: "ccb-ckpt-swapctl-" });
  const ws = join(base.path, "ws");
  const outside = join(base.path, "outside");
  mkdirSync(join(ws, "d"), { recursive: true });
  mkdirSync(outside, { recursive: true });
  writeFileSync(join(ws, "d", "f.txt"), "inside\n");
  writeFileSync(join(outside, "f.txt"), `${SECRET}\n`);
  symlinkSync(outside, join(ws, "alt"));
  const secretId = execFileSync("git", ["hash-object", "--stdin"], { input: `${SECRET}\n` })
    .toString()
    .trim();
  const swapper = await startSwapper(join(ws, "d"), join(ws, "alt"));
  let out: string;
  try {
    out = execFileSync("git", ["hash-object", "--no-filters", "--stdin-paths"], {
      input: `${join(ws, "d", "f.txt")}\n`.repeat(5000),
      maxBuffer: 16 << 20,
    }).toString();
  } catch (e) {
    out = String((e as { stdout?: Buffer }).stdout ?? ""); // a read mid-swap may fail: the ids before it count
  } finally {
    await swapper.stop();
  }
  assert.ok(out.split("\n").includes(secretId), "by path, git read the outside file");
  base.cleanup();
});
