import assert from "node:assert/strict";
import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { Checkpoints } from "../../../../src/core/checkpoints/index.ts";
import { CheckpointStore } from "../../../../src/core/checkpoints/store.ts";
import { FileService } from "../../../../src/core/files/files.ts";
import { Workspace } from "../../../../src/core/workspace.ts";
import { tmpdirFixture } from "../../../helpers/tmp.ts";

/*
 * The checkpoint store on real temp folders and real git: attribution, the limits (size, binary,
 * .gitignore, symlinks out of the root), the 0700 store, two stores of one workspace (two processes)
 * sharing records, undo that keeps others' changes and refuses a same-line conflict, pruning.
 */

function setup(o: { segmentSize?: number; maxSegments?: number } = {}) {
  const ws = tmpdirFixture({ prefix: "ccb-ckpt-ws-" });
  const state = tmpdirFixture({ prefix: "ccb-ckpt-state-" });
  const workspace = new Workspace([ws.path]);
  const root = workspace.primary;
  const make = () =>
    new Checkpoints(
      new CheckpointStore(workspace.roots, { baseDir: join(state.path, "checkpoints"), maxFileBytes: 1000, ...o }),
      { files: new FileService(workspace), workspace },
      {
        debug() {},
        info() {},
        warn() {},
        error() {},
        child() {
          return this;
        },
      } as never,
    );
  return { root, state: state.path, make, cps: make() };
}

const A = { frontEnd: "mcp" as const, client: "alpha", session: "s-a" };
const B = { frontEnd: "mcp" as const, client: "beta", session: "s-b" };

function write(root: string, rel: string, text: string) {
  return async () => {
    mkdirSync(join(root, rel, ".."), { recursive: true });
    writeFileSync(join(root, rel), text);
  };
}

test("each change is attributed to its caller; the person's changes between calls to nobody in ccb", async () => {
  const { root, cps, state } = setup();
  writeFileSync(join(root, "base.txt"), "base\n");
  await cps.around({ name: "fs_write", annotations: { readOnlyHint: false } }, A, write(root, "a.txt", "from a\n"));
  writeFileSync(join(root, "person.txt"), "by hand\n");
  await cps.around({ name: "fs_write", annotations: { readOnlyHint: false } }, B, write(root, "b.txt", "from b\n"));
  const list = await cps.list({});
  const by = (f: string) => list.find((c) => c.files.includes(f));
  assert.equal(by("a.txt")?.client, "alpha");
  assert.equal(by("a.txt")?.session, "s-a");
  assert.equal(by("a.txt")?.tool, "fs_write");
  assert.equal(by("b.txt")?.client, "beta");
  assert.equal(by("person.txt")?.frontEnd, "person");
  assert.equal(by("person.txt")?.client, "outside ccb");
  assert.equal(by("base.txt"), undefined, "the workspace as found is the hidden base");
  assert.deepEqual(
    (await cps.list({ agent: "mcp:alpha" })).map((c) => c.files),
    [["a.txt"]],
  );
  assert.deepEqual(
    (await cps.list({ path: { root, rel: "b.txt" } })).map((c) => c.client),
    ["beta"],
  );
  assert.equal(statSync(join(state, "checkpoints")).mode & 0o777, 0o700);
  assert.equal(statSync(cps.store.dir).mode & 0o777, 0o700);
});

test("large, binary, ignored files and what a symlink points at outside the root are never recorded", async () => {
  const { root, cps } = setup();
  const outside = tmpdirFixture({ prefix: "ccb-ckpt-out-" });
  writeFileSync(join(outside.path, "secret.txt"), "SECRET-OUTSIDE\n");
  writeFileSync(join(root, ".gitignore"), "ignored.txt\n");
  await cps.around({ name: "fs_write", annotations: { readOnlyHint: false } }, A, async () => {
    writeFileSync(join(root, "big.txt"), "x".repeat(2000));
    writeFileSync(join(root, "bin.dat"), Buffer.from([1, 0, 2]));
    writeFileSync(join(root, "ignored.txt"), "no\n");
    writeFileSync(join(root, "small.txt"), "yes\n");
    symlinkSync(outside.path, join(root, "out-dir"));
    symlinkSync(join(outside.path, "secret.txt"), join(root, "out-file"));
  });
  const [c] = await cps.list({});
  assert.ok(c);
  assert.deepEqual(c.files.sort(), ["out-dir", "out-file", "small.txt"]);
  const { diff } = await cps.store.diff(c.id);
  assert.doesNotMatch(diff, /SECRET-OUTSIDE/);
  assert.match(diff, /new file mode 120000/, "links are recorded as links");
  // positive control: the same content inside the root is recorded
  await cps.around(
    { name: "fs_write", annotations: { readOnlyHint: false } },
    A,
    write(root, "in.txt", "SECRET-OUTSIDE\n"),
  );
  const [d] = await cps.list({});
  assert.match((await cps.store.diff(d!.id)).diff, /SECRET-OUTSIDE/);
});

