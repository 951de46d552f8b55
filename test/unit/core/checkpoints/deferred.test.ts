import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { Checkpoints, checkpointsOf } from "../../../../src/core/checkpoints/index.ts";
import { CheckpointStore } from "../../../../src/core/checkpoints/store.ts";
import { createCore } from "../../../../src/core/core.ts";
import { FileService } from "../../../../src/core/files/files.ts";
import { silentLogger } from "../../../../src/core/log.ts";
import { Workspace } from "../../../../src/core/workspace.ts";
import { tmpdirFixture } from "../../../helpers/tmp.ts";

/*
 * A call that names its paths (fs_write, fs_delete, fs_move) answers before its after-record is
 * committed: on its answer path the named paths are read and captured (blobs and entries, in Node,
 * under the store's lock), and the commit is queued. These tests, on real git and a real store,
 * prove the deferral changes no attribution (the person's edits right after the answer, a second
 * call of the same agent, another process recording first) and loses no record (a clean shutdown,
 * a process killed right after the answer).
 */

function setup() {
  const ws = tmpdirFixture({ prefix: "ccb-ckpt-defer-ws-" });
  const state = tmpdirFixture({ prefix: "ccb-ckpt-defer-state-" });
  const workspace = new Workspace([ws.path]);
  const root = workspace.primary;
  const baseDir = join(state.path, "checkpoints");
  const make = () =>
    new Checkpoints(
      new CheckpointStore(workspace.roots, { baseDir }),
      { files: new FileService(workspace), workspace },
      silentLogger,
    );
  return { root, baseDir, make, cps: make() };
}

const AGENT = { frontEnd: "mcp" as const, client: "agent", session: "s-1" };
const fsWrite = (paths: string[]) => ({ name: "fs_write", annotations: { readOnlyHint: false }, paths });

/** The calls in the store's pending.json whose after-record is captured but not committed yet. */
function queued(store: CheckpointStore): unknown[] {
  const file = join(store.dir, "pending.json");
  if (!existsSync(file)) return [];
  return (JSON.parse(readFileSync(file, "utf8")) as { calls: { done?: unknown }[] }).calls.filter((c) => c.done);
}

/** Each checkpoint's client and its diff's added and removed lines (without the file headers). */
async function history(store: CheckpointStore) {
  const list = (await store.list({ limit: 1000 })).reverse();
  const out = [];
  for (const c of list) {
    const { diff } = await store.diff(c.id);
    const lines = diff.split("\n").filter((l) => /^[+-](?![+-]{2} )/.test(l));
    out.push({ client: c.client, call: c.call, files: c.files, lines });
  }
  return out;
}

test("the person's edits right after a named call's answer, before its record lands, are not the agent's", async () => {
  const { root, cps } = setup();
  const a = join(root, "a.txt");
  writeFileSync(a, "a0\n");
  writeFileSync(join(root, "b.txt"), "b0\n");
  await cps.flush(); // the workspace as found: the hidden base
  await cps.around(fsWrite([a]), AGENT, async () => writeFileSync(a, "agent\n"));
  // The answer is back; the after-record is captured, its commit still queued (else this test
  // would not test the deferral).
  assert.equal(queued(cps.store).length, 1, "the after-record is queued when the call answers");
  // The person, at once: another file and the very file the agent wrote.
  writeFileSync(join(root, "b.txt"), "person b\n");
  writeFileSync(a, "person a\n");
  await cps.idle();
  assert.equal(queued(cps.store).length, 0, "the queued record landed");
  await cps.flush();
  const h = await history(cps.store);
  assert.deepEqual(
    h.map(({ client, files, lines }) => ({ client, files, lines })),
    [
      { client: "agent", files: ["a.txt"], lines: ["-a0", "+agent"] },
      { client: "outside ccb", files: ["a.txt", "b.txt"], lines: ["-agent", "+person a", "-b0", "+person b"] },
    ],
  );
});

test("a second call of the same agent before the first's record lands: each record holds its own call's state", async () => {
  const { root, cps } = setup();
  const a = join(root, "a.txt");
  writeFileSync(a, "a0\n");
  await cps.flush();
  await cps.around(fsWrite([a]), AGENT, async () => writeFileSync(a, "one\n"));
  assert.equal(queued(cps.store).length, 1);
  writeFileSync(a, "person\n"); // between the two calls, before the first's record landed
  await cps.around(fsWrite([a]), AGENT, async () => writeFileSync(a, "two\n"));
  await cps.idle();
  const h = await history(cps.store);
  assert.deepEqual(
    h.map(({ client, lines }) => ({ client, lines })),
    [
      { client: "agent", lines: ["-a0", "+one"] },
      { client: "outside ccb", lines: ["-one", "+person"] },
      { client: "agent", lines: ["-person", "+two"] },
    ],
  );
  assert.notEqual(h[0]?.call, h[2]?.call, "two calls, two records");
});

