// The one pending-call correlator (src/editor-wire/pending.ts): every way a call ends, each exactly once,
// and nothing left waiting after it (no timer, no abort listener, no entry).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PendingCalls } from "../../../src/editor-wire/pending.ts";

describe("PendingCalls", () => {
  it("gives each call a fresh id and settles it by that id", async () => {
    const calls = new PendingCalls<string>();
    const sent: number[] = [];
    const a = calls.call((id) => sent.push(id));
    const b = calls.call((id) => sent.push(id));
    assert.deepEqual(sent, [1, 2]);
    assert.equal(calls.size, 2);
    assert.equal(calls.resolve(2, "two"), true);
    assert.equal(calls.reject(1, new Error("one failed")), true);
    assert.equal(await b, "two");
    await assert.rejects(a, /one failed/);
    assert.equal(calls.size, 0);
    // a late or unknown answer changes nothing
    assert.equal(calls.resolve(2, "again"), false);
    assert.equal(calls.reject(7, new Error("x")), false);
  });

  it("times out with the caller's error and tells the other side once", async () => {
    const calls = new PendingCalls();
    const given: number[] = [];
    const p = calls.call(() => undefined, {
      timeoutMs: 20,
      timeoutError: () => new Error("silent"),
      onGiveUp: (id) => given.push(id),
    });
    await assert.rejects(p, /silent/);
    assert.deepEqual(given, [1]);
    assert.equal(calls.size, 0);
    assert.equal(calls.resolve(1, "late"), false, "an answer after the timeout is dropped");
  });

  it("an abort gives the call up with the caller's error; the listener is removed once it settles", async () => {
    const calls = new PendingCalls();
    const ac = new AbortController();
    const given: number[] = [];
    const p = calls.call(() => undefined, {
      signal: ac.signal,
      abortError: () => new Error("cancelled"),
      onGiveUp: (id) => given.push(id),
    });
    ac.abort();
    await assert.rejects(p, /cancelled/);
    assert.deepEqual(given, [1]);
    // settled by its answer: a later abort does nothing
    const ac2 = new AbortController();
    const q = calls.call(() => undefined, { signal: ac2.signal, onGiveUp: (id) => given.push(id) });
    calls.resolve(2, "ok");
    ac2.abort();
    assert.equal(await q, "ok");
    assert.deepEqual(given, [1]);
  });

  it("an already aborted signal fails at once with its reason and sends nothing", async () => {
    const calls = new PendingCalls();
    let sent = false;
    const reason = new Error("too late");
    await assert.rejects(
      calls.call(() => (sent = true), { signal: AbortSignal.abort(reason) }),
      (e) => e === reason,
    );
    assert.equal(sent, false);
    assert.equal(calls.size, 0);
  });

  it("a send that throws fails the call and leaves nothing waiting", async () => {
    const calls = new PendingCalls();
    await assert.rejects(
      calls.call(
        () => {
          throw new Error("not connected");
        },
        { timeoutMs: 60_000 },
      ),
      /not connected/,
    );
    assert.equal(calls.size, 0);
  });

  it("failAll fails every waiting call with its own error and clears their timers", async () => {
    const calls = new PendingCalls();
    const ps = [calls.call(() => undefined, { timeoutMs: 60_000 }), calls.call(() => undefined)];
    let n = 0;
    assert.equal(
      calls.failAll(() => new Error(`gone ${++n}`)),
      2,
    );
    const errors = await Promise.allSettled(ps);
    assert.deepEqual(
      errors.map((r) => (r.status === "rejected" ? (r.reason as Error).message : "")),
      ["gone 1", "gone 2"],
    );
    assert.equal(calls.size, 0);
    assert.equal(
      calls.failAll(() => new Error("none")),
      0,
    );
  });
});
