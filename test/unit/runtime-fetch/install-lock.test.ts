import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { isCcbError } from "../../../src/core/errors.ts";
import { acquireLock, LOCK_STALE_MS } from "../../../src/runtime-fetch/install-lock.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

function lockContent(pid: number, token = "someone-else") {
  return JSON.stringify({ pid, host: hostname(), token, createdAt: new Date().toISOString() });
}

/** A live process that is not us (killed at the end of the test). */
function liveProcess() {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
  return { pid: child.pid as number, stop: () => child.kill("SIGKILL"), exited };
}

describe("runtime fetch install lock", () => {
  test("is exclusive: the second holder waits until the first releases", async () => {
    await using d = tmpdirFixture();
    const file = join(d.path, "x.lock");
    const first = await acquireLock(file);
    assert.equal(JSON.parse(readFileSync(file, "utf8")).pid, process.pid);
    let waited!: (pid: number) => void;
    const waitedFor = new Promise<number>((resolve) => (waited = resolve));
    const second = acquireLock(file, { onWait: (h) => waited(h.pid) });
    // The second one is waiting (the callback fired) before the first lets go.
    assert.equal(await waitedFor, process.pid);
    await first.release();
    const held = await second;
    assert.ok(existsSync(file));
    await held.release();
    assert.equal(existsSync(file), false);
  });

  test("a lock of a dead process is broken", async () => {
    await using d = tmpdirFixture();
    const file = join(d.path, "x.lock");
    const p = liveProcess();
    const dead = p.pid;
    p.stop();
    await p.exited; // reaped: the pid is gone
    writeFileSync(file, lockContent(dead));
    const l = await acquireLock(file);
    assert.equal(JSON.parse(readFileSync(file, "utf8")).pid, process.pid);
    await l.release();
  });

  test("a lock with our pid but a token we do not hold (left by an earlier run with a reused pid) is broken", async () => {
    await using d = tmpdirFixture();
    const file = join(d.path, "x.lock");
    writeFileSync(file, lockContent(process.pid, "not-ours"));
    const l = await acquireLock(file);
    await l.release();
  });

  test("a lock of a live process without a heartbeat for too long is broken; a fresh one is waited for", async () => {
    await using d = tmpdirFixture();
    const file = join(d.path, "x.lock");
    const p = liveProcess();
    try {
      writeFileSync(file, lockContent(p.pid));
      const ac = new AbortController();
      const waiting = acquireLock(file, { signal: ac.signal, onWait: () => ac.abort() });
      await assert.rejects(waiting, (e: unknown) => isCcbError(e, "ABORTED"));
      assert.equal(JSON.parse(readFileSync(file, "utf8")).pid, p.pid, "a live holder's lock is left alone");
      const old = new Date(Date.now() - LOCK_STALE_MS - 60_000);
      utimesSync(file, old, old);
      const l = await acquireLock(file);
      assert.equal(JSON.parse(readFileSync(file, "utf8")).pid, process.pid);
      await l.release();
    } finally {
      p.stop();
    }
  });

  test("releasing does not remove a lock that is no longer ours", async () => {
    await using d = tmpdirFixture();
    const file = join(d.path, "x.lock");
    const l = await acquireLock(file);
    writeFileSync(file, lockContent(123456, "replaced"));
    await l.release();
    assert.equal(JSON.parse(readFileSync(file, "utf8")).token, "replaced");
  });
});
