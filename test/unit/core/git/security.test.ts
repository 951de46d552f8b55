import assert from "node:assert/strict";
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { test } from "node:test";
import { createCore } from "../../../../src/core/core.ts";
import { isCcbError } from "../../../../src/core/errors.ts";
import { GitService } from "../../../../src/core/git/git.ts";
import { USER_REFUSED_KEYS } from "../../../../src/core/git/keys.ts";
import { Workspace } from "../../../../src/core/workspace.ts";
import { git, gitAsync, gitMayFail } from "../../../helpers/git.ts";
import { tmpdirFixture } from "../../../helpers/tmp.ts";

/*
 * The security matrix of git_run / git_status / git_diff. Every planted attack is first shown to be
 * live with a control run of plain git (it leaves its marker), then shown not to run through ccb.
 */

const refused = (e: unknown) => isCcbError(e, "GIT_REFUSED");
const outside = (e: unknown) => isCcbError(e, "PATH_OUTSIDE_WORKSPACE");

async function fixture() {
  const ws = tmpdirFixture({ git: true });
  const evidence = tmpdirFixture({ prefix: "ccb-evidence-" });
  writeFileSync(join(ws.path, "f.txt"), "one\n");
  git(ws.path, "add", ".");
  git(ws.path, "commit", "-q", "-m", "initial");
  const core = createCore({ roots: [ws.path] });
  const marker = join(evidence.path, "MARKER");
  const evil = join(evidence.path, "evil.sh");
  writeFileSync(evil, `#!/bin/sh\ntouch '${marker}'\nexit 1\n`, { mode: 0o755 });
  return {
    ws: ws.path,
    core,
    git: core.git,
    marker,
    /** A program that leaves the marker (and fails). */
    evil,
    reset: () => rmSync(marker, { force: true }),
    ran: () => existsSync(marker),
    async [Symbol.asyncDispose]() {
      await core.dispose();
      ws.cleanup();
      evidence.cleanup();
    },
  };
}

test("a planted pre-commit hook does not run on git_run commit (and the file tools refuse to plant it)", async () => {
  await using fx = await fixture();
  // The file tools refuse to touch .git; a terminal could still plant a hook, so plant it directly.
  await assert.rejects(
    fx.core.files.write(".git/hooks/pre-commit", "#!/bin/sh\n"),
    /PERMISSION_DENIED|inside a \.git folder/,
  );
  await assert.rejects(
    fx.core.files.move(".git/hooks/pre-commit.sample", ".git/hooks/pre-commit"),
    /inside a \.git folder/,
  );
  await assert.rejects(fx.core.files.delete(".git/HEAD"), /inside a \.git folder/);
  for (const hook of ["pre-commit", "prepare-commit-msg", "commit-msg", "post-commit"]) {
    writeFileSync(join(fx.ws, ".git/hooks", hook), `#!/bin/sh\n${fx.evil} </dev/null\nexit 0\n`, { mode: 0o755 });
  }
  writeFileSync(join(fx.ws, "f.txt"), "two\n");
  git(fx.ws, "add", "f.txt");
  git(fx.ws, "commit", "-q", "-m", "control"); // control: plain git runs the hooks
  assert.equal(fx.ran(), true, "control run must execute the planted hook");
  fx.reset();

  writeFileSync(join(fx.ws, "f.txt"), "three\n");
  await fx.git.run(["add", "f.txt"]);
  const r = await fx.git.run(["commit", "-m", "through ccb"]);
  assert.equal(r.exitCode, 0, r.stderr);
  assert.equal(fx.ran(), false, "hook ran through git_run");
  assert.match(git(fx.ws, "log", "-1", "--format=%s"), /through ccb/);
});

