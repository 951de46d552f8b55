import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { WebSocket } from "ws";
import { type Core, createCore } from "../../../src/core/core.ts";
import { silentLogger } from "../../../src/core/log.ts";
import { BRIDGE_PROTOCOL_VERSION } from "../../../src/editor-wire/contract.ts";
import { ALIVE_SCRIPT_PATH, aliveScript, EPOCH_PATH } from "../../../src/workbench/alive.ts";
import { BridgeServer } from "../../../src/workbench/bridge-server.ts";
import { BridgeProbe, HEALTH, HeadlessKeeper } from "../../../src/workbench/health.ts";
import { WorkbenchHostSupply } from "../../../src/workbench/host-supply.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

/**
 * Health means the editor answers: two extension hosts over real WebSockets, one whose window is
 * gone (it holds its socket but never answers a request, like the host a killed tab leaves behind
 * in the runtime) and one that answers.
 */
const ws = tmpdirFixture();
let core: Core;
let bridge: BridgeServer;
let probe: BridgeProbe;
let server: Server;
let url: string;
/** What the host supply's `running` says (ccb's own headless client runs): false but in the tests that set it. */
let expecting = false;

before(async () => {
  core = createCore({ roots: [ws.path] });
  bridge = new BridgeServer({
    core,
    editor: core.claimEditor("test"),
    log: core.log,
  });
  bridge.setSupply(new WorkbenchHostSupply({ bridge, running: () => expecting, waitMs: 1_500 }));
  probe = new BridgeProbe(bridge, core.log, { ...HEALTH, probeIntervalMs: 50, probeTimeoutMs: 300 });
  server = createServer((_req, res) => res.writeHead(404).end());
  server.on("upgrade", (req, socket, head) => bridge.handleUpgrade(req, socket, head));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/bridge`;
});

after(async () => {
  probe.close();
  await bridge.close();
  server.close();
  await core.dispose();
  ws.cleanup();
});

/** A fake extension host: `answer` decides whether it replies to requests (the probe is `commands.list`). */
async function host(focused: boolean, answer: { on: boolean }) {
  const sock = new WebSocket(url);
  const held: Array<{ id: number }> = [];
  sock.on("message", (d) => {
    const f = JSON.parse(d.toString()) as { type: string; id: number; method: string };
    if (f.type !== "request") return;
    if (answer.on) sock.send(JSON.stringify({ type: "response", id: f.id, result: { commands: [] } }));
    else held.push(f);
  });
  await once(sock, "open");
  sock.send(
    JSON.stringify({
      type: "hello",
      protocol: BRIDGE_PROTOCOL_VERSION,
      token: bridge.token,
      clientId: Math.random().toString(36).slice(2),
      focused,
      extensionVersion: "test",
      vscodeVersion: "test",
      workspaceFolders: [ws.path],
    }),
  );
  return {
    sock,
    /** Stop answering (the window is busy or gone). */
    hold() {
      answer.on = false;
    },
    /** Answer the requests held so far (the window came back). */
    release() {
      answer.on = true;
      for (const f of held.splice(0))
        sock.send(JSON.stringify({ type: "response", id: f.id, result: { commands: [] } }));
    },
  };
}

const until = async (what: string, fn: () => boolean) => {
  for (let i = 0; i < 200 && !fn(); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(fn(), what);
};

describe("bridge health probe", () => {
  test("a host that stops answering stops serving; one that answers takes over; an answer brings it back", async () => {
    const answering = await host(false, { on: true });
    await until("the answering host serves", () => bridge.active !== undefined);
    const answeringConn = bridge.active;
    const gone = await host(true, { on: false });
    // The focused one serves at first (it is connected; no probe has failed yet).
    await until("the focused host serves", () => bridge.active !== answeringConn && bridge.active !== undefined);
    const goneConn = bridge.active;
    assert.ok(goneConn);
    // Its probe gets no answer: it stops serving, the answering host serves.
    await until("the silent host lost the role", () => bridge.active === answeringConn);
    assert.equal(goneConn.responsive, false);
    assert.equal(answeringConn?.responsive, true, "positive control: the answering host stays responsive");
    assert.deepEqual(
      { responsive: probe.snapshot().responsive, hosts: probe.snapshot().hosts },
      { responsive: 1, hosts: 2 },
    );
    // Its window comes back: the late answer to the pending probe restores it, and focus puts it first again.
    gone.release();
    await until("the host that answers again serves", () => bridge.active === goneConn);
    assert.equal(goneConn.responsive, true);
    gone.sock.close();
    answering.sock.close();
    await until("nothing connected", () => bridge.connections.length === 0);
  });

  test("a window known gone (ccb's Chromium exited): the calls waiting on its silent host are given up at once, not at their timeout; the control waits", async () => {
    const settle = (p: Promise<unknown>) =>
      p.then(
        () => "answered",
        (e: { code?: string }) => e.code ?? "error",
      );
    // control: a silent host without windowGone keeps the call waiting past the probe's deadline
    const first = await host(true, { on: false });
    await until("it connected", () => bridge.connections.length === 1);
    const conn1 = bridge.connections[0];
    assert.ok(conn1);
    const waiting = settle(bridge.callOn(conn1, "commands.list", { filter: "x" }, { timeoutMs: 60_000 }));
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(conn1.responsive, false, "its probe went unanswered");
    assert.equal(conn1.pending.size > 0, true, "control: without windowGone the call still waits");
    // now the window is known gone: the waiting call is given up with BRIDGE_UNAVAILABLE
    const t0 = performance.now();
    probe.windowGone();
    assert.equal(await waiting, "BRIDGE_UNAVAILABLE");
    assert.ok(performance.now() - t0 < 5_000);
    // a host that answers keeps its calls (positive control of the probe inside windowGone)
    const live = await host(false, { on: true });
    await until("two hosts", () => bridge.connections.length === 2);
    const conn2 = bridge.connections.find((c) => c !== conn1);
    assert.ok(conn2);
    probe.windowGone();
    assert.equal(
      await settle(bridge.callOn(conn2, "commands.list", { filter: "x" }, { timeoutMs: 5_000 })),
      "answered",
    );
    first.sock.close();
    live.sock.close();
    await until("nothing connected", () => bridge.connections.length === 0);
  });

  test("a host expected back (ccb's own client, busy past its probe): a tool call waits for it and is answered; past the bound it says why", async () => {
    const settle = (p: Promise<unknown>) =>
      p.then(
        (r) => r,
        (e: { code?: string }) => e.code ?? "error",
      );
    expecting = true;
    try {
      const busy = await host(false, { on: true });
      await until("it serves", () => bridge.active !== undefined);
      busy.hold();
      await until("its probe went unanswered: it does not serve", () => bridge.active === undefined);
      assert.equal(core.bridge.status().connected, true, "the core keeps the bridge: a call waits");
      // it answers again while a tool call waits: the call is served, not refused
      const waiting = settle(core.bridge.call("commands.list", { filter: "x" }));
      await new Promise((r) => setTimeout(r, 300));
      busy.release();
      assert.deepEqual(await waiting, { commands: [] });
      // it stays silent past the bound: the call says why (the control of the wait)
      busy.hold();
      await until("silent again", () => bridge.active === undefined);
      const t0 = performance.now();
      assert.equal(await settle(core.bridge.call("commands.list", { filter: "x" })), "BRIDGE_UNAVAILABLE");
      assert.ok(performance.now() - t0 >= 1_400, "it waited for the host");
      busy.sock.close();
      await until("nothing connected", () => bridge.connections.length === 0);
    } finally {
      expecting = false;
    }
  });

  test("with no host answering, tools say why instead of waiting on a window nobody has", async () => {
    const gone = await host(false, { on: false });
    await until("it serves first", () => bridge.active !== undefined);
    await until("then it does not", () => bridge.active === undefined && bridge.connections.length === 1);
    assert.equal(core.bridge.status().connected, false);
    gone.sock.close();
    await until("nothing connected", () => bridge.connections.length === 0);
  });
});

describe("the script every workbench page gets", () => {
  test("is valid JavaScript, asks for the epoch beside itself and carries the gateway's proof key", () => {
    const key = Buffer.alloc(32, 7);
    const script = aliveScript(key);
    assert.doesNotThrow(() => new Function(script));
    assert.ok(script.includes(`me.indexOf("${ALIVE_SCRIPT_PATH}")) + "${EPOCH_PATH}"`));
    assert.ok(script.includes(`bytes("${key.toString("hex")}")`));
    assert.doesNotMatch(script, /ALIVE_KEY/);
  });
});

/** A headless client that never exits, whose page answers DevTools with `evaluate`. */
function fakeClient(evaluate: () => Promise<unknown>) {
  return {
    pid: 1,
    uid: 1,
    sandbox: true,
    evaluate,
    reload: async () => undefined,
    leave: async () => undefined,
    exited: new Promise<void>(() => undefined),
    close: async () => undefined,
  };
}

describe("the headless keeper's no-answer grace", () => {
  /**
   * A keeper over a client that never gets an extension host to answer, run for 700 ms with `during`
   * acting on it (its stop function called at the end); returns how many clients it opened.
   */
  async function quiet(during: (k: HeadlessKeeper) => () => void, hostStartMs = HEALTH.hostStartMs): Promise<number> {
    let opened = 0;
    const quietProbe = {
      lastAnswerAt: 0,
      snapshot: () => ({ responsive: 0, hosts: 0, lastProbeMs: null, sinceAnswerMs: null }),
    };
    const keeper = new HeadlessKeeper({
      open: () => {
        opened++;
        return Promise.resolve(fakeClient(async () => 1));
      },
      running: () => true,
      probe: quietProbe as unknown as BridgeProbe,
      log: silentLogger,
      onChange: () => undefined,
      timing: {
        ...HEALTH,
        probeIntervalMs: 20,
        probeTimeoutMs: 200,
        headlessGraceMs: 150,
        backoffMinMs: 10,
        hostStartMs,
      },
    });
    await keeper.start();
    const stop = during(keeper);
    await new Promise((r) => setTimeout(r, 700));
    stop();
    await keeper.close();
    return opened;
  }

  /** `progress` is called every 40 ms when set. */
  const run = (progress: boolean) =>
    quiet((k) => {
      const tick = progress ? setInterval(() => k.progress(), 40) : undefined;
      return () => clearInterval(tick);
    });

  /** The runtime launched an extension host at the keeper's start; it (or its runtime) exits after `exitAfterMs` (never when undefined). */
  const launched = (exitAfterMs: number | undefined, hostStartMs = 5_000, gone: "host" | "runtime" = "host") =>
    quiet((k) => {
      k.hostLaunched(4242);
      const exit =
        exitAfterMs === undefined
          ? undefined
          : setTimeout(() => (gone === "host" ? k.hostExited(4242) : k.runtimeExited()), exitAfterMs);
      return () => clearTimeout(exit);
    }, hostStartMs);

  test("an extension host the runtime launched keeps its page past the grace while it starts; one that exits (or whose runtime does), or starts for longer than hostStartMs, does not", async () => {
    assert.equal(await launched(undefined), 1, "a host on its way (alive, not yet answering) keeps the page");
    assert.ok((await launched(100)) > 1, "control: the host exited, so the grace replaces the page");
    assert.ok(
      (await launched(100, 5_000, "runtime")) > 1,
      "the runtime exited (it logs no exit for its hosts): replaced",
    );
    assert.ok((await launched(undefined, 200)) > 1, "control: a host starting for longer than hostStartMs does not");
  });

  test("a page still making progress (loaded, its extension host launched) is not replaced; one that stalls is", async () => {
    assert.equal(await run(true), 1, "progress keeps the page that is still starting");
    assert.ok((await run(false)) > 1, "control: without progress the grace replaces it");
  });
});

describe("the headless keeper's DevTools check", () => {
  /** A keeper over a page whose DevTools answers each request after `answerMs` (never when undefined); a host answers. */
  async function run(answerMs: number | undefined): Promise<number> {
    let opened = 0;
    const answeringProbe = {
      lastAnswerAt: Date.now(),
      snapshot: () => ({ responsive: 1, hosts: 1, lastProbeMs: 1, sinceAnswerMs: 0 }),
    };
    const keeper = new HeadlessKeeper({
      open: () => {
        opened++;
        return Promise.resolve(
          fakeClient(() =>
            answerMs === undefined
              ? new Promise(() => undefined)
              : new Promise((r) => setTimeout(() => r(1), answerMs)),
          ),
        );
      },
      running: () => true,
      probe: answeringProbe as unknown as BridgeProbe,
      log: silentLogger,
      onChange: () => undefined,
      timing: { ...HEALTH, probeIntervalMs: 20, probeTimeoutMs: 40, headlessGraceMs: 300, backoffMinMs: 10 },
    });
    await keeper.start();
    await new Promise((r) => setTimeout(r, 900));
    await keeper.close();
    return opened;
  }

  test("a page starved of CPU (each answer far past the probe timeout, within the grace) is kept; one that never answers is replaced", async () => {
    assert.equal(await run(200), 1, "late answers keep the page");
    assert.ok((await run(undefined)) > 1, "control: a page that answers nothing is replaced");
  });
});
