// Attacks on the file tools without races: nested repositories (separate git dirs, gitlinks,
// bare-repo shapes), hard-link oracles, over-long names, and kill -9 during a large write.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { isCcbError } from "../../src/core/errors.ts";
import { FileService } from "../../src/core/files/files.ts";
import { Workspace } from "../../src/core/workspace.ts";
import { repoRoot } from "../helpers/cli.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

const gitEnv = { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
    cwd,
    env: gitEnv,
    stdio: "pipe",
  });

async function rejectsCode(p: Promise<unknown>, code: string, re?: RegExp): Promise<Error> {
  let caught: unknown;
  await p.then(
    () => assert.fail(`expected ${code}`),
    (e) => (caught = e),
  );
  assert.ok(isCcbError(caught, code as never), `expected ${code}, got ${String(caught)}`);
  if (re) assert.match((caught as Error).message, re);
  return caught as Error;
}

describe("file tools: nested repositories are git's, never the file tools'", () => {
  const t = tmpdirFixture({ git: true, prefix: "ccb-nested-" });
  const root = t.path;
  let files: FileService;
  before(() => {
    writeFileSync(join(root, "top.txt"), "top\n");
    git(root, "init", "-q", "--separate-git-dir=gd", "sub3");
    writeFileSync(join(root, "sub3", "a.txt"), "a\n");
    git(join(root, "sub3"), "add", "a.txt");
    git(join(root, "sub3"), "commit", "-qm", "a");
    git(root, "init", "-q", "sub2");
    files = new FileService(new Workspace([root]));
  });
  after(() => t.cleanup());

  it("refuses writes into a separate git dir (not named .git) and its subfolders", async () => {
    const before = readFileSync(join(root, "gd", "config"), "utf8");
    await rejectsCode(files.write("gd/config", '[filter "evil"]\n\tclean = sh evil.sh\n'), "PERMISSION_DENIED");
    await rejectsCode(files.write("gd/hooks/pre-commit", "#!/bin/sh\n", { createParents: true }), "PERMISSION_DENIED");
    await rejectsCode(files.write("gd/info/attributes", "*.txt filter=evil\n"), "PERMISSION_DENIED");
    assert.equal(readFileSync(join(root, "gd", "config"), "utf8"), before);
    assert.ok(!existsSync(join(root, "gd", "hooks", "pre-commit")));
  });

  it("refuses the .git pointer file and nested .git folders", async () => {
    await rejectsCode(files.write("sub3/.git", "gitdir: ../elsewhere\n"), "PERMISSION_DENIED");
    await rejectsCode(files.write("sub2/.git/config", "[core]\n"), "PERMISSION_DENIED");
    await rejectsCode(
      files.write("new/.git/HEAD", "ref: refs/heads/main\n", { createParents: true }),
      "PERMISSION_DENIED",
    );
    assert.ok(!existsSync(join(root, "new")), "nothing was created on the way");
  });

  it("refuses to assemble a directory git would take for a repository", async () => {
    await files.write("bare/objects/keep", "", { createParents: true });
    await files.write("bare/refs/keep", "", { createParents: true });
    await rejectsCode(files.write("bare/HEAD", "ref: refs/heads/main\n"), "PERMISSION_DENIED");
    assert.ok(!existsSync(join(root, "bare", "HEAD")));
  });

  it("fs_delete and fs_move never delete or move a nested repository's own folder", async () => {
    await rejectsCode(files.delete("gd", { recursive: true }), "PERMISSION_DENIED");
    await rejectsCode(files.delete("sub2", { recursive: true }), "PERMISSION_DENIED");
    await rejectsCode(files.delete("sub3", { recursive: true }), "PERMISSION_DENIED");
    await rejectsCode(files.delete("gd/config"), "PERMISSION_DENIED");
    mkdirSync(join(root, "src-dir"));
    writeFileSync(join(root, "src-dir", "x.txt"), "x\n");
    await rejectsCode(files.move("src-dir", "sub2", { overwrite: true }), "PERMISSION_DENIED");
    await rejectsCode(files.move("sub2", "moved-repo"), "PERMISSION_DENIED");
    await rejectsCode(files.move("gd", "gd2"), "PERMISSION_DENIED");
    await rejectsCode(files.move("top.txt", "gd/top.txt"), "PERMISSION_DENIED");
    for (const p of ["gd/HEAD", "sub2/.git/HEAD", "sub3/.git", "sub3/a.txt", "src-dir/x.txt", "top.txt"])
      assert.ok(existsSync(join(root, p)), p);
    // Positive control: an ordinary directory is deleted and moved.
    await files.move("src-dir", "dst-dir");
    await files.delete("dst-dir", { recursive: true });
    assert.ok(!existsSync(join(root, "dst-dir")));
  });
});

