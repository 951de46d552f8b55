import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CcbError } from "../../../src/core/errors.ts";
import type { Logger } from "../../../src/core/log.ts";
import type { BridgeConnection, BridgeServer } from "../../../src/workbench/bridge-server.ts";
import type { BridgeProbe, HeadlessKeeper, HeadlessState } from "../../../src/workbench/health.ts";
import { WorkbenchHostSupply } from "../../../src/workbench/host-supply.ts";
import { IdlePark } from "../../../src/workbench/park.ts";

/**
 * The idle policy of ccb's headless client (park.ts) against a scripted bridge and keeper: when it
 * closes (idle long enough, no call under way, every window holds nothing), when it must not (a call,
 * a task, a window that cannot say, a call that came while the windows were asked), and how calls
 * reopen it (once for concurrent callers; not when a person's tab serves; a bounded wait).
 */
const quiet = { tasks: 0, debugSessions: 0, reviews: 0, dirty: 0, terminals: 0 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rig(o: { holds?: () => Promise<unknown>; idleMs?: number; wakeTimeoutMs?: number } = {}) {
  const lines: string[] = [];
  const log = {
    info: (m: string) => lines.push(m),
    debug: () => undefined,
    warn: (m: string) => lines.push(m),
    child: () => log,
  } as unknown as Logger;
  const conn = { responsive: true, seq: 1 } as unknown as BridgeConnection;
  const activeListeners = new Set<(c: BridgeConnection | undefined) => void>();
  const bridge = {
    calls: { inFlight: 0, lastAt: Date.now() - 10_000 },
    connections: [conn] as BridgeConnection[],
    active: conn as BridgeConnection | undefined,
    asked: 0,
    callOn: async () => {
      bridge.asked++;
      return o.holds ? o.holds() : quiet;
    },
    waitForActive: (signal?: AbortSignal) =>
      new Promise<BridgeConnection>((resolve, reject) => {
        if (bridge.active) return resolve(bridge.active);
        const l = (c: BridgeConnection | undefined) => {
          if (c) resolve(c);
        };
        activeListeners.add(l);
        signal?.addEventListener("abort", () => reject(new Error("aborted")));
      }),
    connect(c: BridgeConnection) {
      bridge.connections = [c];
      bridge.active = c;
      for (const l of activeListeners) l(c);
    },
    onActiveChange(l: (c: BridgeConnection | undefined) => void) {
      activeListeners.add(l);
      return () => activeListeners.delete(l);
    },
    /** The role moves to nobody (the serving host stopped answering). */
    lose() {
      bridge.active = undefined;
      for (const l of activeListeners) l(undefined);
    },
    failed: [] as BridgeConnection[],
    failPending(c: BridgeConnection) {
      bridge.failed.push(c);
    },
  };
  const keeper = {
    state: "running" as HeadlessState,
    openedAt: Date.now() - 10_000,
    parks: 0,
    unparks: 0,
    async park() {
      keeper.parks++;
      keeper.state = "parked";
      bridge.connections = [];
      bridge.active = undefined;
    },
    /** Whether the park still read as parked when the keeper left its parked state (the core keeps its bridge). */
    parkedWhenUnparked: [] as boolean[],
    async unpark() {
      keeper.unparks++;
      keeper.state = "starting";
      keeper.parkedWhenUnparked.push(park.parked);
      keeper.state = "running";
      setTimeout(() => bridge.connect({ responsive: true, seq: 2 } as unknown as BridgeConnection), 50);
    },
  };
  /** windowRecentlyGone: a page's socket closed within the probe's window (a tab closed), set by a test. */
  const probe = { windowGone: () => undefined, windowRecentlyGone: false };
  let changes = 0;
  const park = new IdlePark({
    bridge: bridge as unknown as BridgeServer,
    keeper: keeper as unknown as HeadlessKeeper,
    probe: probe as unknown as BridgeProbe,
    log,
    idleMs: o.idleMs ?? 1_000,
    goneMs: 500,
    wakeTimeoutMs: o.wakeTimeoutMs ?? 5_000,
    onChange: () => changes++,
  });
  return { park, bridge, keeper, probe, lines, changes: () => changes };
}

describe("IdlePark: when ccb's headless client closes while idle", () => {
  it("closes once idle long enough with nothing held; a call reopens it and waits for the new host", async () => {
    const r = rig();
    await sleep(700); // checks every 250 ms
    assert.equal(r.keeper.parks, 1);
    assert.equal(r.park.parked, true);
    const [a, b] = [r.park.wake(), r.park.wake()]; // two calls at once
    assert.equal(r.park.parked, true, "still parked while reopening: a third call waits too");
    await Promise.all([a, b]);
    assert.equal(r.keeper.unparks, 1, "reopened once for both");
    assert.deepEqual(r.keeper.parkedWhenUnparked, [true], "parked until the new host serves, from the first step");
    assert.equal(r.park.parked, false);
    assert.ok(r.bridge.active);
    r.park.close();
  });

  it("control: not while a call is under way, nor before the idle time", async () => {
    const busy = rig();
    busy.bridge.calls = { inFlight: 1, lastAt: Date.now() - 10_000 };
    const fresh = rig({ idleMs: 60_000 });
    await sleep(700);
    assert.equal(busy.keeper.parks, 0);
    assert.equal(fresh.keeper.parks, 0);
    busy.park.close();
    fresh.park.close();
  });

  it("not while a window holds a task (named in the log), nor when a window cannot say", async () => {
    const task = rig({ holds: async () => ({ ...quiet, tasks: 1, terminals: 2 }) });
    const mute = rig({
      holds: async () => {
        throw new CcbError("BRIDGE_ERROR", "unknown method");
      },
    });
    await sleep(700);
    assert.equal(task.keeper.parks, 0);
    assert.equal(mute.keeper.parks, 0);
    assert.ok(
      task.lines.some((l) => /stays open while idle: 1 task running, 2 terminal/.test(l)),
      task.lines.join("\n"),
    );
    assert.ok(mute.lines.some((l) => /a window did not say what it holds/.test(l)));
    task.park.close();
    mute.park.close();
  });

  it("not when a call came while the windows were asked", async () => {
    let r!: ReturnType<typeof rig>;
    r = rig({
      holds: async () => {
        r.bridge.calls = { inFlight: 0, lastAt: Date.now() }; // a call started and ended meanwhile
        return quiet;
      },
    });
    await sleep(400);
    assert.ok(r.bridge.asked >= 1);
    assert.equal(r.keeper.parks, 0);
    r.park.close();
  });

  it("a call while a person's tab serves reopens nothing", async () => {
    const r = rig();
    await sleep(700);
    assert.equal(r.keeper.parks, 1);
    r.bridge.active = { responsive: true, seq: 9 } as unknown as BridgeConnection; // a person's tab
    await r.park.wake();
    assert.equal(r.keeper.unparks, 0);
    r.park.close();
  });

  it("a person's tab that served while closed stops answering with a call waiting: reopened at once, and that call given up", async () => {
    const r = rig();
    await sleep(700);
    assert.equal(r.keeper.parks, 1);
    const person = { responsive: true, seq: 9 } as unknown as BridgeConnection;
    r.bridge.connections = [person];
    r.bridge.active = person;
    r.bridge.lose();
    await sleep(20);
    assert.equal(r.keeper.unparks, 0, "control: no call waits, nothing reopens");
    r.bridge.active = person;
    r.bridge.calls = { inFlight: 1, lastAt: Date.now() }; // a call waits on the person's host
    (person as { responsive: boolean }).responsive = false; // its tab closed: the probe went unanswered
    r.probe.windowRecentlyGone = true; // (its page's socket closed)
    const fresh = { responsive: true, seq: 10 } as unknown as BridgeConnection;
    let failedWhenServed = -1;
    r.keeper.unpark = async () => {
      r.keeper.unparks++;
      r.keeper.state = "running";
      setTimeout(() => {
        failedWhenServed = r.bridge.failed.length;
        r.bridge.connect(fresh);
        r.bridge.connections = [person, fresh]; // the closed tab's host lingers
      }, 50);
    };
    r.bridge.lose();
    await sleep(0); // the reopening starts on the next tick
    assert.equal(r.keeper.unparks, 1, "reopened without waiting for another call");
    await r.park.wake();
    assert.equal(failedWhenServed, 0, "nothing given up before another window serves");
    assert.deepEqual(r.bridge.failed, [person], "then the calls on the host that stopped answering are given up");
    r.park.close();
  });

  it("a person's tab that only missed a probe (its window still there: a starved machine) keeps its waiting call: nothing reopens", async () => {
    const r = rig();
    await sleep(700);
    assert.equal(r.keeper.parks, 1);
    const person = { responsive: true, seq: 9 } as unknown as BridgeConnection;
    r.bridge.connect(person); // the person's tab serves
    r.bridge.calls = { inFlight: 1, lastAt: Date.now() }; // a call waits on the person's host
    (person as { responsive: boolean }).responsive = false; // slow: the probe went unanswered, no page closed
    r.bridge.lose();
    await sleep(20);
    assert.equal(r.keeper.unparks, 0, "not reopened for a window that is only slow");
    assert.ok(r.lines.some((l) => /slow to answer .* 1 call\(s\) waiting; they wait for it/.test(l)));
    assert.deepEqual(r.bridge.failed, [], "its call is not given up");
    // The same with its page's socket closed (the tab is gone): control, reopened at once.
    r.bridge.active = person;
    r.probe.windowRecentlyGone = true;
    r.bridge.lose();
    await sleep(0);
    assert.equal(r.keeper.unparks, 1, "control: a window that is gone reopens ccb's client at once");
    await r.park.wake();
    r.park.close();
  });

  it("a reopened client whose host never serves fails the call with BRIDGE_UNAVAILABLE (bounded)", async () => {
    const r = rig({ wakeTimeoutMs: 300 });
    await sleep(700);
    r.keeper.unpark = async () => {
      r.keeper.unparks++;
      r.keeper.state = "starting";
    };
    await assert.rejects(r.park.wake(), (e: unknown) => e instanceof CcbError && e.code === "BRIDGE_UNAVAILABLE");
    assert.equal(r.park.parked, false);
    r.park.close();
  });
});

describe("touch: an agent at work reopens a parked editor without waiting", () => {
  it("a tool call of any kind touches the core's bridge; the bridge server wakes its waker, unawaited", async () => {
    const { createCore } = await import("../../../src/core/core.ts");
    const { BridgeServer } = await import("../../../src/workbench/bridge-server.ts");
    const { defineTool, runTool, READ_ONLY } = await import("../../../src/tools/kernel.ts");
    const { z } = await import("zod");
    const core = createCore({ roots: [process.cwd()] });
    const editor = core.claimEditor("test");
    const bridge = new BridgeServer({ core, editor, log: core.log });
    let wakes = 0;
    let parked = true;
    const supply = new WorkbenchHostSupply({ bridge, running: () => false });
    supply.reopener = {
      get parked() {
        return parked;
      },
      wake: () => {
        wakes++;
        return new Promise<void>(() => undefined); // never reopens: touch must not wait for it
      },
    };
    bridge.setSupply(supply);
    editor.set(bridge);
    const before = bridge.calls.lastAt;
    await sleep(5);
    const plain = defineTool({
      name: "plain_tool",
      title: "A tool that needs no editor",
      description: "test",
      input: z.object({}),
      annotations: READ_ONLY,
      async execute() {
        return { text: "done" };
      },
    });
    const r = await runTool(plain, {}, { core, signal: new AbortController().signal, log: core.log });
    assert.equal(r.text, "done");
    assert.equal(wakes, 1, "the call woke the parked editor");
    assert.ok(bridge.calls.lastAt > before, "and restarted the idle clock");
    parked = false;
    bridge.touch();
    assert.equal(wakes, 1, "control: nothing to wake when not parked");
    await bridge.close();
    await core.dispose();
  });

  it("an editor call while parked whose reopening brings no host fails with BRIDGE_UNAVAILABLE", async () => {
    const { createCore } = await import("../../../src/core/core.ts");
    const { BridgeServer } = await import("../../../src/workbench/bridge-server.ts");
    const core = createCore({ roots: [process.cwd()] });
    const editor = core.claimEditor("test");
    const bridge = new BridgeServer({ core, editor, log: core.log, idleReason: () => "closed while idle" });
    const supply = new WorkbenchHostSupply({ bridge, running: () => false });
    supply.reopener = { parked: true, wake: async () => undefined };
    bridge.setSupply(supply);
    editor.set(bridge);
    await assert.rejects(
      bridge.call("commands.list", { filter: "x" }),
      (e: unknown) => e instanceof CcbError && e.code === "BRIDGE_UNAVAILABLE",
    );
    await bridge.close();
    await core.dispose();
  });
});
