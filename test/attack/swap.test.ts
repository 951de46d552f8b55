// Attack: a directory of the workspace is exchanged with a symlink to an outside directory
// (renameat2(RENAME_EXCHANGE), test/helpers/swap.py) in a tight loop while ccb's real MCP tools
// (spawned `ccb serve --stdio`, SDK client) work on paths under it. Nothing may be read,
// written, created, deleted or moved outside, and the checkpoints recorded around every call that
// changes files (core/checkpoints/) hold nothing of the outside. A positive control shows the swap
// does let a naive check-then-open read outside.
//
// The file tools' attempts run on a serve with checkpoints off: recording costs git processes per
// call (about 0.5 s each beside the swapper's busy core), which made this file take 542 s of a 600 s
// bound in CI. What the store records under the swap is attacked by its own test below, on a serve
// as users run it (checkpoints on), with fewer attempts and full scans between them; the store's
// staging is raced directly, with a positive control, in test/unit/core/checkpoints/swap-race.test.ts.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { connectStdio, type StdioPeer } from "../helpers/serve.ts";
import { startSwapper, treeSnapshot } from "../helpers/swap.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

const ATTEMPTS = 200;
const SECRET = "OUTSIDE-SECRET";

type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }> };
const text = (r: ToolResult) => r.content.map((c) => c.text ?? "").join("\n");

const snapshot = treeSnapshot;

