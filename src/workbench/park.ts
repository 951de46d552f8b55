import type { EditorMethods } from "../core/editor/bridge.ts";
import { CcbError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { BridgeConnection, BridgeServer } from "./bridge-server.ts";
import type { BridgeProbe, HeadlessKeeper } from "./health.ts";
import type { Reopener } from "./host-supply.ts";

/** A window's answer to `workbench.activity` (callOn has already checked it against the contract). */
type Activity = EditorMethods["workbench.activity"]["result"];

/**
 * ccb's headless client closed while nobody needs it (issue 35: it is most of an idle workspace's
 * memory, the browser and the extension host with its TypeScript server), and reopened by the next
 * editor call, which waits for it.
 *
 * It closes when all of these hold: no editor call for `idleMs` (probes are not calls) and none
 * under way; the client has run that long; and every window that answers says it holds nothing
 * that closing ccb's window would lose (`workbench.activity`: no task running, no debug session,
 * no review open, no unsaved document, no terminal that is not one of ccb's PTYs). Every window is
 * asked, a person's too (a window that cannot say counts as busy): ccb cannot tell which host is
 * its own page's, so a person's running task also keeps the client open.
 *
 * While closed, the core keeps the bridge server as its bridge (host-supply.ts: `parked`), so a
 * call does not fail with BRIDGE_UNAVAILABLE: it reopens the client and waits (bounded) for a host
 * to serve. A person's tab that serves meanwhile answers without reopening anything.
 */
export class IdlePark implements Reopener {
  readonly #timer: NodeJS.Timeout;
  #parking: Promise<void> | undefined;
  #waking: Promise<void> | undefined;
  #lastBusy = "";
  /** The host that served last (active). */
  #served: BridgeConnection | undefined;
  #closed = false;
  readonly #offActive: () => void;

  constructor(
    private readonly o: {
      bridge: BridgeServer;
      keeper: HeadlessKeeper;
      probe: BridgeProbe;
      log: Logger;
      /** Close after this long without an editor call. */
      idleMs: number;
      /** How long a call waits for the reopened client's host (default 120 s). */
      wakeTimeoutMs?: number;
      /** How long to wait for the closed page's hosts to leave or stop answering (the probe's timeout). */
      goneMs: number;
      /** Told when the client closed, reopened, or failed to (the bridge's reason). */
      onChange: () => void;
      /** Told when a call reopens the client (the timeline counts from here). */
      onWake?: () => void;
    },
  ) {
    const every = Math.min(5_000, Math.max(250, Math.floor(o.idleMs / 4)));
    this.#timer = setInterval(() => void this.#check(), every);
    this.#timer.unref();
    this.#offActive = o.bridge.onActiveChange((a) => this.#onActive(a));
  }

  /**
   * The window that served while ccb's client was closed (a person's tab) left while calls wait on
   * it (its host disconnected, or a page's socket closed and the host then missed its probe: a closed
   * tab's extension host lingers for the runtime's reconnection grace): reopen now, not once those
   * calls have waited out their own timeouts and been retried (a minute each, found by
   * workbench-park under load). A host that only missed a probe while its window is still there is
   * slow, not gone (a starved machine: workbench-park at load 40 reopened ccb's whole client for a
   * person's tab that answered seconds later): its calls wait for it, and if it never answers, their
   * retry reopens the client (wake).
   */
  #onActive(active: BridgeConnection | undefined): void {
    const served = this.#served;
    if (active) this.#served = active;
    if (active || this.#closed || this.#parking || this.#waking || this.o.keeper.state !== "parked") return;
    const waiting = this.o.bridge.calls.inFlight;
    if (waiting === 0) return;
    if (served && this.o.bridge.connections.includes(served) && !this.o.probe.windowRecentlyGone) {
      this.o.log.info(
        `headless client: the window that served is slow to answer (it missed a probe) with ${waiting} call(s) waiting; they wait for it`,
      );
      return;
    }
    this.o.log.info(`headless client: the window that served stopped with ${waiting} call(s) waiting; reopening`);
    this.wake().catch(() => undefined); // the reason is the bridge's
  }

  /** Closing, closed, or reopening: a call goes through wake() first. */
  get parked(): boolean {
    return this.#parking !== undefined || this.#waking !== undefined || this.o.keeper.state === "parked";
  }

  async wake(signal?: AbortSignal): Promise<void> {
    if (this.#parking) await this.#parking;
    if (this.#closed || (this.o.bridge.active && !this.#waking)) return; // a person's tab serves
    if (!this.#waking) {
      if (this.o.keeper.state !== "parked") return;
      this.o.onWake?.();
      // #reopen runs after #waking is set: the keeper's state change it makes must still read as parked
      // (the core keeps this bridge), or a call starting meanwhile would find no bridge at all.
      this.#waking = Promise.resolve()
        .then(() => this.#reopen())
        .finally(() => {
          this.#waking = undefined;
          this.o.onChange();
        });
    }
    const waking = this.#waking;
    if (!signal) return waking;
    signal.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(new CcbError("ABORTED", "Stopped waiting for the editor to reopen."));
      signal.addEventListener("abort", onAbort, { once: true });
      waking.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
    });
  }

  async #reopen(): Promise<void> {
    const t0 = performance.now();
    const timeoutMs = this.o.wakeTimeoutMs ?? 120_000;
    await this.o.keeper.unpark("an editor call came");
    const bound = new AbortController();
    const timer = setTimeout(() => bound.abort(), timeoutMs); // kept: a waiting call is work under way
    try {
      await this.o.bridge.waitForActive(bound.signal);
    } catch {
      throw new CcbError(
        "BRIDGE_UNAVAILABLE",
        `The workbench's headless client was reopened after being closed while idle, but no editor window answered within ${Math.round(timeoutMs / 1000)} s.`,
        { hint: "ccb keeps retrying it; try the call again shortly, or open the workbench in a browser tab." },
      );
    } finally {
      clearTimeout(timer);
    }
    this.o.log.info(
      `headless client reopened: the editor serves again ${Math.round(performance.now() - t0)} ms after the call`,
    );
    // Calls still waiting on a host that stopped answering (a person's tab closed meanwhile) would
    // wait out their timeouts: they fail now with BRIDGE_UNAVAILABLE, whose hint says to retry, and
    // the retry reaches the window that serves.
    for (const c of this.o.bridge.connections)
      if (!c.responsive) this.o.bridge.failPending(c, "its window stopped answering; a reopened window serves");
  }

  async #check(): Promise<void> {
    const { bridge, keeper } = this.o;
    if (this.#closed || this.parked || keeper.state !== "running") return;
    const { inFlight, lastAt } = bridge.calls;
    if (inFlight > 0 || Date.now() - Math.max(lastAt, keeper.openedAt) < this.o.idleMs) return;
    const hosts = bridge.connections.filter((c) => c.responsive);
    if (hosts.length === 0) return; // nothing serves yet: the keeper's business
    const busy = await this.#holds(hosts);
    if (busy !== this.#lastBusy) {
      this.#lastBusy = busy;
      if (busy) this.o.log.info(`headless client stays open while idle: ${busy}`);
    }
    if (busy) return;
    const now = bridge.calls;
    if (this.#closed || this.parked || keeper.state !== "running" || now.inFlight > 0 || now.lastAt !== lastAt) return; // a call came while the windows were asked
    const before = bridge.connections;
    this.#parking = (async () => {
      await keeper.park(`no editor call for ${Math.round(this.o.idleMs / 1000)} s`);
      this.o.probe.windowGone(); // hosts of the closed page that linger stop serving within the probe's timeout
      await this.#gone(before);
    })().finally(() => {
      this.#parking = undefined;
      this.o.onChange();
    });
    this.o.onChange();
    await this.#parking;
  }

  /** What the windows hold that closing would lose, in words ("" when nothing). */
  async #holds(hosts: BridgeConnection[]): Promise<string> {
    const answers = await Promise.all(
      hosts.map((c) =>
        this.o.bridge.callOn(c, "workbench.activity", {}, { timeoutMs: 5_000 }).then(
          (r) => r as Activity,
          () => undefined,
        ),
      ),
    );
    this.o.log.debug(`what the windows hold: ${JSON.stringify(answers)}`);
    const shells = answers.flatMap((a) => a?.terminalNames ?? []);
    if (answers.some((a) => a === undefined)) return "a window did not say what it holds";
    const sum = { tasks: 0, debugSessions: 0, reviews: 0, dirty: 0, terminals: 0 };
    for (const a of answers) for (const k of Object.keys(sum) as (keyof typeof sum)[]) sum[k] += a?.[k] ?? 0;
    const words: Record<keyof typeof sum, string> = {
      tasks: "task running",
      debugSessions: "debug session",
      reviews: "review open",
      dirty: "unsaved document",
      terminals: "terminal of the workbench's own",
    };
    return (Object.keys(sum) as (keyof typeof sum)[])
      .filter((k) => sum[k] > 0)
      .map((k) => `${sum[k]} ${words[k]}${k === "terminals" && shells.length > 0 ? ` (${shells.join(", ")})` : ""}`)
      .join(", ");
  }

  /** Until every host that was there has left or stopped answering (bounded). */
  async #gone(before: readonly BridgeConnection[]): Promise<void> {
    const until = Date.now() + this.o.goneMs;
    while (Date.now() < until && !this.#closed) {
      const live = this.o.bridge.connections;
      if (before.every((c) => !live.includes(c) || !c.responsive)) return;
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#offActive();
  }
}
