import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { isCcbError } from "../../../../src/core/errors.ts";
import { GitService } from "../../../../src/core/git/git.ts";
import { parseConfigList } from "../../../../src/core/git/preflight.ts";
import { parsePorcelainV2 } from "../../../../src/core/git/status.ts";
import { Workspace } from "../../../../src/core/workspace.ts";
import { git, silentServer } from "../../../helpers/git.ts";
import { tmpdirFixture } from "../../../helpers/tmp.ts";

function repoWithCommit(dir: string): void {
  writeFileSync(join(dir, "a.txt"), "alpha\n");
  writeFileSync(join(dir, "b.txt"), "bravo\n");
  writeFileSync(join(dir, "c.txt"), "charlie charlie charlie charlie\n");
  git(dir, "add", ".");
  git(dir, "commit", "-q", "-m", "initial");
}

test("parsePorcelainV2: headers, ordinary, renamed, unmerged, untracked and ignored records", () => {
  const out = [
    "# branch.oid 0123456789abcdef0123456789abcdef01234567",
    "# branch.head feature/x",
    "# branch.upstream origin/feature/x",
    "# branch.ab +2 -3",
    "1 .M N... 100644 100644 100644 aaaa bbbb dir/with space.txt",
    "2 R. N... 100644 100644 100644 aaaa aaaa R87 new name.txt",
    "old name.txt",
    "u UU N... 100644 100644 100644 100644 a b c conflict.txt",
    "1 .M S.M. 160000 160000 160000 aaaa aaaa sub",
    "? untracked file.txt",
    "! ignored.log",
    "",
  ].join("\0");
  const st = parsePorcelainV2(out);
  assert.equal(st.oid, "0123456789abcdef0123456789abcdef01234567");
  assert.equal(st.branch, "feature/x");
  assert.equal(st.detached, false);
  assert.equal(st.upstream, "origin/feature/x");
  assert.equal(st.ahead, 2);
  assert.equal(st.behind, 3);
  assert.deepEqual(st.entries, [
    { path: "dir/with space.txt", index: ".", worktree: "M", kind: "changed" },
    { path: "new name.txt", index: "R", worktree: ".", kind: "renamed", origPath: "old name.txt", score: 87 },
    { path: "conflict.txt", index: "U", worktree: "U", kind: "unmerged" },
    { path: "sub", index: ".", worktree: "M", kind: "changed", submodule: true },
    { path: "untracked file.txt", index: "?", worktree: "?", kind: "untracked" },
    { path: "ignored.log", index: "!", worktree: "!", kind: "ignored" },
  ]);
  const detached = parsePorcelainV2("# branch.oid (initial)\0# branch.head (detached)\0");
  assert.equal(detached.oid, null);
  assert.equal(detached.branch, null);
  assert.equal(detached.detached, true);
});

test("parseConfigList: scope/origin/key/value records, valueless keys, command scope skipped", () => {
  const out =
    "local\0file:.git/config\0core.bare\nfalse\0command\0command line:\0core.hookspath\n/dev/null\0local\0file:.git/config\0filter.x.clean\0";
  assert.deepEqual(parseConfigList(out, true), [
    { scope: "local", origin: "file:.git/config", key: "core.bare", value: "false" },
    { scope: "local", origin: "file:.git/config", key: "filter.x.clean", value: null },
  ]);
});

test("status: modified, staged, untracked, renamed and deleted files in a real repo", async () => {
  await using dir = tmpdirFixture({ git: true });
  repoWithCommit(dir.path);
  writeFileSync(join(dir.path, "a.txt"), "alpha 2\n"); // unstaged modification
  writeFileSync(join(dir.path, "b.txt"), "bravo 2\n");
  git(dir.path, "add", "b.txt"); // staged modification
  git(dir.path, "mv", "c.txt", "renamed.txt"); // staged rename
  mkdirSync(join(dir.path, "new dir"));
  writeFileSync(join(dir.path, "new dir", "u.txt"), "untracked\n");
  const svc = new GitService(new Workspace([dir.path]));
  const st = await svc.status();
  assert.equal(st.repo, ".");
  assert.equal(st.branch, "main");
  assert.equal(st.upstream, null);
  assert.equal(st.clean, false);
  const by = new Map(st.entries.map((e) => [e.path, e]));
  assert.deepEqual([by.get("a.txt")?.index, by.get("a.txt")?.worktree], [".", "M"]);
  assert.deepEqual([by.get("b.txt")?.index, by.get("b.txt")?.worktree], ["M", "."]);
  assert.equal(by.get("renamed.txt")?.kind, "renamed");
  assert.equal(by.get("renamed.txt")?.index, "R");
  assert.equal(by.get("renamed.txt")?.origPath, "c.txt");
  assert.equal(by.get("new dir/u.txt")?.kind, "untracked");
  assert.equal(st.entries.length, 4);

  // paths narrow it; a subdirectory as cwd still reports repository-relative paths
  const only = await svc.status({ paths: ["a.txt"] });
  assert.deepEqual(
    only.entries.map((e) => e.path),
    ["a.txt"],
  );
  const fromSub = await svc.status({ path: "new dir" });
  assert.equal(fromSub.entries.length, 4);
  const noUntracked = await svc.status({ untracked: false });
  assert.equal(
    noUntracked.entries.some((e) => e.kind === "untracked"),
    false,
  );
});