test("core.hooksPath: refused from -c and --config-env, refused from git config, overridden when planted in .git/config", async () => {
  await using fx = await fixture();
  mkdirSync(join(fx.ws, "evil"));
  writeFileSync(join(fx.ws, "evil", "pre-commit"), `#!/bin/sh\n${fx.evil} </dev/null\nexit 0\n`, { mode: 0o755 });
  for (const args of [
    ["-c", "core.hooksPath=evil", "commit", "--allow-empty", "-m", "x"],
    ["-c", "Core.HooksPath=evil", "commit", "--allow-empty", "-m", "x"],
    ["-c", "core.hookspath", "commit", "--allow-empty", "-m", "x"],
    ["--config-env=core.hooksPath=HOME", "commit", "--allow-empty", "-m", "x"],
    ["--config-env", "core.hooksPath=PATH", "commit", "--allow-empty", "-m", "x"],
    ["config", "core.hooksPath", "evil"],
    ["config", "--local", "core.hooksPath", "evil"],
    ["config", "--add", "core.hooksPath", "evil"],
    ["config", "--replace-all", "core.hooksPath", "evil"],
    ["config", "set", "core.hooksPath", "evil"],
    ["config", "--file", ".git/config", "core.hooksPath", "evil"],
  ]) {
    await assert.rejects(fx.git.run(args), refused, args.join(" "));
  }
  assert.doesNotMatch(readFileSync(join(fx.ws, ".git", "config"), "utf8"), /hookspath/i);
  assert.equal(fx.ran(), false);

  // Planted directly into .git/config (as a file tool could): plain git obeys it ...
  appendFileSync(join(fx.ws, ".git", "config"), "[core]\n\thooksPath = evil\n");
  git(fx.ws, "commit", "-q", "--allow-empty", "-m", "control");
  assert.equal(fx.ran(), true, "control run must execute the planted hooksPath");
  fx.reset();
  // ... ccb's command-line override beats it.
  const r = await fx.git.run(["commit", "--allow-empty", "-m", "ccb"]);
  assert.equal(r.exitCode, 0, r.stderr);
  assert.equal(fx.ran(), false);
  // Removing it is allowed.
  assert.equal((await fx.git.run(["config", "--unset", "core.hooksPath"])).exitCode, 0);
});

test("core.fsmonitor planted in .git/config does not run at the next status", async () => {
  await using fx = await fixture();
  appendFileSync(join(fx.ws, ".git", "config"), `[core]\n\tfsmonitor = ${fx.evil}\n`);
  gitMayFail(fx.ws, "status", "--porcelain"); // control
  assert.equal(fx.ran(), true, "control run must execute the planted fsmonitor");
  fx.reset();
  await fx.git.status();
  await fx.git.run(["status"]);
  await fx.git.diff();
  assert.equal(fx.ran(), false);
});

test("every refused key is refused through -c, --config-env, git config (all scopes and forms) and clone -c", async () => {
  await using fx = await fixture();
  for (const rule of USER_REFUSED_KEYS) exampleKey(rule.re);
  const examples = EXAMPLE_KEYS;
  const before = readFileSync(join(fx.ws, ".git", "config"), "utf8");
  for (const key of examples) {
    const value = "touch x";
    const forms: string[][] = [
      ["-c", `${key}=${value}`, "status"],
      ["-c", `${key.toUpperCase()}=${value}`, "status"],
      [`--config-env=${key}=HOME`, "status"],
      ["config", key, value],
      ["config", "--add", key, value],
      ["config", "--replace-all", key, value],
      ["config", "--local", key, value],
      ["config", "--worktree", key, value],
      ["config", "--global", key, value],
      ["config", "--system", key, value],
      ["config", "--file", "other.cfg", key, value],
      ["config", "--fil", "other.cfg", key, value],
      ["config", "-f", "other.cfg", key, value],
      ["config", "--type", "path", key, value],
      ["config", "--type=bool", key, "true"],
      ["config", "set", key, value],
      ["clone", "-c", `${key}=${value}`, "https://example.invalid/r.git", "cloned"],
      ["clone", `--config=${key}=${value}`, "https://example.invalid/r.git", "cloned"],
      ["clone", "--conf", `${key}=${value}`, "https://example.invalid/r.git", "cloned"],
    ];
    for (const args of forms) await assert.rejects(fx.git.run(args), refused, `${args.join(" ")} was not refused`);
  }
  assert.equal(readFileSync(join(fx.ws, ".git", "config"), "utf8"), before);
  assert.equal(existsSync(join(fx.ws, "other.cfg")), false);
  assert.equal(existsSync(join(fx.ws, "cloned")), false);
  // Harmless keys and reads/removals of dangerous ones stay allowed.
  assert.equal((await fx.git.run(["-c", "user.name=Someone", "commit", "--allow-empty", "-m", "x"])).exitCode, 0);
  assert.equal(git(fx.ws, "log", "-1", "--format=%an").trim(), "Someone");
  assert.equal((await fx.git.run(["config", "user.name", "Other"])).exitCode, 0);
  assert.equal((await fx.git.run(["config", "--get", "core.hooksPath"])).exitCode, 1);
  assert.equal((await fx.git.run(["config", "--unset-all", "alias.st"])).exitCode, 5);
  await assert.rejects(fx.git.run(["config", "--rename-section", "foo", "filter.evil"]), refused);
  await assert.rejects(fx.git.run(["config", "--edit"]), refused);
});

