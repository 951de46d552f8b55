import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { GitService } from "../../../../src/core/git/git.ts";
import { Workspace } from "../../../../src/core/workspace.ts";
import { git } from "../../../helpers/git.ts";
import { tmpdirFixture } from "../../../helpers/tmp.ts";

/*
 * ccb's git processes get a fixed environment: nothing GIT_* from the user's environment, and of the
 * user's global config only identity and a few harmless defaults. This file sets the process
 * environment before the first git call (ccb reads the user's global config once per process).
 */

const home = tmpdirFixture({ prefix: "ccb-git-home-" });
const evidence = tmpdirFixture({ prefix: "ccb-evidence-" });
const marker = join(evidence.path, "MARKER");
const evil = join(evidence.path, "evil.sh");
writeFileSync(evil, `#!/bin/sh\ntouch '${marker}'\nexit 1\n`, { mode: 0o755 });
mkdirSync(join(home.path, "hooks"));
writeFileSync(join(home.path, "hooks", "pre-commit"), `#!/bin/sh\n${evil}\nexit 0\n`, { mode: 0o755 });
const globalConfig = join(home.path, "gitconfig");
writeFileSync(
  globalConfig,
  [
    "[user]",
    "\tname = Global User",
    "\temail = global@example.com",
    "[init]",
    "\tdefaultBranch = trunk",
    "[core]",
    `\thooksPath = ${join(home.path, "hooks")}`,
    `\tfsmonitor = ${evil}`,
    `\tpager = ${evil}`,
    "[alias]",
    `\tst = !${evil}`,
    "[diff]",
    `\texternal = ${evil}`,
    "",
  ].join("\n"),
);

const saved = { ...process.env };
process.env.GIT_CONFIG_GLOBAL = globalConfig;
// Hostile GIT_* variables in ccb's own environment must not reach its git processes.
Object.assign(process.env, {
  GIT_CONFIG_PARAMETERS: `'core.hooksPath'='${join(home.path, "hooks")}'`,
  GIT_CONFIG_COUNT: "1",
  GIT_CONFIG_KEY_0: "core.fsmonitor",
  GIT_CONFIG_VALUE_0: evil,
  GIT_EXTERNAL_DIFF: evil,
  GIT_EDITOR: evil,
  GIT_SSH_COMMAND: evil,
  GIT_DIR: join(evidence.path, "nope.git"),
  GIT_WORK_TREE: evidence.path,
  GIT_INDEX_FILE: join(evidence.path, "index"),
});
after(() => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
  home.cleanup();
  evidence.cleanup();
});

test("identity and defaults come from the user's global config; its program-running keys and GIT_* variables do not", async () => {
  await using ws = tmpdirFixture();
  const svc = new GitService(new Workspace([ws.path]));
  assert.equal((await svc.run(["init", "-q"])).exitCode, 0);
  assert.equal((await svc.run(["symbolic-ref", "--short", "HEAD"])).stdout.trim(), "trunk");
  writeFileSync(join(ws.path, "f.txt"), "one\n");
  await svc.run(["add", "f.txt"]);
  const commit = await svc.run(["commit", "-m", "first"]);
  assert.equal(commit.exitCode, 0, commit.stderr);
  assert.equal((await svc.run(["log", "--format=%an <%ae>"])).stdout.trim(), "Global User <global@example.com>");
  writeFileSync(join(ws.path, "f.txt"), "two\n");
  assert.match((await svc.diff()).diff, /^\+two$/m);
  assert.match((await svc.run(["diff"])).stdout, /^\+two$/m);
  await svc.status();
  await assert.rejects(svc.run(["st"]));
  assert.equal(existsSync(marker), false, "a global-config or environment program ran");
  assert.equal(existsSync(join(evidence.path, "index")), false);
  // ccb's global config holds only the kept keys
  assert.equal((await svc.run(["config", "--global", "--get", "core.hooksPath"])).exitCode, 1);
  assert.equal((await svc.run(["config", "--global", "--get", "user.name"])).stdout.trim(), "Global User");

  // Controls: the same global config and variables are live for plain git.
  const { spawnSync } = await import("node:child_process");
  spawnSync("git", ["commit", "-am", "control"], {
    cwd: ws.path,
    env: { PATH: process.env.PATH, HOME: home.path, GIT_CONFIG_GLOBAL: globalConfig },
    stdio: "ignore",
  });
  assert.equal(existsSync(marker), true, "control: the global hooksPath runs the hook for plain git");
  rmSync(marker);
  writeFileSync(join(ws.path, "f.txt"), "three\n");
  spawnSync("git", ["diff"], {
    cwd: ws.path,
    env: { PATH: process.env.PATH, HOME: home.path, GIT_CONFIG_GLOBAL: "/dev/null", GIT_EXTERNAL_DIFF: evil },
    stdio: "ignore",
  });
  assert.equal(existsSync(marker), true, "control: GIT_EXTERNAL_DIFF runs for plain git");
});

test("a repository's own identity wins over the global one", async () => {
  await using ws = tmpdirFixture();
  execFileSync("git", ["init", "-q", ws.path], {
    env: { PATH: process.env.PATH, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
  });
  git(ws.path, "config", "user.name", "Repo User");
  git(ws.path, "config", "user.email", "repo@example.com");
  const svc = new GitService(new Workspace([ws.path]));
  assert.equal((await svc.run(["commit", "--allow-empty", "-m", "x"])).exitCode, 0);
  assert.equal((await svc.run(["log", "--format=%an <%ae>"])).stdout.trim(), "Repo User <repo@example.com>");
});
