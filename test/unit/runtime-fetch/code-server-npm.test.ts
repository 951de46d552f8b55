// The npm runs of `ccb runtime fetch --runtime code-server`: the install log keeps npm's output in the
// order it was written across stdout and stderr, so a failed build's tail ends with the compiler's last
// words (stderr) and not with earlier build output (stdout) that was read after it. Found by a soak of
// runtime-progress.test.ts under load (the tail lacked the "fatal error" line). A fake npm on PATH
// writes alternately to both streams while this process's event loop is blocked until the fake says
// it has written everything, so both pipes hold all of it when this process reads: read from two
// pipes, stdout's whole backlog came before stderr's.
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { isCcbError } from "../../../src/core/errors.ts";
import { runNpm } from "../../../src/runtime-fetch/code-server.ts";
import { InstallLog } from "../../../src/runtime-fetch/install-log.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

const FAKE_NPM = `#!/bin/sh
i=1
while [ $i -le 40 ]; do
  if [ $((i % 2)) -eq 1 ]; then echo "build line $i"; else echo "build line $i" >&2; fi
  i=$((i + 1))
done
echo "src/a.cc:9:10: fatal error: gssapi/gssapi.h: No such file or directory" >&2
: > "$FAKE_NPM_WROTE"
exit 1
`;

/**
 * Block this thread, and so its event loop (nothing of the child's output is read meanwhile), until
 * `file` exists: the fake npm creates it once it has written everything.
 */
function blockUntilExists(file: string, boundMs = 60_000): void {
  const slot = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + boundMs;
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`the fake npm did not finish writing within ${boundMs} ms`);
    Atomics.wait(slot, 0, 0, 5);
  }
}

test("an install step's log keeps npm's stdout and stderr in the order written; a failure's tail ends with the compiler's last words", async () => {
  await using d = tmpdirFixture({ prefix: "ccb-npm-order-" });
  const bin = join(d.path, "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "npm"), FAKE_NPM);
  chmodSync(join(bin, "npm"), 0o755);
  const wrote = join(d.path, "wrote");
  const env = {
    PATH: `${bin}:${process.env.PATH ?? ""}`,
    XDG_STATE_HOME: join(d.path, "state"),
    FAKE_NPM_WROTE: wrote,
  };
  const log = InstallLog.open("npm-order", env);
  try {
    const run = runNpm({ args: ["install", "x.tgz"], cwd: d.path, env, o: {}, log, merged: true });
    blockUntilExists(wrote);
    const err = await run.then(
      () => assert.fail("the fake npm exits 1"),
      (e: unknown) => e,
    );
    assert.ok(isCcbError(err), String(err));
    const tail = err.message.split("The last lines of its output:\n")[1]?.split("\nAll of it:")[0] ?? "";
    const tailLines = tail.split("\n");
    assert.match(
      tailLines.at(-2) ?? "",
      /fatal error: gssapi\/gssapi\.h/,
      `the compiler's last words end the tail (before npm's exit line):\n${tail}`,
    );
    const lines = readFileSync(log.path, "utf8")
      .split("\n")
      .filter((l) => l.startsWith("build line "))
      .map((l) => Number(l.slice("build line ".length)));
    assert.deepEqual(
      lines,
      Array.from({ length: 40 }, (_, i) => i + 1),
      "the log has every line, in the order written",
    );
  } finally {
    log.close();
  }
});