test("status: a clean repo, then ahead/behind against a local bare upstream", async () => {
  await using ws = tmpdirFixture({ git: true });
  await using remoteDir = tmpdirFixture();
  repoWithCommit(ws.path);
  const bare = join(remoteDir.path, "upstream.git");
  git(remoteDir.path, "init", "-q", "--bare", "-b", "main", bare);
  git(ws.path, "remote", "add", "origin", bare);
  git(ws.path, "push", "-q", "-u", "origin", "main");
  const svc = new GitService(new Workspace([ws.path]));
  const clean = await svc.status();
  assert.equal(clean.clean, true);
  assert.equal(clean.upstream, "origin/main");
  assert.deepEqual([clean.ahead, clean.behind], [0, 0]);

  // someone else pushes one commit; we make two of our own
  const other = join(remoteDir.path, "other");
  git(remoteDir.path, "clone", "-q", bare, other);
  writeFileSync(join(other, "theirs.txt"), "theirs\n");
  git(other, "add", ".");
  git(other, "commit", "-q", "-m", "theirs");
  git(other, "push", "-q", "origin", "main");
  for (const n of [1, 2]) {
    writeFileSync(join(ws.path, `ours${n}.txt`), "ours\n");
    git(ws.path, "add", ".");
    git(ws.path, "commit", "-q", "-m", `ours ${n}`);
  }
  git(ws.path, "fetch", "-q", "origin");
  const st = await svc.status();
  assert.equal(st.branch, "main");
  assert.equal(st.upstream, "origin/main");
  assert.equal(st.ahead, 2);
  assert.equal(st.behind, 1);
  assert.equal(st.clean, true);
});

test("status outside a repository is GIT_FAILED with a hint", async () => {
  await using dir = tmpdirFixture();
  const svc = new GitService(new Workspace([dir.path]));
  await assert.rejects(
    svc.status(),
    (e: unknown) => isCcbError(e, "GIT_FAILED") && /Not a git repository/.test(e.message) && /init/.test(e.hint ?? ""),
  );
});

test("diff: unstaged, staged, by path, and the size cap says it truncated", async () => {
  await using dir = tmpdirFixture({ git: true });
  repoWithCommit(dir.path);
  writeFileSync(join(dir.path, "a.txt"), "alpha changed\n");
  writeFileSync(join(dir.path, "b.txt"), "bravo changed\n");
  git(dir.path, "add", "b.txt");
  const svc = new GitService(new Workspace([dir.path]));

  const unstaged = await svc.diff();
  assert.equal(unstaged.truncated, false);
  assert.match(unstaged.diff, /^\+alpha changed$/m);
  assert.doesNotMatch(unstaged.diff, /bravo/);

  const staged = await svc.diff({ staged: true });
  assert.match(staged.diff, /^\+bravo changed$/m);
  assert.doesNotMatch(staged.diff, /alpha/);

  writeFileSync(join(dir.path, "c.txt"), "charlie changed\n");
  const onlyC = await svc.diff({ paths: ["c.txt"] });
  assert.match(onlyC.diff, /c\.txt/);
  assert.doesNotMatch(onlyC.diff, /a\.txt/);

  writeFileSync(join(dir.path, "a.txt"), Array.from({ length: 5000 }, (_, i) => `line ${i}`).join("\n"));
  const capped = await svc.diff({ maxBytes: 2000 });
  assert.equal(capped.truncated, true);
  assert.ok(Buffer.byteLength(capped.diff) <= 2000);
  assert.ok(capped.diff.endsWith("\n"), "cut at a line boundary");
  assert.ok((capped.bytes ?? 0) > 2000);
  assert.match(capped.message ?? "", /truncated/);
  const full = await svc.diff();
  assert.equal(full.truncated, false);
  assert.equal(full.message, undefined);
  assert.ok(full.diff.length > 20_000);
});

