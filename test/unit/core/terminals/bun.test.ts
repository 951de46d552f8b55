import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";
import { repoRoot } from "../../../helpers/cli.ts";
import { tmpdirFixture } from "../../../helpers/tmp.ts";

/** Run test/fixtures/bun-pty-check.ts under Bun (from the npm registry) and parse its JSON line. */
function runBunCheck(workspace: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const bun = join(repoRoot, "node_modules/.bin/bun");
    const child = spawn(bun, [join(repoRoot, "test/fixtures/bun-pty-check.ts"), workspace], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 170_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      const line = stdout.trim().split("\n").pop() ?? "";
      if (code !== 0 || !line.startsWith("{")) {
        reject(new Error(`bun-pty-check exited with ${code}\nstdout: ${stdout}\nstderr: ${stderr}`));
        return;
      }
      resolve(JSON.parse(line) as Record<string, unknown>);
    });
  });
}

describe("terminals under Bun (bun-terminal backend)", () => {
  it("round-trips echo, streams seq 1 200000 completely, resizes, reports exit 7, kills; refuses node-pty; pipes work", {
    timeout: 180_000,
  }, async () => {
    await using dir = tmpdirFixture();
    const r = await runBunCheck(dir.path);
    assert.equal(r.runtime, "object", "the fixture ran under Bun");
    assert.equal(r.backend, "bun-terminal");
    assert.equal(r.isPty, true);
    assert.match(String(r.echoScreen), /^ccb-42$/m);
    assert.equal(r.sttySize, "27 91");
    assert.deepEqual(r.kill, { running: false, signal: "SIGKILL", shellAlive: false, bgAlive: false });
    // 1,088,895 digits + 200,000 "\r\n": every byte, both as streamed and as counted by offsets.
    assert.deepEqual(r.seq, {
      id: "t2",
      streamed: 1_488_895,
      end: 1_488_895,
      exitCode: 0,
      tail: "199999\r\n200000\r\n",
    });
    assert.deepEqual(r.exit, { exitCode: 7, signal: null, running: false });
    assert.equal(r.screen, "HELLO world\n\n\n  at-4-3 héllo 世界");
    assert.equal(r.nodePtyUnderBun, "UNSUPPORTED");
    assert.deepEqual(r.pipe, { backend: "pipe", isPty: false, output: "through-a-pipe\n" });
  });
});
