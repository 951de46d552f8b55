import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { runCcb, spawnCcb } from "../helpers/cli.ts";
import { IdeClient, jsonOf, textsOf } from "../helpers/ide-client.ts";
import { exitOf, Output } from "../helpers/proc-output.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

/** `ccb ide` as a person runs it: the built CLI (or the compiled binary with CCB_TEST_BIN). */
describe("ccb ide (CLI)", () => {
  const tmp = tmpdirFixture({ prefix: "ccb-ide-cli-" });
  const ws = join(tmp.path, "my project");
  const cfg = join(tmp.path, "cfg");
  const env = () => ({
    ...process.env,
    CLAUDE_CONFIG_DIR: cfg,
    NO_PROXY: "corp.example",
    no_proxy: undefined,
    CCB_LOG_LEVEL: "debug",
  });
  const ideDir = join(cfg, "ide");
  const locks = () => (existsSync(ideDir) ? readdirSync(ideDir).filter((f) => f.endsWith(".lock")) : []);

  before(() => mkdirSync(ws));
  after(() => tmp.cleanup());

  function start(extra: string[] = []) {
    const child = spawnCcb(["ide", "--no-workbench", "--workspace", ws, ...extra], { env: env() });
    const out = new Output(child.stdout);
    const err = new Output(child.stderr);
    return { child, out, err };
  }

  it("-- <command>: runs it with CLAUDE_CODE_SSE_PORT, ENABLE_IDE_INTEGRATION and loopback NO_PROXY, then stops and propagates its exit code", async () => {
    const script = [
      "const fs = require('fs');",
      "const dir = process.argv[1];",
      "const lock = JSON.parse(fs.readFileSync(dir + '/' + process.env.CLAUDE_CODE_SSE_PORT + '.lock', 'utf8'));",
      "console.log('CHILD ' + JSON.stringify({ port: process.env.CLAUDE_CODE_SSE_PORT, ide: process.env.ENABLE_IDE_INTEGRATION, np: process.env.NO_PROXY, np2: process.env.no_proxy, pid: lock.pid, folders: lock.workspaceFolders, name: lock.ideName }));",
      "process.exit(7);",
    ].join("\n");
    const { child, out } = start(["--", process.execPath, "-e", script, ideDir]);
    const { code } = await exitOf(child);
    await out.waitFor(/CHILD (.*)\n/);
    const line = JSON.parse(out.text.match(/CHILD (.*)\n/)![1]!);
    assert.equal(code, 7);
    assert.match(out.text, new RegExp(`127\\.0\\.0\\.1:${line.port}`));
    assert.equal(line.ide, "true");
    assert.equal(line.np, "corp.example,127.0.0.1,localhost,::1");
    assert.equal(line.np2, line.np);
    assert.equal(line.pid, child.pid, "the lock names ccb's own pid");
    assert.deepEqual(line.folders, [ws]);
    // distinct per front end: the folders, the command it runs, and its pid (two in one folder differ)
    assert.equal(line.name, `ccb (my project) · ccb ide -- node · pid ${child.pid}`);
    assert.deepEqual(locks(), [], "lock removed after the command exited");
  });

  for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    it(`removes its lock file on ${sig}`, async () => {
      const { child, err } = start();
      const m = await err.waitFor(/lock file (\S+\.lock)/);
      assert.equal(existsSync(m[1]!), true);
      child.kill(sig);
      const { code } = await exitOf(child);
      assert.equal(code, 0);
      assert.equal(existsSync(m[1]!), false);
    });
  }

  it("a protocol client connects with the lock file's token; editor tools say there is no workbench", async () => {
    const { child, err } = start();
    try {
      const m = await err.waitFor(/lock file (\S+\.lock)/);
      const lock = JSON.parse(readFileSync(m[1]!, "utf8"));
      const port = Number(m[1]!.match(/(\d+)\.lock$/)![1]);
      const c = await IdeClient.connect(port, lock.authToken);
      await c.handshake();
      const d = await c.call("getDiagnostics", {});
      assert.equal(d.isError, true);
      assert.match(textsOf(d)[0]!, /BRIDGE_UNAVAILABLE.*--no-workbench/);
      assert.equal(jsonOf(await c.call("getWorkspaceFolders")).folders[0].path, ws);
      assert.doesNotMatch(err.text, new RegExp(lock.authToken), "the token never reaches the logs");
      await c.close();
    } finally {
      child.kill("SIGTERM");
      await exitOf(child);
    }
  });

  it("--status lists running servers (never the token); kill -9 leaves a stale lock that the next start cleans", async () => {
    const first = start();
    const m = await first.err.waitFor(/lock file (\S+\.lock)/);
    const port = m[1]!.match(/(\d+)\.lock$/)![1]!;
    const lock = JSON.parse(readFileSync(m[1]!, "utf8"));
    const status = await runCcb(["ide", "--status"], { env: env() });
    assert.equal(status.code, 0);
    assert.match(status.stdout, new RegExp(`port ${port}\\s+pid ${first.child.pid}\\s+ccb \\(my project\\)`));
    assert.doesNotMatch(status.stdout, new RegExp(lock.authToken));

    first.child.kill("SIGKILL");
    await exitOf(first.child);
    assert.equal(existsSync(m[1]!), true, "kill -9 cannot clean up");
    assert.match((await runCcb(["ide", "--status"], { env: env() })).stdout, /No ccb IDE servers are running/);

    const second = start();
    try {
      const removed = await second.err.waitFor(/removed a stale ccb IDE lock file: (\S+)/);
      assert.equal(removed[1], m[1]);
      const fresh = await second.err.waitFor(/lock file (\S+\.lock)\n/);
      assert.equal(existsSync(m[1]!), false);
      assert.deepEqual(locks(), [fresh[1]!.split("/").pop()]);
    } finally {
      second.child.kill("SIGTERM");
      await exitOf(second.child);
    }
  });
});