/** One concrete key per refusal rule (the test checks that every rule is covered). */
const EXAMPLE_KEYS = [
  "core.hooksPath",
  "core.fsmonitor",
  "core.sshCommand",
  "core.pager",
  "core.editor",
  "core.askPass",
  "core.gitProxy",
  "core.alternateRefsCommand",
  "core.worktree",
  "credential.helper",
  "credential.https://example.com.helper",
  "diff.external",
  "diff.word.command",
  "diff.word.textconv",
  "diff.tool",
  "difftool.vim.cmd",
  "merge.tool",
  "mergetool.vim.path",
  "merge.ours.driver",
  "filter.lfs.clean",
  "filter.lfs.smudge",
  "filter.lfs.process",
  "gpg.program",
  "gpg.ssh.program",
  "gpg.ssh.defaultKeyCommand",
  "sequence.editor",
  "alias.st",
  "include.path",
  "includeIf.gitdir:/x/.path",
  "protocol.allow",
  "protocol.ext.allow",
  "remote.origin.uploadpack",
  "remote.origin.receivepack",
  "remote.origin.vcs",
  "uploadpack.packObjectsHook",
  "pager.log",
  "web.browser",
  "browser.firefox.cmd",
  "man.viewer",
  "man.konqueror.cmd",
  "interactive.diffFilter",
  "submodule.s.update",
  "init.templateDir",
  "safe.directory",
  "trace2.eventTarget",
  "sendemail.smtpServer",
  "imap.tunnel",
  "tar.tgz.command",
  "hook.linter.command",
  "guitool.x.cmd",
  "http.cookieFile",
  "http.https://example.com.cookieFile",
  "format.outputDirectory",
  "submodule.recurse",
  "diff.ignoreSubmodules",
];

function exampleKey(re: RegExp): string {
  const key = EXAMPLE_KEYS.find((k) => re.test(k.toLowerCase()));
  assert.ok(key, `no example key for ${re}`);
  return key;
}

test("dangerous keys planted in repository config files block git, with a hint to remove them", async () => {
  await using fx = await fixture();
  const cfg = join(fx.ws, ".git", "config");
  const base = readFileSync(cfg, "utf8");

  // filter driver + attributes: plain git add runs the clean filter
  writeFileSync(join(fx.ws, ".gitattributes"), "*.txt filter=evil\n");
  appendFileSync(cfg, `[filter "evil"]\n\tclean = ${fx.evil}\n`);
  writeFileSync(join(fx.ws, "g.txt"), "g\n");
  git(fx.ws, "add", "g.txt");
  assert.equal(fx.ran(), true, "control run must execute the clean filter");
  gitMayFail(fx.ws, "reset", "-q");
  fx.reset();
  writeFileSync(join(fx.ws, "g.txt"), "g2\n");
  await assert.rejects(
    fx.git.run(["add", "g.txt"]),
    (e: unknown) =>
      refused(e) &&
      /filter\.evil\.clean/.test((e as Error).message) &&
      /--unset-all/.test((e as { hint?: string }).hint ?? ""),
  );
  await assert.rejects(fx.git.status(), refused);
  await assert.rejects(fx.git.diff(), refused);
  assert.equal(fx.ran(), false);
  // the caller can remove it through git_run
  assert.equal((await fx.git.run(["config", "--unset", "filter.evil.clean"])).exitCode, 0);
  await fx.git.status();

  // diff.external: plain git diff runs it
  writeFileSync(cfg, `${base}[diff]\n\texternal = ${fx.evil}\n`);
  writeFileSync(join(fx.ws, "f.txt"), "changed\n");
  gitMayFail(fx.ws, "diff");
  assert.equal(fx.ran(), true, "control run must execute diff.external");
  fx.reset();
  await assert.rejects(fx.git.run(["diff"]), refused);
  await assert.rejects(fx.git.run(["log", "-p"]), refused);

  // textconv, merge driver, url-specific credential helper, upload-pack, !command submodule update, remote vcs
  for (const planted of [
    `[diff "x"]\n\ttextconv = ${fx.evil}\n`,
    `[merge "x"]\n\tdriver = ${fx.evil}\n`,
    `[credential "https://example.com"]\n\thelper = !${fx.evil}\n`,
    `[remote "o"]\n\turl = ../other\n\tuploadpack = ${fx.evil}\n`,
    `[remote "o"]\n\tvcs = evil\n`,
    `[submodule "s"]\n\tupdate = !${fx.evil}\n`,
    `[core]\n\talternateRefsCommand = ${fx.evil}\n`,
    `[interactive]\n\tdiffFilter = ${fx.evil}\n`,
    `[gpg "ssh"]\n\tdefaultKeyCommand = ${fx.evil}\n`,
    `[tar "tgz"]\n\tcommand = ${fx.evil}\n`,
    `[hook "lint"]\n\tcommand = ${fx.evil}\n\tevent = pre-commit\n`,
    `[http]\n\tcookieFile = ${fx.evil}\n\tsaveCookies = true\n`,
    `[format]\n\toutputDirectory = ${fx.evil}.d\n`,
    `[protocol "ext"]\n\tallow = always\n`,
  ]) {
    writeFileSync(cfg, base + planted);
    await assert.rejects(fx.git.run(["status"]), refused, planted);
  }

  // ... also when it arrives through an include.path of a file inside the workspace
  writeFileSync(join(fx.ws, "inc.cfg"), `[filter "evil"]\n\tsmudge = ${fx.evil}\n`);
  writeFileSync(cfg, `${base}[include]\n\tpath = ../inc.cfg\n`);
  await assert.rejects(
    fx.git.run(["status"]),
    (e: unknown) => refused(e) && /filter\.evil\.smudge/.test((e as Error).message),
  );
  // ... or through an includeIf whose condition does not hold right now
  writeFileSync(cfg, `${base}[includeIf "onbranch:other"]\n\tpath = ../inc.cfg\n`);
  assert.equal(
    gitMayFail(fx.ws, "config", "--get", "filter.evil.smudge").status,
    1,
    "control: not visible on this branch",
  );
  await assert.rejects(
    fx.git.run(["checkout", "-b", "other"]),
    (e: unknown) => refused(e) && /filter\.evil\.smudge/.test((e as Error).message),
  );
  // a config file git cannot read stops ccb instead of passing as "nothing found"
  writeFileSync(join(fx.ws, "inc.cfg"), '[filter "evil"\n\tsmudge = broken\n');
  writeFileSync(cfg, `${base}[includeIf "onbranch:other"]\n\tpath = ../inc.cfg\n`);
  await assert.rejects(
    fx.git.run(["status"]),
    (e: unknown) => isCcbError(e, "GIT_FAILED") && /included config/.test((e as Error).message),
  );
  writeFileSync(cfg, `${base}[core\n`);
  await assert.rejects(fx.git.run(["status"]), (e: unknown) => isCcbError(e, "GIT_FAILED"));
  await assert.rejects(fx.git.status(), (e: unknown) => isCcbError(e, "GIT_FAILED"));
  // a submodule's update=checkout is fine
  writeFileSync(cfg, `${base}[submodule "s"]\n\tupdate = checkout\n`);
  assert.equal((await fx.git.run(["status"])).exitCode, 0);
  assert.equal(fx.ran(), false);
});