test("run: add, commit and log through git_run's service; non-zero exit codes are results", async () => {
  await using dir = tmpdirFixture({ git: true });
  const svc = new GitService(new Workspace([dir.path]));
  writeFileSync(join(dir.path, "f.txt"), "one\n");
  assert.equal((await svc.run(["add", "f.txt"])).exitCode, 0);
  const commit = await svc.run(["commit", "-m", "first commit"]);
  assert.equal(commit.exitCode, 0, commit.stderr);
  const log = await svc.run(["log", "--format=%s|%an|%ae"]);
  assert.equal(log.stdout.trim(), "first commit|ccb test|test@example.com"); // the repository's own identity
  const nothing = await svc.run(["commit", "-m", "empty"]);
  assert.equal(nothing.exitCode, 1);
  assert.match(nothing.stdout + nothing.stderr, /nothing to commit/);
  const bad = await svc.run(["rev-parse", "--verify", "no-such-ref"]);
  assert.equal(bad.exitCode, 128);
  assert.match(bad.stderr, /fatal/);
  const version = await svc.run(["--version"]);
  assert.match(version.stdout, /^git version/);
  // a commit message that looks like a path is not a path
  writeFileSync(join(dir.path, "f.txt"), "two\n");
  const msg = await svc.run(["commit", "-am", "/etc/passwd is not touched"]);
  assert.equal(msg.exitCode, 0, msg.stderr);
});

test("run: a commit without -m does not wait for an editor", async () => {
  await using dir = tmpdirFixture({ git: true });
  writeFileSync(join(dir.path, "f.txt"), "x\n");
  const svc = new GitService(new Workspace([dir.path]));
  await svc.run(["add", "f.txt"]);
  const r = await svc.run(["commit"]);
  assert.notEqual(r.exitCode, 0);
  assert.match(r.stderr, /empty commit message/i);
});

test("run: cwd is confined and relative to the workspace", async () => {
  await using dir = tmpdirFixture({ git: true });
  repoWithCommit(dir.path);
  mkdirSync(join(dir.path, "sub"));
  writeFileSync(join(dir.path, "sub", "s.txt"), "s\n");
  const svc = new GitService(new Workspace([dir.path]));
  const r = await svc.run(["status", "--short", "."], { cwd: "sub" });
  assert.equal(r.stdout.trim(), "?? ./");
  await assert.rejects(svc.run(["status"], { cwd: ".." }), (e: unknown) => isCcbError(e, "PATH_OUTSIDE_WORKSPACE"));
  await assert.rejects(svc.run(["status"], { cwd: "nope" }), (e: unknown) => isCcbError(e, "NOT_FOUND"));
});

test("run: output cap keeps the first bytes and reports truncation", async () => {
  await using dir = tmpdirFixture({ git: true });
  writeFileSync(join(dir.path, "big.txt"), "0123456789\n".repeat(100_000));
  git(dir.path, "add", ".");
  git(dir.path, "commit", "-q", "-m", "big");
  const svc = new GitService(new Workspace([dir.path]));
  const r = await svc.run(["show", "HEAD:big.txt"], { maxBytes: 1000 });
  assert.equal(r.exitCode, 0);
  assert.equal(r.truncated, true);
  assert.equal(Buffer.byteLength(r.stdout), 1000);
  assert.equal(r.stdoutBytes, 1_100_000);
  const whole = await svc.run(["show", "HEAD:big.txt"], { maxBytes: 2_000_000 });
  assert.equal(whole.truncated, false);
  assert.equal(whole.stdout.length, 1_100_000);
});

test("run: a command exceeding its timeout is killed (TIMEOUT) and its connection closes", async () => {
  await using dir = tmpdirFixture({ git: true });
  const server = await silentServer();
  try {
    const svc = new GitService(new Workspace([dir.path]));
    const started = svc.run(["ls-remote", `git://127.0.0.1:${server.port}/repo`], { timeoutMs: 1500 });
    await assert.rejects(started, (e: unknown) => isCcbError(e, "TIMEOUT") && /killed/.test(e.message));
    await server.connected;
    await server.closed; // the process (group) is gone, so its socket closed
  } finally {
    await server.close();
  }
});

test("run: an AbortSignal kills the command (ABORTED)", async () => {
  await using dir = tmpdirFixture({ git: true });
  const server = await silentServer();
  try {
    const svc = new GitService(new Workspace([dir.path]));
    const ac = new AbortController();
    const started = svc.run(["ls-remote", `git://127.0.0.1:${server.port}/repo`], {
      signal: ac.signal,
      timeoutMs: 120_000,
    });
    await server.connected;
    ac.abort();
    await assert.rejects(started, (e: unknown) => isCcbError(e, "ABORTED"));
    await server.closed;
    await assert.rejects(svc.run(["status"], { signal: ac.signal }), (e: unknown) => isCcbError(e, "ABORTED"));
  } finally {
    await server.close();
  }
});

