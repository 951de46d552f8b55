import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { setImmediate as tick } from "node:timers/promises";
import { acquireLockFile } from "../../../src/core/lock-file.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

/**
 * The one lock-file algorithm (src/core/lock-file.ts), held by many waiters of one process at once:
 * the checkpoint store's lock when two stores of a workspace live in one process, a file's write
 * lock when two calls write it. A lock that carries this process's pid and a token it does not hold
 * counts as an earlier run's and is broken; a waiter that looked in the moment between another's
 * link() and its bookkeeping broke a live lock, and both held it (found by the checkpoint store's
 * two-stores test under load: a record's state file read while the other wrote it).
 */
test("many waiters of one process: never two holders at once, and every one gets its turn", async () => {
  const dir = tmpdirFixture({ prefix: "ccb-lock-" });
  const lockPath = join(dir.path, "lock");
  let holders = 0;
  let most = 0;
  let turns = 0;
  const one = async () => {
    for (let round = 0; round < 5; round++) {
      const release = await acquireLockFile(lockPath, { staleMs: 30_000, heartbeatMs: 5_000, pollMs: 1 });
      holders++;
      most = Math.max(most, holders);
      turns++;
      // hold across a few turns of the event loop, as a record's git processes do
      for (let i = 0; i < 3; i++) await tick();
      holders--;
      await release();
    }
  };
  await Promise.all(Array.from({ length: 40 }, one));
  assert.equal(turns, 200, "every waiter got every turn");
  assert.equal(most, 1, `at most one holder at a time (at worst ${most} at once)`);
  assert.deepEqual(readdirSync(dir.path), [], "no lock or temp file is left behind");
  dir.cleanup();
});
