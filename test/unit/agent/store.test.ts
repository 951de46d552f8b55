import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { SessionStore } from "../../../src/agent/store.ts";

const tmp = () => mkdtempSync(join(tmpdir(), "ccb-acp-unit-"));

test("store: append-only JSONL, torn last line ignored, fork, list by cwd, delete", () => {
  const dir = tmp();
  try {
    const store = new SessionStore(dir);
    const w = store.create("ccb-aaaaaaaa", "/p");
    w.append({ t: "title", title: "hello" });
    writeFileSync(store.pathOf("ccb-aaaaaaaa"), '{"t":"turn_start","tu', { flag: "a" });
    const s = store.read("ccb-aaaaaaaa");
    assert.equal(s.title, "hello");
    assert.equal(s.records.length, 2);
    store.fork("ccb-aaaaaaaa", "ccb-bbbbbbbb", "/p");
    store.create("ccb-cccccccc", "/q");
    assert.deepEqual(
      store
        .list("/p")
        .map((x) => x.sessionId)
        .sort(),
      ["ccb-aaaaaaaa", "ccb-bbbbbbbb"],
    );
    assert.equal(store.list().length, 3);
    assert.equal(store.delete("ccb-bbbbbbbb"), true);
    assert.equal(store.exists("ccb-bbbbbbbb"), false);
    assert.throws(() => store.pathOf("../../etc/passwd"), /Invalid session id/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
