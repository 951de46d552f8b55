import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { waitForOutput } from "../../helpers/process.ts";

/**
 * The test helper's waits on a child's output, against a real child: a busy test reads its pipe late,
 * so lines a child wrote apart arrive in one chunk (stream.test's CI failure: the viewer line after
 * the pid line was lost by the second wait).
 */
describe("waitForOutput", () => {
  it("two waits in a row see two lines that arrived in one chunk, and a third waits for new output", async () => {
    const child = spawn(
      process.execPath,
      [
        "-e",
        'process.stderr.write("pid 42\\nviewer http://x/\\n"); setTimeout(() => process.stderr.write("later 7\\n"), 300)',
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    await new Promise((r) => setTimeout(r, 200)); // the test is busy: both lines wait in the pipe
    assert.equal((await waitForOutput(child, /pid (\d+)/))[1], "42");
    assert.equal((await waitForOutput(child, /viewer (\S+)/, { timeoutMs: 2_000 }))[1], "http://x/");
    assert.equal(
      (await waitForOutput(child, /(later|pid) (\d+)/, { timeoutMs: 5_000 }))[1],
      "later",
      "reads on past the last match",
    );
    await new Promise((r) => child.once("exit", r));
  });

  it("fails with the output it has not matched when the child exits first", async () => {
    const child = spawn(process.execPath, ["-e", 'process.stderr.write("starting\\n")'], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    await assert.rejects(
      waitForOutput(child, /ready/, { timeoutMs: 10_000 }),
      /exited \(0\) before \/ready\/; output:\nstarting/,
    );
  });
});
