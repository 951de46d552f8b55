import assert from "node:assert/strict";
import { appendFileSync, linkSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { git, gitMayFail } from "../helpers/git.ts";
import { connectStdio, type StdioPeer } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

/*
 * git reads and writes only confined, single-link files. A workspace file hard-linked to an
 * outside file, and outside paths inside `-c` values, option values and repository config, are
 * tried through `ccb serve --stdio`; the outside file must stay untouched and its content must
 * never reach the caller. Control runs of plain git show each attack is live.
 */
describe("git_run: hard links and paths inside values", () => {
  const ws = tmpdirFixture({ git: true, prefix: "ccb-attack-paths-" });
  const outside = tmpdirFixture({ prefix: "ccb-outside-" });
  const home = tmpdirFixture({ prefix: "ccb-home-" });
  const SECRET = `TOP-SECRET-${process.pid}-${Date.now()}`;
  const secretFile = join(outside.path, "secret.txt");
  const templateFile = join(outside.path, "template.txt");
  const revsFile = join(outside.path, "revs.txt");
  let peer: StdioPeer;

  async function call(name: string, args: Record<string, unknown>) {
    const r = await peer.client.callTool({ name, arguments: args });
    const text = (r.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("\n");
    return { isError: r.isError === true, text };
  }
  /** The call must be refused and must not show the secret; the outside file must be unchanged. */
  async function refusedWithoutLeak(name: string, args: Record<string, unknown>, pattern: RegExp) {
    const r = await call(name, args);
    assert.equal(r.isError, true, `${JSON.stringify(args)} was not refused: ${r.text}`);
    assert.match(r.text, pattern);
    assert.doesNotMatch(r.text, new RegExp(SECRET), `${JSON.stringify(args)} leaked the outside content`);
    assert.equal(readFileSync(secretFile, "utf8"), `${SECRET}\n`, `${JSON.stringify(args)} changed the outside file`);
  }

  before(async () => {
    writeFileSync(secretFile, `${SECRET}\n`);
    writeFileSync(templateFile, `${SECRET} as a commit message\n`);
    writeFileSync(revsFile, `${SECRET}\n`);
    writeFileSync(join(ws.path, "in.txt"), "inside\n");
    writeFileSync(join(ws.path, "a.txt"), "alpha\n");
    git(ws.path, "add", ".");
    git(ws.path, "commit", "-q", "-m", "initial");
    linkSync(secretFile, join(ws.path, "hard"));
    mkdirSync(join(ws.path, "d1"));
    mkdirSync(join(ws.path, "d2"));
    writeFileSync(join(ws.path, "d1", "x"), "inside\n");
    linkSync(secretFile, join(ws.path, "d2", "x"));
    peer = await connectStdio(ws.path, [], { HOME: home.path });
  });
  after(async () => {
    await peer?.close();
    ws.cleanup();
    outside.cleanup();
    home.cleanup();
  });

  it("--output through a hard link is refused and the outside file is untouched", async () => {
    await refusedWithoutLeak("git_run", { args: ["log", "--output=hard"] }, /hard-linked/);
    await refusedWithoutLeak("git_run", { args: ["log", "--output", "hard"] }, /hard-linked/);
    await refusedWithoutLeak("git_run", { args: ["format-patch", "-1", "--stdout", "--output=hard"] }, /hard-linked/);
  });

  it("diff --no-index and grep --no-index never read through a hard link (files and directories)", async () => {
    await refusedWithoutLeak("git_run", { args: ["diff", "--no-index", "in.txt", "hard"] }, /hard-linked/);
    await refusedWithoutLeak("git_run", { args: ["diff", "--no-index", "d1", "d2"] }, /hard-linked/);
    await refusedWithoutLeak("git_run", { args: ["grep", "--no-index", "TOP-SECRET"] }, /hard-linked/);
    await refusedWithoutLeak("git_run", { args: ["grep", "--no-index", "TOP-SECRET", "--", "d2"] }, /hard-linked/);
  });

  it("git add of a hard-linked file (by name or under a directory) is refused", async () => {
    await refusedWithoutLeak("git_run", { args: ["add", "hard"] }, /hard-linked/);
    await refusedWithoutLeak("git_run", { args: ["add", "."] }, /hard-linked/);
    await refusedWithoutLeak("git_run", { args: ["add", "d2"] }, /hard-linked/);
    assert.doesNotMatch(git(ws.path, "ls-files"), /hard|d2/, "nothing hard-linked reached the index");
  });

  it("the blob of a hard-linked index entry is not shown (show :hard, HEAD:hard, cat-file)", async () => {
    // As if a terminal had staged it: the index blob holds the outside content.
    git(ws.path, "add", "hard");
    assert.match(
      gitMayFail(ws.path, "show", ":hard").stdout,
      new RegExp(SECRET),
      "control: plain git shows the outside content",
    );
    await refusedWithoutLeak("git_run", { args: ["show", ":hard"] }, /hard-linked/);
    await refusedWithoutLeak("git_run", { args: ["show", ":0:hard"] }, /hard-linked/);
    await refusedWithoutLeak("git_run", { args: ["cat-file", "-p", ":hard"] }, /hard-linked/);
    await refusedWithoutLeak("git_run", { args: ["diff", "--cached", "--", "hard"] }, /hard-linked/);
    git(ws.path, "rm", "-q", "--cached", "hard");
  });

  it("a modified tracked file that became a hard link is not diffed", async () => {
    // a.txt is tracked; replace it by a hard link to the outside file (as a terminal could).
    const twin = join(ws.path, "twin");
    linkSync(secretFile, twin);
    renameSync(twin, join(ws.path, "a.txt"));
    assert.match(
      gitMayFail(ws.path, "diff").stdout,
      new RegExp(SECRET),
      "control: plain git diff prints the outside content",
    );
    await refusedWithoutLeak("git_diff", {}, /hard-linked/);
    await refusedWithoutLeak("git_run", { args: ["diff"] }, /hard-linked/);
    await refusedWithoutLeak("git_run", { args: ["stash"] }, /hard-linked/);
    await refusedWithoutLeak("git_run", { args: ["commit", "-a", "-m", "x"] }, /hard-linked/);
    await refusedWithoutLeak("git_run", { args: ["add", "-u"] }, /hard-linked/);
    await refusedWithoutLeak("git_run", { args: ["grep", "TOP-SECRET"] }, /hard-linked/);
    git(ws.path, "checkout", "-q", "--", "a.txt");
    assert.equal(readFileSync(join(ws.path, "a.txt"), "utf8"), "alpha\n");
  });

  it("-c commit.template and blame.ignoreRevsFile naming an outside file are refused", async () => {
    await refusedWithoutLeak(
      "git_run",
      { args: ["-c", `commit.template=${templateFile}`, "commit", "--allow-empty", "--cleanup=verbatim"] },
      /outside the workspace/,
    );
    await refusedWithoutLeak(
      "git_run",
      {
        args: [
          "-c",
          `commit.template=../${join("..", outside.path)}/template.txt`,
          "commit",
          "--allow-empty",
          "--cleanup=verbatim",
        ],
      },
      /outside the workspace/,
    );
    await refusedWithoutLeak(
      "git_run",
      { args: ["-c", "commit.template=hard", "commit", "--allow-empty", "--cleanup=verbatim"] },
      /hard-linked/,
    );
    await refusedWithoutLeak(
      "git_run",
      { args: ["-c", `blame.ignoreRevsFile=${revsFile}`, "blame", "a.txt"] },
      /outside the workspace/,
    );
    await refusedWithoutLeak(
      "git_run",
      { args: ["-c", `core.excludesFile=${secretFile}`, "status"] },
      /outside the workspace/,
    );
    await refusedWithoutLeak(
      "git_run",
      { args: ["-c", `mailmap.file=${secretFile}`, "log", "-1"] },
      /outside the workspace/,
    );
    await refusedWithoutLeak("git_run", { args: ["config", "commit.template", templateFile] }, /outside the workspace/);
    assert.doesNotMatch(git(ws.path, "log", "--format=%B"), new RegExp(SECRET));
    // Controls: plain git takes both files.
    const c = gitMayFail(ws.path, "-c", `blame.ignoreRevsFile=${revsFile}`, "blame", "in.txt");
    assert.match(c.stderr, new RegExp(SECRET), "control: plain git prints the first line of the ignore-revs file");
  });

  it("option values naming an outside or hard-linked file are refused (-F, --template, --ignore-revs-file, --contents)", async () => {
    await refusedWithoutLeak(
      "git_run",
      { args: ["commit", "--allow-empty", "-F", templateFile] },
      /outside the workspace/,
    );
    await refusedWithoutLeak("git_run", { args: ["commit", "--allow-empty", "-F", "hard"] }, /hard-linked/);
    await refusedWithoutLeak(
      "git_run",
      { args: ["commit", "--allow-empty", `--template=${templateFile}`] },
      /outside the workspace/,
    );
    await refusedWithoutLeak(
      "git_run",
      { args: ["blame", `--ignore-revs-file=${revsFile}`, "a.txt"] },
      /outside the workspace/,
    );
    await refusedWithoutLeak("git_run", { args: ["blame", "--contents", "hard", "a.txt"] }, /hard-linked/);
    assert.doesNotMatch(git(ws.path, "log", "--format=%B"), new RegExp(SECRET));
  });

  it("a path-valued key planted in the repository config blocks git until removed", async () => {
    appendFileSync(join(ws.path, ".git", "config"), `[commit]\n\ttemplate = ${templateFile}\n`);
    await refusedWithoutLeak(
      "git_run",
      { args: ["commit", "--allow-empty", "--cleanup=verbatim"] },
      /commit\.template/,
    );
    await refusedWithoutLeak("git_status", {}, /commit\.template/);
    const unset = await call("git_run", { args: ["config", "--unset", "commit.template"] });
    assert.equal(unset.isError, false, unset.text);
    assert.equal((await call("git_status", {})).isError, false);
    assert.doesNotMatch(git(ws.path, "log", "--format=%B"), new RegExp(SECRET));
  });

  it("control: plain git writes the outside file through --output=hard", () => {
    git(ws.path, "log", "-1", "--output=hard");
    assert.doesNotMatch(
      readFileSync(secretFile, "utf8"),
      new RegExp(`^${SECRET}\\n$`),
      "plain git overwrote the outside file through the hard link",
    );
  });
});