test("two stores of one workspace (two processes) share one history without losing records", async () => {
  const { root, make } = setup();
  const one = make();
  const two = make();
  const op = (cp: Checkpoints, who: typeof A, i: number) =>
    cp.around(
      { name: "fs_write", annotations: { readOnlyHint: false } },
      who,
      write(root, `f${who.client}${i}.txt`, `${i}\n`),
    );
  await Promise.all([0, 1, 2, 3, 4].flatMap((i) => [op(one, A, i), op(two, B, i)]));
  await one.idle();
  await two.idle();
  const list = await one.list({ limit: 1000 });
  const files = list.flatMap((c) => c.files).sort();
  assert.equal(files.length, 10, JSON.stringify(list.map((c) => [c.client, c.files])));
  assert.equal(new Set(files).size, 10);
  const store = readFileSync(join(one.store.dir, "root-0.git", "ccb-state.json"), "utf8");
  assert.ok(JSON.parse(store).count >= 10, `${store} ${JSON.stringify(list.map((c) => [c.client, c.files]))}`);
});

test("undo takes back one agent's changes, keeps the others', refuses a same-line conflict, and is undoable", async () => {
  const { root, cps } = setup();
  const lines = (n: number, tag = "") => `${Array.from({ length: n }, (_, i) => `line ${i}${tag}`).join("\n")}\n`;
  writeFileSync(join(root, "shared.txt"), lines(20));
  const fw = { name: "fs_write", annotations: { readOnlyHint: false } };
  await cps.around(fw, A, write(root, "a-only.txt", "a\n"));
  await cps.around(fw, A, async () => {
    const t = readFileSync(join(root, "shared.txt"), "utf8").replace("line 2\n", "line 2 by alpha\n");
    writeFileSync(join(root, "shared.txt"), t);
  });
  await cps.around(fw, B, async () => {
    const t = readFileSync(join(root, "shared.txt"), "utf8").replace("line 15\n", "line 15 by beta\n");
    writeFileSync(join(root, "shared.txt"), t);
    writeFileSync(join(root, "b-only.txt"), "b\n");
  });
  // The person edits alpha's line afterwards: undoing alpha must refuse and name it.
  writeFileSync(
    join(root, "shared.txt"),
    readFileSync(join(root, "shared.txt"), "utf8").replace("line 2 by alpha", "line 2 by alpha, then the person"),
  );
  const before = readFileSync(join(root, "shared.txt"), "utf8");
  await assert.rejects(cps.undo({ agent: "alpha" }, B), (e: Error) => {
    assert.match(e.message, /shared\.txt was changed since on the same lines \(lines 3-3\)/);
    return true;
  });
  assert.equal(readFileSync(join(root, "shared.txt"), "utf8"), before, "nothing written");
  assert.equal(readFileSync(join(root, "a-only.txt"), "utf8"), "a\n");
  // The person puts it back: now alpha's changes go, beta's stay.
  writeFileSync(join(root, "shared.txt"), before.replace(", then the person", ""));
  const r = await cps.undo({ agent: "alpha" }, B);
  assert.equal(r.undone.length, 2);
  assert.equal(readFileSync(join(root, "shared.txt"), "utf8"), lines(20).replace("line 15\n", "line 15 by beta\n"));
  assert.throws(() => statSync(join(root, "a-only.txt")));
  assert.equal(readFileSync(join(root, "b-only.txt"), "utf8"), "b\n");
  // The undo is a checkpoint; undoing it brings alpha's changes back.
  const [undo] = r.recorded;
  assert.equal(undo?.phase, "restore");
  await cps.undo({ id: undo!.id }, B);
  assert.equal(readFileSync(join(root, "a-only.txt"), "utf8"), "a\n");
  assert.match(readFileSync(join(root, "shared.txt"), "utf8"), /line 2 by alpha\n[\s\S]*line 15 by beta/);
});

test("restore to a checkpoint, and back", async () => {
  const { root, cps } = setup();
  const fw = { name: "fs_write", annotations: { readOnlyHint: false } };
  await cps.around(fw, A, write(root, "x.txt", "one\n"));
  const [first] = await cps.list({});
  await cps.around(fw, B, write(root, "x.txt", "two\n"));
  await cps.around(fw, B, write(root, "y.txt", "y\n"));
  const r = await cps.restore(first!.id, A);
  assert.equal(readFileSync(join(root, "x.txt"), "utf8"), "one\n");
  assert.throws(() => statSync(join(root, "y.txt")));
  await cps.undo({ id: r.recorded[0]!.id }, A);
  assert.equal(readFileSync(join(root, "x.txt"), "utf8"), "two\n");
  assert.equal(readFileSync(join(root, "y.txt"), "utf8"), "y\n");
});

test("a command's effects after its call are its own until the next call", async () => {
  const { root, cps } = setup();
  await cps.around({ name: "terminal_write", annotations: { readOnlyHint: false }, lingers: true }, A, async () => {});
  writeFileSync(join(root, "made-by-command.txt"), "out\n");
  const [c] = await cps.list({});
  assert.equal(c?.client, "alpha");
  assert.equal(c?.phase, "effects");
  assert.deepEqual(c?.files, ["made-by-command.txt"]);
});

test("old checkpoints are pruned: the store stays bounded", async () => {
  const { root, cps } = setup({ segmentSize: 2, maxSegments: 2 });
  const fw = { name: "fs_write", annotations: { readOnlyHint: false } };
  for (let i = 0; i < 7; i++) await cps.around(fw, A, write(root, "n.txt", `${i}\n`));
  await cps.idle();
  const list = await cps.list({ limit: 1000 });
  assert.ok(list.length <= 4 && list.length >= 2, `kept ${list.length}`);
  assert.equal(readFileSync(join(root, "n.txt"), "utf8"), "6\n");
  assert.match((await cps.store.diff(list[0]!.id)).diff, /\+6/);
});