test("parseGitArgs (property): a refused key or program option never gets through, and only CcbErrors are thrown", async () => {
  const fc = (await import("fast-check")).default;
  const { parseGitArgs } = await import("../../../../src/core/git/args.ts");
  const { CcbError } = await import("../../../../src/core/errors.ts");
  const safe = fc.constantFrom(
    "status",
    "log",
    "--oneline",
    "-n",
    "3",
    "HEAD",
    "main",
    "--",
    "a.txt",
    "-m",
    "msg",
    "--no-pager",
    "-C",
    "sub",
    "-c",
    "user.name=x",
    "--stat",
    "commit",
    "diff",
    "config",
    "--get",
    "fetch",
    "origin",
  );
  const dangerous = fc.constantFrom(
    ["-c", "core.hooksPath=x"],
    ["-c", "CORE.FSMONITOR=x"],
    ["-c", "alias.x=!sh"],
    ["-c", "filter.a.clean=x"],
    ["--config-env=core.editor=HOME"],
    ["-c", "include.path=x"],
    ["-c", "protocol.ext.allow=always"],
    ["-c", "credential.helper=x"],
    ["-c", "diff.x.textconv=x"],
  );
  fc.assert(
    fc.property(fc.array(safe, { maxLength: 8 }), dangerous, fc.array(safe, { maxLength: 8 }), (before, bad, after) => {
      // Put the dangerous global option before the subcommand: it must always be refused.
      const args = [
        ...bad,
        ...before.filter(
          (t) => t.startsWith("-") && t !== "-c" && t !== "-C" && t !== "-n" && t !== "-m" && t !== "--",
        ),
        "status",
        ...after,
      ];
      try {
        parseGitArgs(args);
        return false;
      } catch (e) {
        return e instanceof CcbError && e.code === "GIT_REFUSED";
      }
    }),
    { numRuns: 500 },
  );
  fc.assert(
    fc.property(fc.array(fc.oneof(safe, fc.string({ maxLength: 12 })), { maxLength: 12 }), (args) => {
      try {
        const p = parseGitArgs(args);
        return Array.isArray(p.pathTokens) && (p.sub === null || typeof p.sub === "string");
      } catch (e) {
        return e instanceof CcbError;
      }
    }),
    { numRuns: 2000 },
  );
});

test("parseGitArgs: values of path-valued keys are path tokens; options that enter submodules are refused", async () => {
  const { parseGitArgs } = await import("../../../../src/core/git/args.ts");
  const refusedArgs = (e: unknown) => e instanceof Error && (e as { code?: string }).code === "GIT_REFUSED";
  assert.ok(parseGitArgs(["-c", "commit.template=/etc/passwd", "commit"]).pathTokens.includes("/etc/passwd"));
  assert.ok(parseGitArgs(["-c", "Blame.IgnoreRevsFile=../x", "blame", "a"]).pathTokens.includes("../x"));
  assert.ok(parseGitArgs(["-c", "http.https://h.example.sslCAInfo=/ca.pem", "fetch"]).pathTokens.includes("/ca.pem"));
  assert.ok(parseGitArgs(["config", "core.excludesFile", "/tmp/x"]).pathTokens.includes("/tmp/x"));
  assert.equal(
    parseGitArgs(["-c", "user.signingKey=ABCDEF12", "log"]).pathTokens.includes("ABCDEF12"),
    false,
    "a key id is not a path",
  );
  for (const args of [
    ["status", "--recurse-submodules"],
    ["checkout", "--recurse-submodules=yes", "main"],
    ["grep", "--recurse-sub", "x"],
    ["diff", "--submodule=diff"],
    ["status", "--ignore-submodules=none"],
    ["diff", "--ignore-submodules=untracked"],
    ["-c", "submodule.recurse=true", "checkout", "main"],
    ["-c", "submodule.x.ignore=none", "status"],
    ["-c", "diff.ignoreSubmodules=none", "status"],
    ["config", "-f", ".gitmodules", "submodule.x.ignore", "none"],
  ]) {
    assert.throws(() => parseGitArgs(args), refusedArgs, args.join(" "));
  }
  for (const args of [
    ["clone", "--recurse-submodules", "https://example.com/r.git"],
    ["fetch", "--recurse-submodules=no"],
    ["diff", "--submodule=log"],
    ["status", "--ignore-submodules=dirty"],
  ]) {
    assert.doesNotThrow(() => parseGitArgs(args), args.join(" "));
  }
});