test("another process recording before the queued record lands commits it first, once, as the agent's", async () => {
  const { root, make } = setup();
  const one = make();
  const two = make(); // another ccb process of the workspace
  const a = join(root, "a.txt");
  writeFileSync(a, "a0\n");
  await one.flush();
  await one.around(fsWrite([a]), AGENT, async () => writeFileSync(a, "agent\n"));
  assert.equal(queued(one.store).length, 1);
  writeFileSync(join(root, "b.txt"), "person b\n");
  writeFileSync(a, "person a\n");
  await two.flush(); // a listing in the other process: it finds the captured record and commits it
  await one.idle(); // this process's queued commit then finds nothing left to do
  const h = await history(two.store);
  assert.deepEqual(
    h.map(({ client, files, lines }) => ({ client, files, lines })),
    [
      { client: "agent", files: ["a.txt"], lines: ["-a0", "+agent"] },
      { client: "outside ccb", files: ["a.txt", "b.txt"], lines: ["-agent", "+person a", "+person b"] },
    ],
  );
});

test("a call that does not name its paths still records its after before it answers (a later scan could not tell who)", async () => {
  const { root, cps } = setup();
  await cps.flush();
  await cps.around({ name: "refactor", annotations: { readOnlyHint: false } }, AGENT, async () =>
    writeFileSync(join(root, "c.txt"), "c\n"),
  );
  assert.equal(queued(cps.store).length, 0);
  // Already committed: a store that only reads (no record, nothing settled) lists it.
  const list = await new CheckpointStore([root], { baseDir: join(cps.store.dir, "..") }).list({});
  assert.deepEqual(
    list.map((c) => [c.client, c.files]),
    [["agent", ["c.txt"]]],
  );
});

test("a clean shutdown right after an answer commits the queued record", async () => {
  const { root, baseDir } = setup();
  const core = createCore({ roots: [root], log: silentLogger });
  const cps = checkpointsOf(core, { baseDir });
  assert.ok(cps);
  const a = join(root, "a.txt");
  await cps.flush();
  await cps.around(fsWrite([a]), AGENT, async () => writeFileSync(a, "agent\n"));
  assert.equal(queued(cps.store).length, 1);
  await core.dispose();
  assert.equal(queued(cps.store).length, 0, "dispose waited for the queued record");
  // A store that only reads (it settles nothing) finds the record.
  const list = await new CheckpointStore([root], { baseDir }).list({});
  assert.deepEqual(
    list.map((c) => [c.client, c.files]),
    [["agent", ["a.txt"]]],
  );
});

test("a process killed right after an answer loses no record: the next record of any process commits it", async () => {
  const { root, baseDir } = setup();
  const a = join(root, "a.txt");
  writeFileSync(a, "a0\n");
  const src = (p: string) => JSON.stringify(new URL(`../../../../src/core/${p}`, import.meta.url).href);
  const script = `
    import { writeFileSync } from "node:fs";
    import { Checkpoints } from ${src("checkpoints/index.ts")};
    import { CheckpointStore } from ${src("checkpoints/store.ts")};
    import { FileService } from ${src("files/files.ts")};
    import { silentLogger } from ${src("log.ts")};
    import { Workspace } from ${src("workspace.ts")};
    const ws = new Workspace([${JSON.stringify(root)}]);
    const cps = new Checkpoints(new CheckpointStore(ws.roots, { baseDir: ${JSON.stringify(baseDir)} }),
      { files: new FileService(ws), workspace: ws }, silentLogger);
    await cps.flush();
    const a = ${JSON.stringify(a)};
    await cps.around({ name: "fs_write", annotations: { readOnlyHint: false }, paths: [a] },
      { frontEnd: "mcp", client: "agent" }, async () => writeFileSync(a, "agent\\n"));
    process.kill(process.pid, "SIGKILL"); // at once: its queued commit never runs
  `;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const signal = await new Promise((resolve) => child.on("exit", (_code, sig) => resolve(sig)));
  assert.equal(signal, "SIGKILL", stderr);
  const after = new Checkpoints(
    new CheckpointStore([root], { baseDir }),
    { files: new FileService(new Workspace([root])), workspace: new Workspace([root]) },
    silentLogger,
  );
  assert.equal(queued(after.store).length, 1, "the killed process's record was captured, not committed");
  writeFileSync(a, "person\n"); // the person, after the crash
  await after.flush(); // the restarted process's first record
  const h = await history(after.store);
  assert.deepEqual(
    h.map(({ client, lines }) => ({ client, lines })),
    [
      { client: "agent", lines: ["-a0", "+agent"] },
      { client: "outside ccb", lines: ["-agent", "+person"] },
    ],
  );
});
