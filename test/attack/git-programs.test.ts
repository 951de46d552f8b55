import assert from "node:assert/strict";
import { appendFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { git, gitMayFail } from "../helpers/git.ts";
import { connectStdio, type StdioPeer } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

/*
 * git must never run a program the workspace controls, whatever the repository layout. Each
 * scenario builds the layout (with ccb's own tools where they allow it, directly where only a
 * terminal could), then tries every git tool of `ccb serve --stdio` on it and asserts the marker
 * program never ran. A control run of plain git on the same layout afterwards leaves the marker,
 * proving the attack was live.
 */

interface Scenario {
  ws: string;
  peer: StdioPeer;
  marker: string;
  /** `sh <ws>/evil.sh`: leaves the marker outside the workspace, passes stdin through. */
  program: string;
  call(name: string, args: Record<string, unknown>): Promise<{ isError: boolean; text: string }>;
  /** git_run that must exit 0. */
  gitOk(cwd: string, args: string[]): Promise<void>;
  ran(): boolean;
  reset(): void;
  [Symbol.asyncDispose](): Promise<void>;
}

async function scenario(): Promise<Scenario> {
  const ws = tmpdirFixture({ git: true, prefix: "ccb-attack-git-" });
  const evidence = tmpdirFixture({ prefix: "ccb-evidence-" });
  const home = tmpdirFixture({ prefix: "ccb-home-" });
  const marker = join(evidence.path, "MARKER");
  writeFileSync(join(ws.path, "evil.sh"), `#!/bin/sh\ntouch '${marker}'\ncat\n`);
  writeFileSync(join(ws.path, "f.txt"), "one\n");
  git(ws.path, "add", ".");
  git(ws.path, "commit", "-q", "-m", "initial");
  const peer = await connectStdio(ws.path, [], { HOME: home.path, XDG_CONFIG_HOME: join(home.path, ".config") });
  const s: Scenario = {
    ws: ws.path,
    peer,
    marker,
    program: `sh ${join(ws.path, "evil.sh")}`,
    async call(name, args) {
      const r = await peer.client.callTool({ name, arguments: args });
      const text = (r.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("\n");
      return { isError: r.isError === true, text };
    },
    async gitOk(cwd, args) {
      const r = await s.call("git_run", { cwd, args });
      assert.ok(!r.isError && /^exit code 0$/m.test(r.text), `git ${args.join(" ")}: ${r.text}`);
    },
    ran: () => existsSync(marker),
    reset: () => rmSync(marker, { force: true }),
    async [Symbol.asyncDispose]() {
      await peer.close();
      ws.cleanup();
      evidence.cleanup();
      home.cleanup();
    },
  };
  return s;
}

/** Every git tool, on the repository at `cwd` (and its superproject when there is one). */
async function tryEverything(s: Scenario, cwds: string[]): Promise<string[]> {
  const seen: string[] = [];
  for (const cwd of cwds) {
    const attempts: [string, Record<string, unknown>][] = [
      ["git_status", { path: cwd }],
      ["git_diff", { path: cwd }],
      ["git_diff", { path: cwd, staged: true }],
      ["git_run", { cwd, args: ["status"] }],
      ["git_run", { cwd, args: ["diff"] }],
      ["git_run", { cwd, args: ["diff", "--submodule=diff"] }],
      ["git_run", { cwd, args: ["diff", "--submodule=log"] }],
      ["git_run", { cwd, args: ["diff-files", "-p"] }],
      ["git_run", { cwd, args: ["log", "-p", "-1"] }],
      ["git_run", { cwd, args: ["add", "-A", "--dry-run"] }],
      ["git_run", { cwd, args: ["commit", "-a", "--dry-run"] }],
      ["git_run", { cwd, args: ["stash", "list"] }],
      ["git_run", { cwd, args: ["describe", "--always", "--dirty"] }],
      ["git_run", { cwd, args: ["grep", "--recurse-submodules", "x"] }],
      ["git_run", { cwd, args: ["submodule", "status", "--recursive"] }],
      ["git_run", { cwd, args: ["submodule", "update", "--init", "--recursive"] }],
      ["git_run", { cwd, args: ["-c", "submodule.recurse=true", "checkout", "."] }],
    ];
    for (const [name, args] of attempts) {
      const r = await s.call(name, args);
      seen.push(`${name} ${JSON.stringify(args)} -> ${r.isError ? "error" : "ok"}: ${r.text.split("\n")[0]}`);
      assert.equal(
        s.ran(),
        false,
        `the workspace's program ran through ${name} ${JSON.stringify(args)}:\n${seen.join("\n")}`,
      );
    }
  }
  return seen;
}

/** A same-size change: git cannot tell it from the stat data and must hash the file (running its clean filter). */
function touchSameSize(file: string, text: string): void {
  writeFileSync(file, text);
}

test("separate git dir: `init --separate-git-dir=gd sub3`, a filter planted in gd/config", async () => {
  await using s = await scenario();
  await s.gitOk(".", ["init", "--separate-git-dir=gd", "sub3"]);
  assert.equal(
    (await s.call("fs_write", { path: "sub3/.gitattributes", content: "*.txt filter=evil diff=evil\n" })).isError,
    false,
  );
  assert.equal((await s.call("fs_write", { path: "sub3/a.txt", content: "a\n" })).isError, false);
  await s.gitOk("sub3", ["config", "user.name", "attacker"]);
  await s.gitOk("sub3", ["config", "user.email", "attacker@example.com"]);
  await s.gitOk("sub3", ["add", "."]);
  await s.gitOk("sub3", ["commit", "-m", "s"]);
  await s.gitOk(".", ["add", "sub3"]);
  await s.gitOk(".", ["commit", "-m", "sub"]);
  assert.match(git(s.ws, "ls-files", "-s", "sub3"), /^160000 /, "sub3 is a gitlink");
  const planted = `[filter "evil"]\n\tclean = ${s.program}\n\tsmudge = ${s.program}\n[diff "evil"]\n\ttextconv = ${s.program} <\n`;
  // The file tools may refuse to write into a git directory; plant it directly as a terminal could.
  const w = await s.call("fs_write", {
    path: "gd/config",
    content: `[core]\n\trepositoryformatversion = 0\n\tbare = false\n${planted}`,
  });
  if (w.isError) appendFileSync(join(s.ws, "gd", "config"), planted);
  touchSameSize(join(s.ws, "sub3", "a.txt"), "b\n");
  const seen = await tryEverything(s, [".", "sub3"]);

  gitMayFail(s.ws, "diff", "--submodule=diff");
  assert.equal(s.ran(), true, `control: plain git runs the planted filter\n${seen.join("\n")}`);
});

test("gitlink without a .gitmodules entry: sub2/.git/config sets a filter and a textconv", async () => {
  await using s = await scenario();
  const sub = join(s.ws, "sub2");
  mkdirSync(sub);
  git(sub, "init", "-q", "-b", "main");
  writeFileSync(join(sub, ".gitattributes"), "*.txt filter=evil diff=evil\n");
  writeFileSync(join(sub, "a.txt"), "a\n");
  git(sub, "add", ".");
  git(sub, "commit", "-q", "-m", "s");
  git(s.ws, "add", "sub2");
  git(s.ws, "commit", "-q", "-m", "gitlink");
  assert.equal(existsSync(join(s.ws, ".gitmodules")), false);
  appendFileSync(
    join(sub, ".git", "config"),
    `[filter "evil"]\n\tclean = ${s.program}\n[diff "evil"]\n\ttextconv = ${s.program} <\n`,
  );
  touchSameSize(join(sub, "a.txt"), "b\n");
  await tryEverything(s, ["."]);

  gitMayFail(s.ws, "status", "--porcelain");
  assert.equal(s.ran(), true, "control: plain git status runs the submodule's filter");
});

test("absorbed submodule: a filter planted in .git/modules/<name>/config", async () => {
  await using s = await scenario();
  const src = join(s.ws, "src-repo");
  mkdirSync(src);
  git(src, "init", "-q", "-b", "main");
  writeFileSync(join(src, ".gitattributes"), "*.txt filter=evil\n");
  writeFileSync(join(src, "a.txt"), "a\n");
  git(src, "add", ".");
  git(src, "commit", "-q", "-m", "s");
  git(s.ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", "./src-repo", "mod");
  git(s.ws, "commit", "-q", "-m", "submodule");
  appendFileSync(
    join(s.ws, ".git", "modules", "mod", "config"),
    `[filter "evil"]\n\tclean = ${s.program}\n\tsmudge = ${s.program}\n`,
  );
  // .gitmodules (a work-tree file) asks for the full dirty check.
  assert.equal(
    (await s.call("git_run", { args: ["config", "-f", ".gitmodules", "submodule.mod.ignore", "none"] })).isError,
    true,
    "setting submodule.<name>.ignore is refused",
  );
  appendFileSync(join(s.ws, ".gitmodules"), "\tignore = none\n");
  touchSameSize(join(s.ws, "mod", "a.txt"), "b\n");
  await tryEverything(s, [".", "mod"]);

  gitMayFail(s.ws, "status", "--porcelain");
  assert.equal(s.ran(), true, "control: plain git status runs the submodule's filter");
});

test("linked worktree: a filter planted in its config.worktree", async () => {
  await using s = await scenario();
  writeFileSync(join(s.ws, ".gitattributes"), "*.txt filter=evil\n");
  git(s.ws, "add", ".gitattributes");
  git(s.ws, "commit", "-q", "-m", "attributes");
  await s.gitOk(".", ["worktree", "add", "-q", "wt2"]);
  git(s.ws, "config", "extensions.worktreeConfig", "true");
  appendFileSync(
    join(s.ws, ".git", "worktrees", "wt2", "config.worktree"),
    `[filter "evil"]\n\tclean = ${s.program}\n`,
  );
  touchSameSize(join(s.ws, "wt2", "f.txt"), "two\n");
  await tryEverything(s, ["wt2"]);

  gitMayFail(join(s.ws, "wt2"), "status", "--porcelain");
  assert.equal(s.ran(), true, "control: plain git status in the worktree runs the filter");
});

test("nested repository (not a gitlink): its own .git/config sets a filter", async () => {
  await using s = await scenario();
  const nested = join(s.ws, "nested");
  mkdirSync(nested);
  git(nested, "init", "-q", "-b", "main");
  writeFileSync(join(nested, ".gitattributes"), "*.txt filter=evil\n");
  writeFileSync(join(nested, "a.txt"), "a\n");
  git(nested, "add", ".");
  git(nested, "commit", "-q", "-m", "n");
  appendFileSync(join(nested, ".git", "config"), `[filter "evil"]\n\tclean = ${s.program}\n`);
  touchSameSize(join(nested, "a.txt"), "b\n");
  await tryEverything(s, [".", "nested"]);
  const add = await s.call("git_run", { args: ["add", "nested"] });
  assert.equal(s.ran(), false, `git add of the nested repository ran its filter: ${add.text}`);

  gitMayFail(nested, "status", "--porcelain");
  assert.equal(s.ran(), true, "control: plain git status in the nested repository runs the filter");
});

test("a config prepared before `git init` turns it into a repository: the next call refuses", async () => {
  await using s = await scenario();
  // A plain folder (not yet a git directory) is writable by the file tools.
  assert.equal(
    (
      await s.call("fs_write", {
        path: "gd2/config",
        content: `[filter "evil"]\n\tclean = ${s.program}\n`,
        createParents: true,
      })
    ).isError,
    false,
  );
  assert.equal(
    (await s.call("fs_write", { path: "sub4/.gitattributes", content: "*.txt filter=evil\n", createParents: true }))
      .isError,
    false,
  );
  assert.equal((await s.call("fs_write", { path: "sub4/a.txt", content: "a\n" })).isError, false);
  await s.call("git_run", { args: ["init", "--separate-git-dir=gd2", "sub4"] });
  const add = await s.call("git_run", { cwd: "sub4", args: ["add", "."] });
  assert.equal(add.isError, true, "the planted filter makes ccb refuse git in sub4");
  assert.match(add.text, /filter\.evil\.clean/);
  assert.equal(s.ran(), false);
});
