import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, it } from "node:test";
import { isCcbError } from "../../../../src/core/errors.ts";
import { FileService } from "../../../../src/core/files/files.ts";
import { lockPathFor, lockTargetAt } from "../../../../src/core/files/path-lock.ts";
import { openDirPath } from "../../../../src/core/files/safe/dir.ts";
import { Workspace } from "../../../../src/core/workspace.ts";
import { repoRoot } from "../../../helpers/cli.ts";
import { tmpdirFixture } from "../../../helpers/tmp.ts";

const sha = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

function rejectsCode(p: Promise<unknown>, code: string, hintPattern?: RegExp): Promise<void> {
  return assert.rejects(p, (err) => {
    assert.ok(isCcbError(err), `expected CcbError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    if (hintPattern) assert.match(err.hint ?? "", hintPattern);
    return true;
  });
}

/** A fresh workspace root plus a sibling directory outside it. */
function fixture() {
  const base = tmpdirFixture({ prefix: "ccb-files-" });
  const root = join(base.path, "root");
  const outside = join(base.path, "outside");
  mkdirSync(root);
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.txt"), "top secret\n");
  const ws = new Workspace([root]);
  return { base, root, outside, ws, files: new FileService(ws) };
}

describe("FileService.list", () => {
  const f = fixture();
  before(() => {
    const w = (p: string, c: string) => {
      mkdirSync(join(f.root, p, ".."), { recursive: true });
      writeFileSync(join(f.root, p), c);
    };
    w("README.md", "# readme\n");
    w("src/index.ts", "export {}\n");
    w("src/util/strings.ts", "export const s = 1;\n");
    w("src/util/deep/deeper/leaf.ts", "leaf\n");
    w("src/gen/out.js", "generated\n");
    w("src/.gitignore", "gen/\n*.log\n!keep.log\n");
    w("src/debug.log", "log\n");
    w("src/keep.log", "kept\n");
    w(".gitignore", "dist/\n");
    w("dist/bundle.js", "bundle\n");
    w(".env", "X=1\n");
    w(".git/HEAD", "ref: refs/heads/main\n");
    symlinkSync(join(f.outside, "secret.txt"), join(f.root, "secret-link"));
    linkSync(join(f.outside, "secret.txt"), join(f.root, "hard.txt"));
  });
  after(() => f.base.cleanup());

  it("lists direct children with sizes, types and versions", async () => {
    const r = await f.files.list({});
    assert.equal(r.truncated, false);
    assert.equal(r.dir, ".");
    const byPath = new Map(r.entries.map((e) => [e.path, e]));
    assert.deepEqual([...byPath.keys()], [".env", ".gitignore", "README.md", "hard.txt", "secret-link", "src"]);
    assert.equal(byPath.get("README.md")?.size, 9);
    assert.equal(byPath.get("README.md")?.version, sha("# readme\n"));
    assert.equal(byPath.get("src")?.type, "directory");
    assert.equal(byPath.get("src")?.version, undefined);
    assert.equal(byPath.get("secret-link")?.type, "symlink");
    assert.equal(byPath.get("secret-link")?.version, undefined, "symlinks are not followed");
    assert.equal(byPath.get("hard.txt")?.hardlinked, true);
    assert.equal(byPath.get("hard.txt")?.version, undefined, "no version (hash) of a hard-linked file");
  });

  it("recurses, honouring nested .gitignore files (with negation) and skipping .git", async () => {
    const r = await f.files.list({ recursive: true });
    const paths = r.entries.map((e) => e.path);
    assert.ok(paths.includes("src/util/deep/deeper/leaf.ts"));
    assert.ok(paths.includes("src/keep.log"), "negation re-includes");
    assert.ok(!paths.includes("src/debug.log"));
    assert.ok(!paths.some((p) => p.startsWith("src/gen")));
    assert.ok(!paths.some((p) => p.startsWith("dist")));
    assert.ok(!paths.some((p) => p.startsWith(".git/") || p === ".git"));
    const all = await f.files.list({ recursive: true, respectGitignore: false });
    const allPaths = all.entries.map((e) => e.path);
    assert.ok(
      allPaths.includes("src/gen/out.js") && allPaths.includes("dist/bundle.js") && allPaths.includes(".git/HEAD"),
    );
  });

  it("limits depth, filters by globs and hides dotfiles when asked", async () => {
    const d2 = await f.files.list({ path: "src", depth: 2 });
    const p2 = d2.entries.map((e) => e.path);
    assert.ok(p2.includes("src/util/strings.ts"));
    assert.ok(!p2.includes("src/util/deep/deeper"));
    const ts = await f.files.list({ recursive: true, include: ["*.ts"], exclude: ["deep/"] });
    assert.deepEqual(
      ts.entries.map((e) => e.path),
      ["src/index.ts", "src/util/strings.ts"],
    );
    const noHidden = await f.files.list({ includeHidden: false });
    assert.ok(!noHidden.entries.some((e) => e.path.startsWith(".")));
  });

  it("cuts at the limit and says so", async () => {
    const r = await f.files.list({ recursive: true, limit: 3 });
    assert.equal(r.entries.length, 3);
    assert.equal(r.truncated, true);
  });

  it("lists a single file, honours abort and refuses escapes", async () => {
    const one = await f.files.list({ path: "README.md" });
    assert.deepEqual(
      one.entries.map((e) => e.path),
      ["README.md"],
    );
    const ac = new AbortController();
    ac.abort();
    await rejectsCode(f.files.list({ recursive: true, signal: ac.signal }), "ABORTED");
    await rejectsCode(f.files.list({ path: "../outside" }), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(f.files.list({ path: "nope" }), "NOT_FOUND");
  });
});

describe("FileService.read", () => {
  const f = fixture();
  const text = "line 1\nline 2\nline 3\nline 4\n";
  before(() => {
    writeFileSync(join(f.root, "a.txt"), text);
    writeFileSync(join(f.root, "bin.dat"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
    writeFileSync(join(f.root, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    writeFileSync(join(f.root, "big.txt"), `${"x".repeat(99) + "\n".repeat(1) + "y".repeat(200)}\n`);
    mkdirSync(join(f.root, "dir"));
    execFileSync("mkfifo", [join(f.root, "fifo")]);
    symlinkSync(join(f.outside, "secret.txt"), join(f.root, "secret-link"));
    symlinkSync(f.outside, join(f.root, "outdir"));
    linkSync(join(f.outside, "secret.txt"), join(f.root, "hard.txt"));
    symlinkSync(join(f.root, "a.txt"), join(f.root, "a-link"));
  });
  after(() => f.base.cleanup());

  it("reads a whole text file with its version and line count", async () => {
    const r = await f.files.read("a.txt");
    assert.equal(r.content, text);
    assert.equal(r.version, sha(text));
    assert.equal(r.totalLines, 4);
    assert.equal(r.binary, false);
    assert.equal(r.truncated, false);
    assert.equal(r.path, "a.txt");
  });

  it("reads 1-based inclusive line ranges and byte ranges; the version is the whole file's", async () => {
    const r = await f.files.read("a.txt", { startLine: 2, endLine: 3 });
    assert.equal(r.content, "line 2\nline 3\n");
    assert.deepEqual(r.range, { startLine: 2, endLine: 3, byteOffset: 7, byteLength: 14 });
    assert.equal(r.version, sha(text));
    const tail = await f.files.read("a.txt", { startLine: 4 });
    assert.equal(tail.content, "line 4\n");
    const past = await f.files.read("a.txt", { startLine: 10 });
    assert.equal(past.content, "");
    const b = await f.files.read("a.txt", { byteOffset: 5, byteLength: 3 });
    assert.equal(b.content, "1\nl");
    await rejectsCode(f.files.read("a.txt", { startLine: 0 }), "INVALID_ARGUMENT");
    await rejectsCode(f.files.read("a.txt", { startLine: 3, endLine: 2 }), "INVALID_ARGUMENT");
    await rejectsCode(f.files.read("a.txt", { startLine: 1, byteOffset: 2 }), "INVALID_ARGUMENT");
  });

  it("cuts at maxBytes (at a line end) and says where to continue", async () => {
    const r = await f.files.read("big.txt", { maxBytes: 150 });
    assert.equal(r.truncated, true);
    assert.equal(r.content, `${"x".repeat(99)}\n`);
    assert.deepEqual(r.next, { byteOffset: 100, startLine: 2 });
    const rest = await f.files.read("big.txt", { byteOffset: r.next?.byteOffset });
    assert.equal(rest.content, `${"y".repeat(200)}\n`);
  });

  it("detects binary files: refuses with a hint, or returns base64 when asked", async () => {
    await rejectsCode(f.files.read("bin.dat"), "BINARY_FILE", /base64/);
    const r = await f.files.read("bin.dat", { encoding: "base64" });
    assert.equal(Buffer.from(r.content, "base64").length, 8);
    assert.equal(r.binary, true);
    const l = await f.files.read("latin1.txt", { encoding: "latin1" });
    assert.equal(l.content, "café\n");
    await rejectsCode(f.files.read("latin1.txt"), "BINARY_FILE");
  });

  it("refuses directories, FIFOs (without blocking) and missing files with next steps", async () => {
    await rejectsCode(f.files.read("dir"), "IS_DIRECTORY", /\{\{list\}\}/);
    await rejectsCode(f.files.read("fifo"), "INVALID_ARGUMENT");
    await rejectsCode(f.files.read("missing.txt"), "NOT_FOUND", /\{\{list\}\}/);
  });

  it("refuses symlink and hard-link escapes, follows inside symlinks", async () => {
    await rejectsCode(f.files.read("secret-link"), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(f.files.read("outdir/secret.txt"), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(f.files.read("hard.txt"), "PATH_OUTSIDE_WORKSPACE", /hard-linked/);
    await rejectsCode(f.files.read("../outside/secret.txt"), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(f.files.read(join(f.outside, "secret.txt")), "PATH_OUTSIDE_WORKSPACE");
    const viaLink = await f.files.read("a-link");
    assert.equal(viaLink.content, text);
    assert.equal(viaLink.path, "a.txt");
  });
});

describe("FileService.write", () => {
  const f = fixture();
  after(() => f.base.cleanup());

  const leftovers = (dir: string) => readdirSync(dir).filter((n) => n.includes(".ccb-"));

  it("creates, overwrites and returns versions", async () => {
    const c = await f.files.write("new.txt", "one\n", { expectedVersion: null });
    assert.equal(c.created, true);
    assert.equal(c.previousVersion, null);
    assert.equal(c.version, sha("one\n"));
    const o = await f.files.write("new.txt", "two\n", { expectedVersion: c.version });
    assert.equal(o.created, false);
    assert.equal(o.previousVersion, c.version);
    assert.equal(readFileSync(join(f.root, "new.txt"), "utf8"), "two\n");
    const b = await f.files.write("b64.bin", Buffer.from([0, 1, 2]).toString("base64"), { encoding: "base64" });
    assert.deepEqual([...readFileSync(join(f.root, "b64.bin"))], [0, 1, 2]);
    assert.equal(b.size, 3);
    assert.deepEqual(leftovers(f.root), []);
  });

  it("reports version conflicts with the current version", async () => {
    writeFileSync(join(f.root, "v.txt"), "current\n");
    await assert.rejects(f.files.write("v.txt", "x", { expectedVersion: sha("stale\n") }), (err) => {
      assert.ok(isCcbError(err, "VERSION_CONFLICT"));
      assert.equal(err.details?.currentVersion, sha("current\n"));
      assert.match(err.hint ?? "", /\{\{read\}\}/);
      return true;
    });
    await assert.rejects(
      f.files.write("v.txt", "x", { expectedVersion: null }),
      (err) => isCcbError(err, "VERSION_CONFLICT") && err.details?.currentVersion === sha("current\n"),
    );
    await assert.rejects(
      f.files.write("absent.txt", "x", { expectedVersion: sha("x") }),
      (err) => isCcbError(err, "VERSION_CONFLICT") && err.details?.currentVersion === null,
    );
    assert.equal(readFileSync(join(f.root, "v.txt"), "utf8"), "current\n");
  });

  it("creates parents only when asked", async () => {
    await rejectsCode(f.files.write("a/b/c.txt", "x"), "NOT_FOUND", /createParents/);
    await f.files.write("a/b/c.txt", "x", { createParents: true });
    assert.equal(readFileSync(join(f.root, "a/b/c.txt"), "utf8"), "x");
    await rejectsCode(f.files.write("a/b", "x"), "IS_DIRECTORY");
    await rejectsCode(f.files.write(".", "x"), "IS_DIRECTORY");
  });

  it("replaces atomically (new inode) and keeps the file mode", async () => {
    const p = join(f.root, "script.sh");
    writeFileSync(p, "#!/bin/sh\n");
    chmodSync(p, 0o754);
    const ino = statSync(p).ino;
    await f.files.write("script.sh", "#!/bin/sh\necho hi\n");
    const st = statSync(p);
    assert.equal(st.mode & 0o777, 0o754);
    assert.notEqual(st.ino, ino);
    assert.deepEqual(leftovers(f.root), []);
  });

  it("writing a hard-linked file leaves the outside inode untouched", async () => {
    const outsideFile = join(f.outside, "linked.txt");
    writeFileSync(outsideFile, "outside original\n");
    linkSync(outsideFile, join(f.root, "linked.txt"));
    await f.files.write("linked.txt", "inside new\n");
    assert.equal(readFileSync(outsideFile, "utf8"), "outside original\n");
    assert.equal(readFileSync(join(f.root, "linked.txt"), "utf8"), "inside new\n");
    assert.equal(lstatSync(join(f.root, "linked.txt")).nlink, 1);
  });

  it("refuses writes through symlinks that leave the workspace (file, parent dir, dangling)", async () => {
    symlinkSync(join(f.outside, "secret.txt"), join(f.root, "w-secret"));
    symlinkSync(f.outside, join(f.root, "w-outdir"));
    symlinkSync(join(f.outside, "planted.txt"), join(f.root, "w-dangling"));
    await rejectsCode(f.files.write("w-secret", "pwned"), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(f.files.write("w-outdir/new.txt", "pwned"), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(f.files.write("w-outdir/x/y.txt", "pwned", { createParents: true }), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(f.files.write("w-dangling", "pwned"), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(f.files.write("../outside/secret.txt", "pwned"), "PATH_OUTSIDE_WORKSPACE");
    assert.equal(readFileSync(join(f.outside, "secret.txt"), "utf8"), "top secret\n");
    assert.ok(!existsSync(join(f.outside, "planted.txt")));
    assert.ok(!existsSync(join(f.outside, "new.txt")));
  });

  it("breaks a lock left by a dead process, and waits for (then gives up on) a live one", async () => {
    writeFileSync(join(f.root, "locked.txt"), "x");
    // The lock lives in ccb's private folder, outside the workspace, named after the file's identity.
    const rootDir = openDirPath(f.root);
    const lockPath = lockPathFor(lockTargetAt(rootDir, "locked.txt", "locked.txt"));
    rootDir.close();
    assert.ok(!lockPath.startsWith(f.root));
    const dead = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    const deadPid = dead.pid as number;
    await new Promise((r) => dead.on("exit", r));
    writeFileSync(lockPath, `${deadPid}\n${hostname()}\n`);
    await f.files.write("locked.txt", "after stale lock");
    assert.equal(readFileSync(join(f.root, "locked.txt"), "utf8"), "after stale lock");
    assert.ok(!existsSync(lockPath));
    // a live holder (another process): waited for, then given up on
    const live = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    try {
      writeFileSync(lockPath, `${live.pid}\n${hostname()}\n`);
      const impatient = new FileService(f.ws, { lockTimeoutMs: 100 });
      await rejectsCode(impatient.write("locked.txt", "blocked"), "TIMEOUT", /ccb-lock/);
      assert.equal(readFileSync(join(f.root, "locked.txt"), "utf8"), "after stale lock");
    } finally {
      live.kill();
    }
    rmSync(lockPath);
  });

  it("20 concurrent writers with the same expectedVersion: exactly one wins", async () => {
    writeFileSync(join(f.root, "race.txt"), "base\n");
    const base = sha("base\n");
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => f.files.write("race.txt", `writer ${i}\n`, { expectedVersion: base })),
    );
    const won = results.filter((r) => r.status === "fulfilled");
    assert.equal(won.length, 1);
    const winner = (won[0] as PromiseFulfilledResult<{ version: string }>).value;
    for (const r of results) {
      if (r.status === "fulfilled") continue;
      assert.ok(isCcbError(r.reason, "VERSION_CONFLICT"), String(r.reason));
      assert.equal(r.reason.details?.currentVersion, winner.version);
    }
    assert.equal(sha(readFileSync(join(f.root, "race.txt"))), winner.version);
    assert.deepEqual(leftovers(f.root), []);
  });

  it("concurrent writers in separate processes: exactly one wins", { timeout: 120_000 }, async () => {
    writeFileSync(join(f.root, "xrace.txt"), "base\n");
    const base = sha("base\n");
    const n = 6;
    const children = Array.from({ length: n }, (_, i) =>
      spawn(
        process.execPath,
        [
          "--import",
          "tsx",
          join(repoRoot, "test/fixtures/concurrent-writer.ts"),
          f.root,
          "xrace.txt",
          base,
          `process ${i}\n`,
        ],
        {
          cwd: repoRoot,
          stdio: ["pipe", "pipe", "inherit"],
        },
      ),
    );
    try {
      const lines = children.map((c) => {
        const rl = createInterface({ input: c.stdout! });
        const it = rl[Symbol.asyncIterator]();
        return async () => (await it.next()).value as string;
      });
      for (const next of lines) assert.equal(await next(), "ready");
      for (const c of children) c.stdin!.write("go\n");
      const outcomes = await Promise.all(
        lines.map(
          async (next) =>
            JSON.parse(await next()) as {
              ok: boolean;
              code?: string;
              version?: string;
              details?: { currentVersion?: string };
            },
        ),
      );
      const winners = outcomes.filter((o) => o.ok);
      assert.equal(winners.length, 1, JSON.stringify(outcomes));
      for (const o of outcomes.filter((x) => !x.ok)) {
        assert.equal(o.code, "VERSION_CONFLICT");
        assert.equal(o.details?.currentVersion, winners[0]?.version);
      }
      assert.equal(sha(readFileSync(join(f.root, "xrace.txt"))), winners[0]?.version);
      assert.deepEqual(leftovers(f.root), []);
    } finally {
      for (const c of children) if (c.exitCode === null) c.kill();
    }
  });
});

describe("FileService.delete and move", () => {
  const f = fixture();
  after(() => f.base.cleanup());

  it("deletes files, and directories only with recursive", async () => {
    writeFileSync(join(f.root, "x.txt"), "x");
    mkdirSync(join(f.root, "d/e"), { recursive: true });
    writeFileSync(join(f.root, "d/e/f.txt"), "f");
    assert.deepEqual(await f.files.delete("x.txt"), { path: "x.txt", deleted: "file" });
    assert.ok(!existsSync(join(f.root, "x.txt")));
    await rejectsCode(f.files.delete("d"), "IS_DIRECTORY", /recursive/);
    assert.deepEqual(await f.files.delete("d", { recursive: true }), { path: "d", deleted: "directory" });
    assert.ok(!existsSync(join(f.root, "d")));
    await rejectsCode(f.files.delete("d"), "NOT_FOUND");
  });

  it("checks expectedVersion before deleting", async () => {
    writeFileSync(join(f.root, "v.txt"), "v1");
    await rejectsCode(f.files.delete("v.txt", { expectedVersion: sha("v0") }), "VERSION_CONFLICT");
    assert.ok(existsSync(join(f.root, "v.txt")));
    await f.files.delete("v.txt", { expectedVersion: sha("v1") });
    assert.ok(!existsSync(join(f.root, "v.txt")));
  });

  it("refuses to delete a root (also a nested root through the outer one) or anything outside", async () => {
    await rejectsCode(f.files.delete(".", { recursive: true }), "INVALID_ARGUMENT");
    await rejectsCode(f.files.delete(f.root, { recursive: true }), "INVALID_ARGUMENT");
    mkdirSync(join(f.root, "inner"));
    const multi = new FileService(new Workspace([f.root, join(f.root, "inner")]));
    await rejectsCode(multi.delete(join(f.root, "inner"), { recursive: true }), "INVALID_ARGUMENT");
    await rejectsCode(f.files.delete("../outside/secret.txt"), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(f.files.delete(join(f.outside, "secret.txt")), "PATH_OUTSIDE_WORKSPACE");
    assert.ok(existsSync(join(f.root, "inner")));
  });

  it("deletes a symlink itself, never its outside target", async () => {
    symlinkSync(join(f.outside, "secret.txt"), join(f.root, "s-link"));
    symlinkSync(f.outside, join(f.root, "s-dir"));
    await f.files.delete("s-link");
    await f.files.delete("s-dir", { recursive: true });
    await rejectsCode(f.files.delete("s-dir-missing/secret.txt"), "NOT_FOUND");
    assert.ok(!existsSync(join(f.root, "s-link")));
    assert.equal(readFileSync(join(f.outside, "secret.txt"), "utf8"), "top secret\n");
    symlinkSync(f.outside, join(f.root, "s-dir2"));
    await rejectsCode(f.files.delete("s-dir2/secret.txt"), "PATH_OUTSIDE_WORKSPACE");
    assert.ok(existsSync(join(f.outside, "secret.txt")));
  });

  it("moves without overwriting unless asked, and returns the version", async () => {
    writeFileSync(join(f.root, "m1.txt"), "m1");
    writeFileSync(join(f.root, "m2.txt"), "m2");
    await rejectsCode(f.files.move("m1.txt", "m2.txt"), "ALREADY_EXISTS", /overwrite/);
    assert.equal(readFileSync(join(f.root, "m2.txt"), "utf8"), "m2");
    const r = await f.files.move("m1.txt", "m2.txt", { overwrite: true });
    assert.deepEqual(r, { from: "m1.txt", to: "m2.txt", version: sha("m1") });
    assert.equal(readFileSync(join(f.root, "m2.txt"), "utf8"), "m1");
    const r2 = await f.files.move("m2.txt", "sub/m3.txt", { createParents: true });
    assert.equal(r2.to, "sub/m3.txt");
    await rejectsCode(f.files.move("sub/m3.txt", "nowhere/m.txt"), "NOT_FOUND", /createParents/);
    mkdirSync(join(f.root, "dd"));
    await rejectsCode(f.files.move("dd", "dd/inside"), "INVALID_ARGUMENT");
    await f.files.move("dd", "ee");
    assert.ok(existsSync(join(f.root, "ee")));
  });

  it("confines both ends of a move and never moves a root", async () => {
    writeFileSync(join(f.root, "mv.txt"), "mv");
    symlinkSync(f.outside, join(f.root, "mv-out"));
    await rejectsCode(f.files.move("mv.txt", "../outside/mv.txt"), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(f.files.move("mv.txt", "mv-out/mv.txt"), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(f.files.move(join(f.outside, "secret.txt"), "stolen.txt"), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(f.files.move("mv-out/secret.txt", "stolen.txt"), "PATH_OUTSIDE_WORKSPACE");
    await rejectsCode(f.files.move(".", "elsewhere"), "INVALID_ARGUMENT");
    assert.ok(existsSync(join(f.root, "mv.txt")));
    assert.ok(!existsSync(join(f.outside, "mv.txt")));
    assert.ok(existsSync(join(f.outside, "secret.txt")));
    // Moving the link itself is fine: it stays a link (reads through it are still refused).
    await f.files.move("mv-out", "mv-out-renamed");
    assert.ok(lstatSync(join(f.root, "mv-out-renamed")).isSymbolicLink());
    await rejectsCode(f.files.read("mv-out-renamed/secret.txt"), "PATH_OUTSIDE_WORKSPACE");
  });
});
