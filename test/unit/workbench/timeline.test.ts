import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { Logger } from "../../../src/core/log.ts";
import {
  extensionHostEvent,
  followTimeline,
  runtimeStep,
  Timeline,
  timelineStep,
} from "../../../src/workbench/timeline.ts";
import { headlessChromiumFlags, LEVERS, serverNodeFlags, workbenchTuning } from "../../../src/workbench/tuning.ts";

function recorder(): { log: Logger; lines: string[]; levels: string[] } {
  const lines: string[] = [];
  const levels: string[] = [];
  const at = (level: string) => (m: string) => {
    lines.push(m);
    levels.push(level);
  };
  const log: Logger = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error"), child: () => log };
  return { log, lines, levels };
}

describe("the start's timeline", () => {
  test("reads its steps from the runtime's own output lines (code-server 4.139.1, as printed)", () => {
    assert.equal(runtimeStep("[21:03:10] Extension host agent started."), "VS Code server loaded");
    assert.equal(
      runtimeStep("[21:03:16] [<unknown>][51fe7527][ManagementConnection] New connection established."),
      "management connection",
    );
    assert.equal(
      runtimeStep("[21:03:21] [<unknown>][df7e2600][ExtensionHostConnection] <13553> Launched Extension Host Process."),
      "extension host launched",
    );
    assert.equal(
      runtimeStep("[21:03:20] [<unknown>][df7e2600][ExtensionHostConnection] Starting extension host process..."),
      undefined,
    );
    assert.equal(runtimeStep("HTTP server listening on /tmp/x.sock"), undefined);
  });

  test("reads an extension host's launch and exit, with its pid, from the runtime's lines", () => {
    assert.deepEqual(
      extensionHostEvent(
        "[21:03:21] [<unknown>][df7e2600][ExtensionHostConnection] <13553> Launched Extension Host Process.",
      ),
      { pid: 13553, event: "launched" },
    );
    assert.deepEqual(
      extensionHostEvent(
        "[21:09:02] [<unknown>][df7e2600][ExtensionHostConnection] <13553> Extension Host Process exited with code: 0, signal: null.",
      ),
      { pid: 13553, event: "exited" },
    );
    assert.equal(
      extensionHostEvent(
        "[21:03:34] [<unknown>][df7e2600][ExtensionHostConnection] <13553> [reconnection-grace-time] Extension host: read VSCODE_RECONNECTION_GRACE_TIME=10800000ms (10800s)",
      ),
      undefined,
    );
  });

  test("logs each step once per start at info level, and again after a restart, counted from the fault", () => {
    const r = recorder();
    const t = new Timeline(r.log);
    t.mark("runtime up");
    t.mark("runtime up");
    t.mark("bridge connected");
    assert.equal(r.lines.length, 2);
    assert.match(r.lines[0] as string, /^timeline: runtime up \+\d+\.\d\d s$/);
    t.restart("the runtime exited");
    t.mark("runtime up");
    assert.match(r.lines[2] as string, /^timeline: the runtime exited \(\d+\.\d\d s after start\)$/);
    assert.match(r.lines[3] as string, /^timeline: runtime up \+\d+\.\d\d s since the runtime exited$/);
    assert.deepEqual(new Set(r.levels), new Set(["info"]));
  });
});

describe("the start levers (CCB_WORKBENCH_TUNING)", () => {
  test("the defaults; `off` turns all off; `-name` one off, `+name` one on; unknown names change nothing", () => {
    assert.deepEqual(workbenchTuning({}), LEVERS);
    assert.equal(LEVERS["plain-loopback"], false, "off by default: it would hurt a person on an SSH tunnel");
    assert.equal(LEVERS["quick-heal"], false, "off by default: measured slower");
    assert.equal(LEVERS["size-mode"], false, "off by default: +5-6 s of CPU per start");
    assert.equal(LEVERS["single-process"], false, "off by default: webviews would lose their process isolation");
    assert.ok(Object.values(workbenchTuning({ CCB_WORKBENCH_TUNING: "off" })).every((v) => v === false));
    const one = workbenchTuning({ CCB_WORKBENCH_TUNING: "-early-browser, -nonsense, +quick-heal" });
    assert.equal(one["early-browser"], false);
    assert.equal(one["warm-server"], true);
    assert.equal(one["quick-heal"], true);
    assert.equal(one["plain-loopback"], false);
    assert.deepEqual(headlessChromiumFlags(workbenchTuning({ CCB_WORKBENCH_TUNING: "off" })), []);
    assert.deepEqual(serverNodeFlags(workbenchTuning({ CCB_WORKBENCH_TUNING: "off" })), []);
    const heap = workbenchTuning({ CCB_WORKBENCH_TUNING: "off,+young-gen,+size-mode" });
    assert.deepEqual(serverNodeFlags(heap), ["--max-semi-space-size=2", "--optimize-for-size"]);
    assert.deepEqual(headlessChromiumFlags(heap), ["--js-flags=--max-semi-space-size=2 --optimize-for-size"]);
  });
});

describe("the first start, told to a person (ccb ide follows the host's log)", () => {
  test("the logged line of each step parses back, text or JSON", () => {
    const r = recorder();
    const t = new Timeline(r.log);
    t.mark("runtime up");
    assert.deepEqual(timelineStep(`ccb ${r.lines[0]}`)?.step, "runtime up");
    assert.deepEqual(timelineStep('{"time":"x","level":"info","msg":"timeline: bridge connected +14.20 s"}'), {
      step: "bridge connected",
      seconds: 14.2,
    });
    assert.equal(timelineStep("ccb [headless] headless client: Chromium 4546 opened the workbench"), undefined);
  });

  test("only what is appended from now on, each known step once as a sentence, until the editor connects", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ccb-timeline-"));
    try {
      const log = join(dir, "host.log");
      writeFileSync(log, "ccb timeline: runtime up +1.00 s\n"); // an earlier host's start
      const told: string[] = [];
      const following = followTimeline(log, (l) => told.push(l), { pollMs: 10 });
      // Give the follower its starting offset before the new host writes.
      await new Promise((r) => setTimeout(r, 100));
      appendFileSync(log, "ccb runtime: code-server 4.139.1 from the cache\nccb timeline: runtime up +6.96 s\n");
      appendFileSync(log, "ccb timeline: workbench page answered (200) +10.99 s\nccb timeline: VS Code ser");
      appendFileSync(
        log,
        "ver loaded +11.59 s\nccb timeline: bridge connected +20.40 s\nccb timeline: page loaded +21 s\n",
      );
      await following;
      assert.deepEqual(told, [
        "workbench: the runtime is up (7.0 s)",
        "workbench: the VS Code server is loaded (11.6 s)",
        "workbench: the editor is connected: editor tools work (20.4 s)",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("stops when told to", async () => {
    const ac = new AbortController();
    const following = followTimeline(join(tmpdir(), "ccb-no-such-host.log"), () => undefined, {
      signal: ac.signal,
      pollMs: 10,
    });
    ac.abort();
    await following;
  });
});
