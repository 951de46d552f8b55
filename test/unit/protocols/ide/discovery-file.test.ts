import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  cleanStaleLocks,
  ideNameFor,
  isCcbIdeName,
  lockDir,
  readLocks,
  removeLock,
  runningServers,
  writeLock,
} from "../../../../src/protocols/ide/discovery-file.ts";
import { newToken } from "../../../../src/util/secrets.ts";
import { tmpdirFixture } from "../../../helpers/tmp.ts";

function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(r.stdout);
}

const body = (pid: number, ideName = "ccb (p)") => ({
  pid,
  workspaceFolders: ["/w"],
  ideName,
  transport: "ws" as const,
  authToken: newToken(),
  runningInWindows: false,
});

describe("ide lock files", () => {
  it("lives in ${CLAUDE_CONFIG_DIR:-~/.claude}/ide", () => {
    assert.equal(lockDir({ CLAUDE_CONFIG_DIR: "/x/cfg" }), "/x/cfg/ide");
    assert.equal(lockDir({ CLAUDE_CONFIG_DIR: "", HOME: process.env.HOME }).endsWith("/.claude/ide"), true);
  });

  it("writes atomically: 0700 folder, 0600 file, no temp file left; token has >= 128 bits", () => {
    using_tmp((dir) => {
      const d = join(dir, "a", "ide");
      const path = writeLock(d, 12345, body(process.pid));
      assert.equal(path, join(d, "12345.lock"));
      assert.equal(statSync(d).mode & 0o777, 0o700);
      assert.equal(statSync(path).mode & 0o777, 0o600);
      assert.deepEqual(readdirSync(d), ["12345.lock"]);
      assert.ok(Buffer.from(newToken(), "base64url").length >= 16);
      assert.notEqual(newToken(), newToken());
    });
  });

  it("distinct ideName per folder, recognisably ccb's", () => {
    assert.equal(ideNameFor(["/home/me/alpha"]), "ccb (alpha)");
    assert.equal(ideNameFor(["/a/x", "/b/y"]), "ccb (x, y)");
    assert.equal(isCcbIdeName("ccb (alpha)"), true);
    assert.equal(isCcbIdeName("Visual Studio Code"), false);
  });

  it("two front ends in one folder get distinct names (the front end and its pid), still ccb's", () => {
    const a = ideNameFor(["/home/me/alpha"], { label: "ccb ide -- claude", pid: 101 });
    const b = ideNameFor(["/home/me/alpha"], { label: "ccb ide", pid: 202 });
    assert.equal(a, "ccb (alpha) · ccb ide -- claude · pid 101");
    assert.notEqual(a, b);
    assert.equal(isCcbIdeName(a) && isCcbIdeName(b), true);
  });

  it("cleans only ccb's own stale locks (dead pid); keeps live ones and other IDEs' locks", () => {
    using_tmp((dir) => {
      const dead = deadPid();
      writeLock(dir, 20001, body(dead));
      writeLock(dir, 20002, body(process.pid));
      writeLock(dir, 20003, body(dead, "Visual Studio Code"));
      writeFileSync(join(dir, "20004.lock"), "{not json");
      const removed = cleanStaleLocks(dir);
      assert.deepEqual(removed, [join(dir, "20001.lock")]);
      assert.deepEqual(readdirSync(dir).sort(), ["20002.lock", "20003.lock", "20004.lock"]);
      assert.deepEqual(
        runningServers(dir).map((e) => e.port),
        [20002],
      );
      assert.deepEqual(
        readLocks(dir).map((e) => [e.port, e.alive]),
        [
          [20002, true],
          [20003, false],
        ],
      );
    });
  });

  it("removeLock removes only a lock that still carries our token", () => {
    using_tmp((dir) => {
      const mine = body(process.pid);
      const p = writeLock(dir, 20010, mine);
      assert.equal(removeLock(p, "someone else's"), false);
      assert.equal(existsSync(p), true);
      assert.equal(removeLock(p, mine.authToken), true);
      assert.equal(existsSync(p), false);
      assert.equal(removeLock(p, mine.authToken), false, "already gone is quiet");
    });
  });
});

function using_tmp(fn: (dir: string) => void): void {
  const t = tmpdirFixture({ prefix: "ccb-lock-" });
  try {
    mkdirSync(t.path, { recursive: true });
    fn(t.path);
  } finally {
    t.cleanup();
  }
}
