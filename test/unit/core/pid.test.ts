import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { describe, it } from "node:test";
import { pidAlive, pidRunning } from "../../../src/core/pid.ts";

function state(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] as string;
}

async function until(what: () => boolean): Promise<void> {
  while (!what()) await new Promise((r) => setTimeout(r, 10)); // the kernel changes a state between two reads
}

describe("pidRunning: a process that can answer", () => {
  it("a running process is; a zombie (dead, not reaped) and a stopped one are not, though pidAlive says they exist", async () => {
    assert.equal(pidRunning(process.pid), true, "positive control: this process");
    // `sleep 0 &` exits; its parent then execs `sleep 30`, which never reaps it: a zombie.
    const parent = spawn("/bin/sh", ["-c", "sleep 0 & echo $!; exec sleep 30"], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    const [line] = (await once(createInterface({ input: parent.stdout }), "line")) as [string];
    const zombie = Number(line);
    await until(() => state(zombie) === "Z");
    assert.equal(pidAlive(zombie), true, "kill(0) still finds it");
    assert.equal(pidRunning(zombie), false, "a zombie is not running");

    const stopped = spawn("sleep", ["30"], { stdio: "ignore" });
    const pid = stopped.pid as number;
    assert.equal(pidRunning(pid), true, "positive control: running before SIGSTOP");
    process.kill(pid, "SIGSTOP");
    await until(() => state(pid) === "T");
    assert.equal(pidAlive(pid), true);
    assert.equal(pidRunning(pid), false, "a stopped process is not running");
    process.kill(pid, "SIGCONT");
    await until(() => state(pid) !== "T");
    assert.equal(pidRunning(pid), true, "running again after SIGCONT");

    for (const c of [parent, stopped]) c.kill("SIGKILL");
    await Promise.all([once(parent, "exit"), once(stopped, "exit")]);
    assert.equal(pidRunning(pid), false, "gone");
    assert.equal(pidRunning(0), false);
    assert.equal(pidRunning(-1), false);
  });
});
