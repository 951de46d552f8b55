import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { indexGitlinks } from "../../../../src/core/git/index-file.ts";
import { git } from "../../../helpers/git.ts";
import { tmpdirFixture } from "../../../helpers/tmp.ts";

/** The direct index reader finds the same gitlinks as `git ls-files --stage`, for every index version. */

function gitlinksByGit(dir: string): string[] {
  return git(dir, "ls-files", "-z", "--stage")
    .split("\0")
    .filter((r) => r.startsWith("160000 "))
    .map((r) => r.slice(r.indexOf("\t") + 1));
}

test("indexGitlinks matches git ls-files for index versions 2, 3 and 4", async () => {
  await using ws = tmpdirFixture({ git: true });
  for (const name of ["a.txt", "b/c/d.txt", `zz/${"d".repeat(200)}/${"x".repeat(200)}`]) {
    mkdirSync(join(ws.path, name, ".."), { recursive: true });
    writeFileSync(join(ws.path, name), "x\n");
  }
  for (const sub of ["mods/one", "mods/two", "q"]) {
    const d = join(ws.path, sub);
    mkdirSync(d, { recursive: true });
    git(d, "init", "-q");
    git(d, "commit", "-q", "--allow-empty", "-m", "s");
  }
  git(ws.path, "add", ".");
  git(ws.path, "add", "--intent-to-add", "--", "a.txt"); // an extended-flags entry (index v3)
  git(ws.path, "commit", "-q", "-m", "c");
  writeFileSync(join(ws.path, "new.txt"), "n\n");
  git(ws.path, "add", "--intent-to-add", "new.txt");
  const expected = gitlinksByGit(ws.path);
  assert.deepEqual(expected, ["mods/one", "mods/two", "q"]);
  for (const v of ["2", "3", "4"]) {
    git(ws.path, "update-index", "--index-version", v);
    assert.deepEqual(await indexGitlinks(join(ws.path, ".git", "index"), 20), expected, `index version ${v}`);
  }
});

test("indexGitlinks: no index is no entries; a split index or garbage asks git instead", async () => {
  await using ws = tmpdirFixture({ git: true });
  assert.deepEqual(await indexGitlinks(join(ws.path, ".git", "index"), 20), []);
  writeFileSync(join(ws.path, "a.txt"), "a\n");
  git(ws.path, "add", "a.txt");
  git(ws.path, "update-index", "--split-index");
  assert.equal(await indexGitlinks(join(ws.path, ".git", "index"), 20), undefined);
  writeFileSync(join(ws.path, "garbage"), "not an index");
  assert.equal(await indexGitlinks(join(ws.path, "garbage"), 20), undefined);
});
