// Property: random sequences of file-tool operations (both search engines included) while a
// workspace directory and a symlink to an outside directory are exchanged in a tight loop
// (test/helpers/swap.py) never read, create, change, delete or move anything outside.
import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { FileService } from "../../src/core/files/files.ts";
import { SearchService } from "../../src/core/search/search.ts";
import { Workspace } from "../../src/core/workspace.ts";
import { startSwapper, treeSnapshot } from "../helpers/swap.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

const SECRET = "OUTSIDE-SECRET";

const snapshot = treeSnapshot;

describe("fast-check: operation sequences under a symlink swap", { timeout: 600_000 }, () => {
  const base = tmpdirFixture({ prefix: "ccb-swapseq-" });
  const ws = join(base.path, "ws");
  const outside = join(base.path, "outside");
  let files: FileService;
  let search: SearchService;
  let outsideBefore: Map<string, string>;
  before(() => {
    for (const d of [join(ws, "d", "sub"), join(outside, "sub")]) mkdirSync(d, { recursive: true });
    for (const n of ["a.txt", "b.txt", "sub/c.txt"]) {
      writeFileSync(join(ws, "d", n), "inside needle\n");
      writeFileSync(join(outside, n), `${SECRET} needle\n`);
    }
    symlinkSync(outside, join(ws, "alt"));
    outsideBefore = snapshot(outside);
    const workspace = new Workspace([ws]);
    files = new FileService(workspace);
    search = new SearchService(workspace);
  });
  after(() => base.cleanup());

  it("never touches or reveals the outside directory", async () => {
    const dir = fc.constantFrom("d", "alt", "d/sub", "alt/sub");
    const name = fc.constantFrom("a.txt", "b.txt", "c.txt", "n1.txt", "n2.txt", "sub");
    const path = fc.tuple(dir, name).map(([d, n]) => `${d}/${n}`);
    const op = fc.oneof(
      path.map((p) => ({ kind: "read" as const, p })),
      path.map((p) => ({ kind: "write" as const, p })),
      dir.map((p) => ({ kind: "list" as const, p })),
      fc
        .tuple(dir, fc.constantFrom("js" as const, "ripgrep" as const))
        .map(([p, engine]) => ({ kind: "search" as const, p, engine })),
      path.map((p) => ({ kind: "delete" as const, p })),
      fc.tuple(path, path).map(([p, q]) => ({ kind: "move" as const, p, q })),
    );
    const swapper = await startSwapper(join(ws, "d"), join(ws, "alt"));
    let succeeded = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 15 }), async (ops) => {
          for (const o of ops) {
            let out: unknown;
            try {
              switch (o.kind) {
                case "read":
                  out = await files.read(o.p);
                  break;
                case "write":
                  out = await files.write(o.p, "written inside\n", { createParents: true });
                  break;
                case "list":
                  out = await files.list({ path: o.p, recursive: true });
                  break;
                case "search":
                  out = await search.search({ query: "needle", path: o.p, engine: o.engine });
                  break;
                case "delete":
                  out = await files.delete(o.p, { recursive: true });
                  break;
                case "move":
                  out = await files.move(o.p, o.q, { overwrite: true, createParents: true });
                  break;
              }
              succeeded++;
            } catch (err) {
              out = err;
            }
            const shown = JSON.stringify(out, (_k, v) => (v instanceof Error ? { ...v, message: v.message } : v)) ?? "";
            assert.ok(
              !shown.includes(SECRET),
              `${o.kind} ${JSON.stringify(o)} revealed outside content: ${shown.slice(0, 300)}`,
            );
            assert.ok(!shown.includes("outside/"), `${o.kind} named an outside path: ${shown.slice(0, 300)}`);
          }
        }),
        { numRuns: 40 },
      );
    } finally {
      await swapper.stop();
    }
    assert.deepEqual(snapshot(outside), outsideBefore, "nothing outside was created, changed, deleted or moved");
    assert.ok(succeeded > 0, "some operations succeeded");
  });
});