describe("file tools: hard links and over-long names", () => {
  const t = tmpdirFixture({ prefix: "ccb-guards-" });
  const root = join(t.path, "ws");
  const outside = join(t.path, "outside");
  let files: FileService;
  before(() => {
    mkdirSync(root);
    mkdirSync(outside);
    writeFileSync(join(outside, "secret.txt"), "top secret\n");
    linkSync(join(outside, "secret.txt"), join(root, "hard.txt"));
    files = new FileService(new Workspace([root]));
  });
  after(() => t.cleanup());

  it("fs_write to a hard-linked name reveals nothing about the outside file", async () => {
    const secretHash = execFileSync("sha256sum", [join(outside, "secret.txt")])
      .toString()
      .split(" ")[0] as string;
    const e = await rejectsCode(
      files.write("hard.txt", "x", { expectedVersion: secretHash }),
      "PATH_OUTSIDE_WORKSPACE",
    );
    assert.ok(!JSON.stringify({ m: e.message, d: (e as { details?: unknown }).details }).includes(secretHash));
    await rejectsCode(files.write("hard.txt", "x", { expectedVersion: "0".repeat(64) }), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(files.delete("hard.txt", { expectedVersion: secretHash }), "PATH_OUTSIDE_WORKSPACE");
    const w = await files.write("hard.txt", "replaced\n");
    assert.equal(w.previousVersion, null, "no hash of the outside file");
    assert.equal(readFileSync(join(outside, "secret.txt"), "utf8"), "top secret\n");
  });

  it("a 300-byte path component is PATH_TOO_LONG, not INTERNAL", async () => {
    const long = "a".repeat(300);
    await rejectsCode(files.write(long, "x"), "PATH_TOO_LONG");
    await rejectsCode(files.read(`${long}/x.txt`), "PATH_TOO_LONG");
    await rejectsCode(files.list({ path: long }), "PATH_TOO_LONG");
    await rejectsCode(files.delete(long), "PATH_TOO_LONG");
    await rejectsCode(files.move("hard.txt", long), "PATH_TOO_LONG");
  });
});

describe("kill -9 during a large write", { timeout: 300_000 }, () => {
  const runWriter = (ws: string, env: NodeJS.ProcessEnv, mib: number) =>
    spawn(
      process.execPath,
      ["--import", "tsx", join(repoRoot, "test/fixtures/big-writer.ts"), ws, "big.bin", String(mib)],
      { cwd: repoRoot, env, stdio: ["ignore", "pipe", "inherit"] },
    );

  it("leaves the old file and nothing else in the workspace; the next start removes the temp file", async () => {
    await using t = tmpdirFixture({ prefix: "ccb-kill-" });
    const ws = join(t.path, "ws");
    const scratch = join(t.path, "tmp");
    mkdirSync(ws);
    mkdirSync(scratch);
    writeFileSync(join(ws, "big.bin"), "old\n");
    const env = { ...process.env, TMPDIR: scratch };
    const priv = join(scratch, `ccb-${process.getuid?.()}`, "tmp");
    const child = runWriter(ws, env, 128);
    const exited = new Promise((r) => child.once("exit", r));
    let caught = false;
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline && child.exitCode === null) {
      await new Promise((r) => setTimeout(r, 1));
      if (existsSync(priv) && readdirSync(priv).length > 0) {
        child.kill("SIGKILL");
        caught = true;
        break;
      }
    }
    await exited;
    assert.ok(caught, "the writer was killed while its temp file existed (mid-write)");
    assert.deepEqual(readdirSync(ws), ["big.bin"], "nothing but the target in the workspace");
    assert.equal(readFileSync(join(ws, "big.bin"), "utf8"), "old\n", "the old content, whole");
    assert.ok(
      readdirSync(priv).length > 0,
      "the dead writer's temp file is in ccb's private folder, outside the workspace",
    );
    const next = runWriter(ws, env, 0);
    await new Promise((r) => next.once("exit", r));
    assert.deepEqual(readdirSync(priv), [], "the next start removed the dead process's temp file");
  });
});
