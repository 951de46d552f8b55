import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { claimDir, removeStale } from "../../../src/platform/state-folders.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

/** pids whose command line contains `mark` (what `ps -eo pid,args | grep mark` shows). */
function marked(mark: string): number[] {
  const out: number[] = [];
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0").join(" ").includes(mark)) out.push(Number(p));
    } catch {
      // gone
    }
  }
  return out;
}

async function until(what: string, fn: () => boolean, timeoutMs = 30_000): Promise<void> {
  const t0 = Date.now();
  while (!fn()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`TIMEOUT: ${what} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("platform/state-folders: owned state folders", () => {
  const home = tmpdirFixture({ prefix: "ccb-state-" });
  after(() => home.cleanup());

  it("a state folder whose owner died is removed at the next start", async () => {
    const parent = join(home.path, "stale");
    mkdirSync(parent, { recursive: true });
    const mine = join(parent, "live");
    mkdirSync(mine);
    claimDir(mine);
    const dead = join(parent, "dead");
    mkdirSync(dead);
    // A pid that is not running: a finished child's.
    const gone = spawn(process.execPath, ["--version"], { stdio: "ignore" });
    await new Promise((r) => gone.once("exit", r));
    writeFileSync(join(dead, "ccb-owner.json"), JSON.stringify({ pid: gone.pid, start: "1" }));
    // Folders of an older ccb have no owner file: removed only when no live process names them.
    const old = new Date(Date.now() - 3_600_000);
    const inUse = join(parent, "unclaimed-in-use");
    const orphan = join(parent, "unclaimed-orphan");
    for (const d of [inUse, orphan]) {
      mkdirSync(d);
      utimesSync(d, old, old);
    }
    const user = spawn("/bin/sh", ["-c", "sleep 60", inUse], { stdio: "ignore" });
    try {
      await until("the user of the folder runs", () => marked(inUse).length > 0);
      assert.deepEqual(removeStale(parent).sort(), ["dead", "unclaimed-orphan"]);
    } finally {
      user.kill("SIGKILL");
    }
    assert.ok(existsSync(mine), "a folder whose owner is alive stays");
    assert.ok(existsSync(inUse), "a folder a live process names stays");
    assert.ok(!existsSync(dead) && !existsSync(orphan));
  });
});