test("a filter planted in a submodule's config blocks the superproject's status", async () => {
  await using fx = await fixture();
  await using subSrc = tmpdirFixture({ git: true });
  writeFileSync(join(subSrc.path, "s.txt"), "s\n");
  git(subSrc.path, "add", ".");
  git(subSrc.path, "commit", "-q", "-m", "s");
  git(fx.ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", subSrc.path, "mod");
  git(fx.ws, "commit", "-q", "-m", "add submodule");
  const modCfg = join(fx.ws, ".git", "modules", "mod", "config");
  appendFileSync(modCfg, `[filter "evil"]\n\tclean = ${fx.evil}\n`);
  mkdirSync(join(fx.ws, ".git", "modules", "mod", "info"), { recursive: true });
  writeFileSync(join(fx.ws, ".git", "modules", "mod", "info", "attributes"), "*.txt filter=evil\n");
  writeFileSync(join(fx.ws, "mod", "s.txt"), "t\n"); // same size, different content: status must hash it
  gitMayFail(fx.ws, "status", "--porcelain=v2");
  assert.equal(fx.ran(), true, "control run must execute the submodule's clean filter");
  fx.reset();
  await assert.rejects(fx.git.status(), (e: unknown) => refused(e) && /submodule/.test((e as Error).message));
  await assert.rejects(fx.git.run(["status"]), refused);
  assert.equal(fx.ran(), false);
});

test("programs named by fixed keys planted in .git/config are overridden: editor, sequence editor, ssh, git proxy, gpg", async () => {
  await using fx = await fixture();
  const cfg = join(fx.ws, ".git", "config");
  const base = readFileSync(cfg, "utf8");
  const cases: { planted: string; control: string[]; ccb: string[] }[] = [
    {
      planted: `[core]\n\teditor = ${fx.evil}\n`,
      control: ["commit", "--allow-empty"],
      ccb: ["commit", "--allow-empty"],
    },
    {
      planted: `[sequence]\n\teditor = ${fx.evil}\n`,
      control: ["rebase", "-i", "HEAD"],
      ccb: ["rebase", "-i", "HEAD"],
    },
    {
      planted: `[core]\n\tsshCommand = ${fx.evil}\n`,
      control: ["ls-remote", "ssh://127.0.0.1/x"],
      ccb: ["ls-remote", "ssh://127.0.0.1:1/x"],
    },
    {
      planted: `[core]\n\tgitProxy = ${fx.evil}\n`,
      control: ["ls-remote", "git://127.0.0.1:1/x"],
      ccb: ["ls-remote", "git://127.0.0.1:1/x"],
    },
    {
      planted: `[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = ${fx.evil}\n`,
      control: ["commit", "--allow-empty", "-m", "s"],
      ccb: ["commit", "--allow-empty", "-m", "s"],
    },
    { planted: `[alias]\n\tst = !${fx.evil}\n`, control: ["st"], ccb: [] },
    {
      planted: `[protocol]\n\tallow = always\n[url "ext::${fx.evil} "]\n\tinsteadOf = https://example.invalid/\n`,
      control: ["ls-remote", "https://example.invalid/r"],
      ccb: ["ls-remote", "https://example.invalid/r"],
    },
  ];
  for (const c of cases) {
    writeFileSync(cfg, base + c.planted);
    gitMayFail(fx.ws, ...c.control);
    assert.equal(fx.ran(), true, `control run must execute: ${c.planted}`);
    fx.reset();
    if (c.ccb.length > 0) await fx.git.run(c.ccb);
    else await assert.rejects(fx.git.run(["st"]), (e: unknown) => refused(e) && /built-in/.test((e as Error).message));
    assert.equal(fx.ran(), false, `ran through ccb: ${c.planted}`);
  }
});

test("credential.helper planted in .git/config is not asked on an HTTP 401", async () => {
  await using fx = await fixture();
  const server = createServer((_req, res) => {
    res.writeHead(401, { "WWW-Authenticate": 'Basic realm="x"' });
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/r.git`;
    appendFileSync(join(fx.ws, ".git", "config"), `[credential]\n\thelper = !${fx.evil}\n`);
    await gitAsync(fx.ws, "ls-remote", url);
    assert.equal(fx.ran(), true, "control run must ask the planted credential helper");
    fx.reset();
    const r = await fx.git.run(["ls-remote", url]);
    assert.notEqual(r.exitCode, 0);
    assert.equal(fx.ran(), false);
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test("pushing to a local repository (whose hooks would run) is refused by the transport policy", async () => {
  await using fx = await fixture();
  const bare = join(fx.ws, "bare.git");
  git(fx.ws, "init", "-q", "--bare", "-b", "main", bare);
  writeFileSync(join(bare, "hooks", "post-receive"), `#!/bin/sh\n${fx.evil} </dev/null\nexit 0\n`, { mode: 0o755 });
  git(fx.ws, "push", "-q", bare, "main");
  assert.equal(fx.ran(), true, "control run must execute the target's post-receive hook");
  fx.reset();
  git(fx.ws, "commit", "-q", "--allow-empty", "-m", "more");
  const r = await fx.git.run(["push", "bare.git", "main"]);
  assert.notEqual(r.exitCode, 0);
  assert.match(r.stderr, /transport 'file' not allowed/);
  await assert.rejects(fx.git.run(["push", "--receive-pack=git-receive-pack", "bare.git", "main"]), refused);
  assert.equal(fx.ran(), false);
  // fetching from a local repository runs no hooks and stays allowed
  assert.equal((await fx.git.run(["fetch", "bare.git"])).exitCode, 0);
});

test("an exec line planted in an in-progress rebase todo is refused", async () => {
  await using fx = await fixture();
  git(fx.ws, "commit", "-q", "--allow-empty", "-m", "second");
  const env = { GIT_SEQUENCE_EDITOR: "sed -i '1i break'" };
  const { spawnSync } = await import("node:child_process");
  const { plainGitEnv } = await import("../../../helpers/git.ts");
  spawnSync("git", ["rebase", "-i", "HEAD~1"], { cwd: fx.ws, env: { ...plainGitEnv, ...env }, stdio: "ignore" });
  const todo = join(fx.ws, ".git", "rebase-merge", "git-rebase-todo");
  assert.ok(existsSync(todo), "a rebase is in progress");
  writeFileSync(todo, `exec ${fx.evil}\n${readFileSync(todo, "utf8")}`);
  await assert.rejects(fx.git.run(["rebase", "--continue"]), refused);
  assert.equal(fx.ran(), false);
  gitMayFail(fx.ws, "rebase", "--continue");
  assert.equal(fx.ran(), true, "control run must execute the planted exec line");
});

test("refused subcommands and options", async () => {
  await using fx = await fixture();
  for (const args of [
    ["difftool"],
    ["mergetool"],
    ["filter-branch", "--tree-filter", "true", "HEAD"],
    ["daemon"],
    ["instaweb"],
    ["web--browse", "x"],
    ["credential", "fill"],
    ["credential-store", "get"],
    ["help", "log"],
    ["log", "--help"],
    ["--help"],
    ["hook", "run", "pre-commit"],
    ["merge-index", "sh", "-a"],
    ["for-each-repo", "--config=x", "gc"],
    ["send-email"],
    ["upload-pack", "."],
    ["receive-pack", "."],
    ["remote-ext", "x", "y"],
    ["submodule--helper", "list"],
    ["bisect", "run", "true"],
    ["submodule", "foreach", "true"],
    ["submodule", "--quiet", "foreach", "true"],
    ["rebase", "-x", "true", "HEAD"],
    ["rebase", "--exec", "true", "HEAD"],
    ["rebase", "--exec=true", "HEAD"],
    ["rebase", "--exe=true", "HEAD"],
    ["rebase", "-ix", "true", "HEAD"],
    ["rebase", "-xtrue", "HEAD"],
    ["fetch", "--upload-pack=touch x", "origin"],
    ["fetch", "--upload-p=touch", "origin"],
    ["ls-remote", "-u", "touch x", "."],
    ["ls-remote", "--upload-pack", "x", "."],
    ["clone", "-u", "touch x", "a", "b"],
    ["clone", "--template=t", "a", "b"],
    ["init", "--template", "t", "x"],
    ["archive", "--remote=.", "--exec=touch", "HEAD"],
    ["archive", "--remote=.", "--e=touch", "HEAD"],
    ["ls-remote", "--u=touch", "."],
    ["init", "--t=tpl", "x"],
    ["clone", "--c", "core.hooksPath=x", "a", "b"],
    ["push", "--receive-pack=x", "o"],
    ["push", "--exec=x", "o"],
    ["grep", "-O", "x"],
    ["grep", "-Otouch", "x"],
    ["grep", "--open-files-in-pager=touch", "x"],
    ["add", "-p"],
    ["add", "-i"],
    ["add", "--patch"],
    ["add", "--interactive"],
    ["checkout", "-p"],
    ["restore", "--patch"],
    ["reset", "-p"],
    ["stash", "-p"],
    ["clean", "-i"],
    ["commit", "-p"],
    ["commit", "--interactive"],
    ["merge", "-s", "evil", "HEAD"],
    ["merge", "--strategy=evil", "HEAD"],
    ["pull", "-sevil"],
    ["maintenance", "start"],
    ["--exec-path=/tmp"],
    ["--super-prefix=x/", "status"],
    ["--unknown-global", "status"],
    ["st"],
    ["lfs", "status"],
  ]) {
    await assert.rejects(fx.git.run(args), refused, args.join(" "));
  }
  // allowed near-misses
  assert.equal((await fx.git.run(["--exec-path"])).exitCode, 0);
  assert.equal((await fx.git.run(["grep", "-e", "ONE", "-i"])).exitCode, 0);
  assert.equal((await fx.git.run(["commit", "-i", "f.txt", "-m", "include", "--allow-empty"])).exitCode, 0);
  assert.equal((await fx.git.run(["merge", "-s", "ort", "HEAD"])).exitCode, 0);
  assert.equal((await fx.git.run(["bisect", "log"])).exitCode !== undefined, true);
});

test("path escapes: cwd, -C, --git-dir, --work-tree, --output, pathspecs, clone targets, file:// and symlinks", async () => {
  await using fx = await fixture();
  await using other = tmpdirFixture({ git: true });
  writeFileSync(join(other.path, "secret.txt"), "secret\n");
  symlinkSync(other.path, join(fx.ws, "link-out"));
  const svc = fx.git;
  for (const args of [
    ["-C", "..", "status"],
    ["-C", other.path, "status"],
    ["-C", "link-out", "status"],
    [`--git-dir=${other.path}/.git`, "log"],
    ["--git-dir", "../x", "log"],
    [`--work-tree=${other.path}`, "status"],
    ["log", `--output=${other.path}/out.txt`],
    ["log", "--output=../out.txt"],
    ["log", "--output=link-out/out.txt"],
    ["format-patch", `-o${other.path}`, "HEAD~0"],
    ["format-patch", "-o", other.path, "HEAD"],
    ["diff", "--no-index", `${other.path}/secret.txt`, "f.txt"],
    ["add", "--", "../x"],
    ["add", "link-out/secret.txt"],
    ["log", "--", "/etc/passwd"],
    ["clone", "https://example.invalid/r", "../cloned"],
    ["clone", other.path, "c"],
    ["clone", `file://${other.path}`, "c"],
    ["fetch", other.path],
    ["remote", "add", "o", other.path],
    ["worktree", "add", "../wt"],
    ["commit", `--file=${other.path}/secret.txt`],
    ["commit", "-F", `${other.path}/secret.txt`],
    ["apply", `${other.path}/secret.txt`],
    ["init", other.path],
    ["bundle", "create", `${other.path}/b.bundle`, "HEAD"],
    ["format-patch", "-o..", "HEAD~0"],
    ["diff", "--no-index", "f.txt", `colon:/${"../".repeat(12)}${other.path.slice(1)}/secret.txt`],
  ]) {
    await assert.rejects(svc.run(args), outside, args.join(" "));
  }
  await assert.rejects(svc.run(["status"], { cwd: other.path }), outside);
  await assert.rejects(svc.run(["status"], { cwd: "link-out" }), outside);
  await assert.rejects(svc.status({ path: "link-out" }), outside);
  await assert.rejects(svc.status({ paths: ["../x"] }), outside);
  await assert.rejects(svc.diff({ paths: ["link-out/secret.txt"] }), outside);
  await assert.rejects(svc.diff({ paths: ["a\0b"] }), (e: unknown) => isCcbError(e, "INVALID_PATH"));
  await assert.rejects(svc.run(["log", "a\0b"]), (e: unknown) => isCcbError(e, "INVALID_ARGUMENT"));
  assert.equal(existsSync(join(other.path, "out.txt")), false);
  // remote URLs and revisions are not paths
  assert.equal((await svc.run(["remote", "add", "gh", "git@github.com:org/repo.git"])).exitCode, 0);
  assert.equal((await svc.run(["remote", "add", "web", "https://example.invalid/r.git"])).exitCode, 0);
  assert.equal((await svc.run(["show", "HEAD:f.txt"])).stdout, "one\n");
});

test("a repository outside the workspace is out of reach: parent repo, .git file, planted core.worktree", async () => {
  await using fx = await fixture();
  await using other = tmpdirFixture({ git: true });
  writeFileSync(join(other.path, "o.txt"), "o\n");
  git(other.path, "add", ".");
  git(other.path, "commit", "-q", "-m", "other");

  // workspace = a subdirectory of a repository: git does not look above the workspace root
  mkdirSync(join(other.path, "inner"));
  const inner = new GitService(new Workspace([join(other.path, "inner")]));
  const r = await inner.run(["log"]);
  assert.equal(r.exitCode, 128);
  assert.match(r.stderr, /not a git repository/);
  await assert.rejects(inner.status(), (e: unknown) => isCcbError(e, "GIT_FAILED"));
  // ... but a new repository can be made inside it
  assert.equal((await inner.run(["init", "-q", "nested"])).exitCode, 0);

  // a .git file pointing at another repository's git directory
  const gitfileDir = join(fx.ws, "gf");
  mkdirSync(gitfileDir);
  writeFileSync(join(gitfileDir, ".git"), `gitdir: ${join(other.path, ".git")}\n`);
  await assert.rejects(fx.git.run(["log"], { cwd: "gf" }), outside);
  await assert.rejects(fx.git.status({ path: "gf" }), outside);

  // core.worktree planted in .git/config
  appendFileSync(join(fx.ws, ".git", "config"), `[core]\n\tworktree = ${other.path}\n`);
  await assert.rejects(fx.git.run(["status"]), outside);
  await assert.rejects(fx.git.run(["-c", `core.worktree=${fx.ws}`, "status"]), refused);
});

test("archive: a planted tar filter does not run, locally or through --remote on a repository in the workspace", async () => {
  await using fx = await fixture();
  const cfg = join(fx.ws, ".git", "config");
  const base = readFileSync(cfg, "utf8");
  writeFileSync(cfg, `${base}[tar "tgz"]\n\tcommand = ${fx.evil}\n`);
  gitMayFail(fx.ws, "archive", "--format=tgz", "HEAD");
  assert.equal(fx.ran(), true, "control run must execute the planted tar filter");
  fx.reset();
  await assert.rejects(fx.git.run(["archive", "--format=tgz", "HEAD"]), refused);
  writeFileSync(cfg, base);

  const other = join(fx.ws, "other");
  git(fx.ws, "init", "-q", "-b", "main", other);
  writeFileSync(join(other, "o.txt"), "o\n");
  git(other, "add", ".");
  git(other, "commit", "-q", "-m", "o");
  appendFileSync(join(other, ".git", "config"), `[tar "tgz"]\n\tcommand = ${fx.evil}\n`);
  gitMayFail(fx.ws, "archive", "--remote=other", "--format=tgz", "HEAD");
  assert.equal(fx.ran(), true, "control run must execute the remote side's tar filter");
  fx.reset();
  const r = await fx.git.run(["archive", "--remote=other", "--format=tgz", "HEAD"]);
  assert.notEqual(r.exitCode, 0);
  assert.match(r.stderr, /transport 'file' not allowed/);
  assert.equal(fx.ran(), false);
  assert.equal((await fx.git.run(["archive", "--format=tar", "HEAD"])).exitCode, 0);
});

test("local paths in remote URLs, url.<base>.insteadOf and object alternates must lie in the workspace", async () => {
  await using fx = await fixture();
  await using other = tmpdirFixture({ git: true });
  writeFileSync(join(other.path, "secret.txt"), "secret\n");
  git(other.path, "add", ".");
  git(other.path, "commit", "-q", "-m", "secret");
  const cfg = join(fx.ws, ".git", "config");
  const base = readFileSync(cfg, "utf8");

  // set by the caller: refused as a path escape
  for (const args of [
    ["config", "remote.o.url", other.path],
    ["config", "remote.o.pushurl", `file://${other.path}`],
    ["-c", `url.${other.path}.insteadOf=https://example.invalid/`, "fetch", "https://example.invalid/"],
    ["clone", "-c", `remote.origin.url=${other.path}`, "https://example.invalid/r", "c"],
  ]) {
    await assert.rejects(fx.git.run(args), outside, args.join(" "));
  }
  assert.equal((await fx.git.run(["config", "remote.in.url", "./inner.git"])).exitCode, 0);
  assert.equal((await fx.git.run(["config", "remote.gh.url", "https://example.invalid/r.git"])).exitCode, 0);

  // planted in .git/config: transport subcommands refuse; other subcommands still work
  writeFileSync(cfg, `${base}[remote "o"]\n\turl = ${other.path}\n`);
  const control = gitMayFail(fx.ws, "fetch", "o");
  assert.equal(control.status, 0, "control fetch reads the repository outside");
  await assert.rejects(
    fx.git.run(["fetch", "o"]),
    (e: unknown) => outside(e) && /remote\.o\.url/.test((e as Error).message),
  );
  await assert.rejects(fx.git.run(["ls-remote", "o"]), outside);
  writeFileSync(cfg, `${base}[url "${other.path}"]\n\tinsteadOf = https://example.invalid/\n`);
  await assert.rejects(fx.git.run(["fetch", "https://example.invalid/"]), outside);
  writeFileSync(cfg, base);
  assert.equal((await fx.git.run(["status"])).exitCode, 0);

  // an object alternate outside the workspace
  writeFileSync(join(fx.ws, ".git", "objects", "info", "alternates"), `${join(other.path, ".git", "objects")}\n`);
  const secretBlob = git(other.path, "rev-parse", "HEAD:secret.txt").trim();
  assert.equal(git(fx.ws, "cat-file", "-p", secretBlob), "secret\n", "control: plain git reads through the alternate");
  await assert.rejects(
    fx.git.run(["cat-file", "-p", secretBlob]),
    (e: unknown) => outside(e) && /alternate/.test((e as Error).message),
  );
});

test("a cloned .gitmodules cannot pull a local repository from outside the workspace", async () => {
  await using fx = await fixture();
  await using other = tmpdirFixture({ git: true });
  writeFileSync(join(other.path, "secret.txt"), "secret\n");
  git(other.path, "add", ".");
  git(other.path, "commit", "-q", "-m", "secret");
  const src = join(fx.ws, "src");
  git(fx.ws, "init", "-q", "-b", "main", src);
  git(src, "-c", "protocol.file.allow=always", "submodule", "add", "-q", other.path, "mod");
  git(src, "commit", "-q", "-m", "with submodule");
  git(fx.ws, "-c", "protocol.file.allow=always", "clone", "-q", "--recurse-submodules", "src", "control");
  assert.equal(
    existsSync(join(fx.ws, "control", "mod", "secret.txt")),
    true,
    "control: with file transport always allowed, the submodule comes from outside",
  );

  const r = await fx.git.run(["clone", "--recurse-submodules", "src", "dst"]);
  assert.equal(existsSync(join(fx.ws, "dst", ".git")), true, "the local clone itself is allowed");
  assert.equal(existsSync(join(fx.ws, "dst", "mod", "secret.txt")), false, r.stderr);
  assert.match(r.stderr, /transport 'file' not allowed/);
  await assert.rejects(fx.git.run(["submodule", "update", "--init"], { cwd: "dst" }));
  assert.equal(existsSync(join(fx.ws, "dst", "mod", "secret.txt")), false);
});