describe("symlink swap attack against the file tools (ccb serve --stdio)", { timeout: 600_000 }, () => {
  const base = tmpdirFixture({ prefix: "ccb-swap-" });
  const ws = join(base.path, "ws");
  const outside = join(base.path, "outside");
  let peer: StdioPeer;
  /** A serve as users run it: checkpoints on, its store in the test's state folder. */
  let recording: StdioPeer;
  let outsideBefore: Map<string, string>;

  before(async () => {
    mkdirSync(join(ws, "d", "sub"), { recursive: true });
    mkdirSync(join(outside, "sub"), { recursive: true });
    writeFileSync(join(ws, "d", "f.txt"), "inside needle\n");
    writeFileSync(join(ws, "d", "sub", "g.txt"), "inside needle too\n");
    writeFileSync(join(outside, "f.txt"), `${SECRET} needle\n`);
    writeFileSync(join(outside, "sub", "g.txt"), `${SECRET} needle too\n`);
    writeFileSync(join(outside, "only-outside.txt"), `${SECRET}\n`);
    for (let i = 0; i < ATTEMPTS; i++) {
      writeFileSync(join(ws, "d", `victim-${i}.txt`), "inside victim\n");
      writeFileSync(join(outside, `victim-${i}.txt`), `${SECRET} victim\n`);
      writeFileSync(join(ws, "d", `m-${i}.txt`), "inside movable\n");
      writeFileSync(join(outside, `m-${i}.txt`), `${SECRET} movable\n`);
      writeFileSync(join(ws, `top-${i}.txt`), "inside top\n");
    }
    symlinkSync(outside, join(ws, "alt"));
    outsideBefore = snapshot(outside);
    peer = await connectStdio(ws, [], { XDG_STATE_HOME: join(base.path, "state-off"), CCB_CHECKPOINTS: "off" });
    recording = await connectStdio(ws, [], { XDG_STATE_HOME: join(base.path, "state") });
  });
  after(async () => {
    await peer?.close();
    await recording?.close();
    base.cleanup();
  });

  const call = async (name: string, args: Record<string, unknown>, via = peer) =>
    (await via.client.callTool({ name, arguments: args })) as ToolResult;

  /** Run `attempt(i)` `attempts` times with the swapper running. */
  async function underSwap(attempt: (i: number) => Promise<void>, attempts = ATTEMPTS): Promise<number> {
    const swapper = await startSwapper(join(ws, "d"), join(ws, "alt"));
    try {
      for (let i = 0; i < attempts; i++) await attempt(i);
    } finally {
      const n = await swapper.stop();
      assert.ok(n > attempts, `the swapper really swapped (${n} exchanges)`);
    }
    assert.ok(realpathSync(join(ws, "d")) === join(ws, "d"), "d is the real directory again");
    return 0;
  }

  const assertOutsideUntouched = () =>
    assert.deepEqual(snapshot(outside), outsideBefore, "nothing outside was created, changed, deleted or moved");

  it("positive control: a naive realpath-check-then-read leaks outside content under the swap", async () => {
    let leaks = 0;
    const swapper = await startSwapper(join(ws, "d"), join(ws, "alt"));
    try {
      for (let i = 0; i < 20_000 && leaks === 0; i++) {
        const p = join(ws, "d", "f.txt");
        let real: string;
        try {
          real = realpathSync(p);
        } catch {
          continue;
        }
        if (!real.startsWith(`${ws}/`)) continue; // the check: refuse what resolves outside
        try {
          if (readFileSync(p, "utf8").includes(SECRET)) leaks++; // the use: by path again
        } catch {
          // mid-swap
        }
      }
    } finally {
      await swapper.stop();
    }
    assert.ok(leaks > 0, "the harness makes a check-then-use race observable");
  });

  it("fs_read never returns outside content", async () => {
    let ok = 0;
    await underSwap(async () => {
      const r = await call("fs_read", { path: "d/f.txt" });
      assert.ok(!text(r).includes(SECRET), text(r));
      if (!r.isError) ok++;
    });
    assert.ok(ok > 0, "some reads succeeded (the tool was really exercised)");
  });

  it("fs_list never lists outside entries", async () => {
    await underSwap(async () => {
      const r = await call("fs_list", { path: "d", recursive: true, limit: 2000 });
      assert.ok(!text(r).includes("only-outside"), text(r).slice(0, 500));
    });
  });

  it("fs_search never returns outside lines (ripgrep)", async () => {
    let hits = 0;
    await underSwap(async (i) => {
      const r = await call("fs_search", i % 2 === 0 ? { query: "needle", path: "d" } : { query: "needle" });
      assert.ok(!text(r).includes(SECRET), text(r));
      if (/inside needle/.test(text(r))) hits++;
    });
    assert.ok(hits > 0, "some searches found the inside matches");
  });

  it("fs_write never creates or changes a file outside", async () => {
    let ok = 0;
    await underSwap(async (i) => {
      const r = await call("fs_write", {
        path: i % 2 === 0 ? `d/new-${i}.txt` : "d/f.txt",
        content: i % 2 === 0 ? "new\n" : "inside needle\n",
      });
      if (!r.isError) ok++;
      assert.ok(!text(r).includes(SECRET));
    });
    assertOutsideUntouched();
    assert.ok(ok > 0);
    // No temp or lock debris next to the files.
    assert.deepEqual(
      readdirSync(join(ws, "d")).filter((n) => n.includes("ccb-")),
      [],
    );
  });

  it("fs_write with createParents never creates directories outside", async () => {
    await underSwap(async (i) => {
      await call("fs_write", { path: `d/sub/deep-${i}/x.txt`, content: "x\n", createParents: true });
    });
    assertOutsideUntouched();
  });

  it("fs_delete never deletes outside", async () => {
    let ok = 0;
    await underSwap(async (i) => {
      const r = await call("fs_delete", { path: `d/victim-${i}.txt` });
      if (!r.isError) ok++;
    });
    assertOutsideUntouched();
    assert.ok(ok > 0);
  });

  it("fs_delete recursive never deletes outside", async () => {
    // Set up before the swap starts: the test's own path-based writes would follow the swap.
    for (let i = 0; i < ATTEMPTS; i++) {
      mkdirSync(join(ws, "d", `tree-${i}`, "x"), { recursive: true });
      writeFileSync(join(ws, "d", `tree-${i}`, "x", "t.txt"), "inside\n");
      mkdirSync(join(outside, `tree-${i}`, "x"), { recursive: true });
      writeFileSync(join(outside, `tree-${i}`, "x", "keep.txt"), SECRET);
    }
    outsideBefore = snapshot(outside);
    let ok = 0;
    await underSwap(async (i) => {
      const r = await call("fs_delete", { path: `d/tree-${i}`, recursive: true });
      if (!r.isError) ok++;
    });
    assertOutsideUntouched();
    assert.ok(ok > 0);
  });

  it("fs_move never moves outside files in, nor workspace files out", async () => {
    let ok = 0;
    await underSwap(async (i) => {
      const r =
        i % 2 === 0
          ? await call("fs_move", { from: `d/m-${i}.txt`, to: `moved-${i}.txt` })
          : await call("fs_move", { from: `top-${i}.txt`, to: `d/top-${i}.txt` });
      if (!r.isError) ok++;
    });
    assertOutsideUntouched();
    assert.ok(ok > 0);
    for (let i = 0; i < ATTEMPTS; i += 2) {
      const p = join(ws, `moved-${i}.txt`);
      if (existsSync(p)) assert.ok(!readFileSync(p, "utf8").includes(SECRET), `moved-${i}.txt came from inside`);
    }
  });

  it("the checkpoints recorded under the swap hold nothing of the outside", async () => {
    // Named-path records (fs_write, fs_move) and full scans (checkpoint_list flushes the whole tree)
    // while d/ is swapped, on the serve that records. First one full scan with d/ in place: the
    // store's record of the workspace (the positive control below).
    const first = await call("checkpoint_list", { limit: 1 }, recording);
    assert.ok(!first.isError, text(first));
    let ok = 0;
    await underSwap(async (i) => {
      const r =
        i % 3 === 0
          ? await call("fs_write", { path: `d/ck-${i}.txt`, content: "inside recorded\n" }, recording)
          : i % 3 === 1
            ? await call("fs_move", { from: `d/m-${2 * i + 1}.txt`, to: `ck-moved-${i}.txt` }, recording)
            : await call("checkpoint_list", { limit: 5 }, recording);
      if (!r.isError) ok++;
      assert.ok(!text(r).includes(SECRET), text(r));
    }, 60);
    assert.ok(ok > 0, "some recorded calls succeeded");
    assertOutsideUntouched();
    const stores = join(base.path, "state", "ccb", "checkpoints");
    const repos = readdirSync(stores).flatMap((k) =>
      readdirSync(join(stores, k))
        .filter((n) => n.endsWith(".git"))
        .map((n) => join(stores, k, n)),
    );
    assert.equal(repos.length, 1);
    const objects = execFileSync(
      "git",
      ["--git-dir", repos[0] as string, "cat-file", "--batch-all-objects", "--batch"],
      {
        maxBuffer: 512 << 20,
      },
    ).toString("latin1");
    assert.match(objects, /inside movable/, "the store did record the workspace");
    assert.ok(!objects.includes(SECRET), "no checkpoint holds outside content");
  });
});
