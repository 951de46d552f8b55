import { toCcbError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { BridgeConnection, BridgeServer } from "./bridge-server.ts";
import type { HeadlessClient } from "./headless-client.ts";

/**
 * Health that means the editor answers, not that a socket is open.
 *
 * - Every extension host is probed every `probeIntervalMs` with a round trip through its window
 *   (`commands.list` asks the workbench page for its commands). A host whose window is gone (its
 *   tab closed, its browser killed: the runtime keeps the host for its reconnection grace, hours)
 *   or stuck does not answer within `probeTimeoutMs` and stops serving until it answers again.
 * - ccb's headless client is replaced when its browser exits, when its page leaves a DevTools
 *   request unanswered for `headlessGraceMs` (a hung renderer; a page starved of CPU answers late,
 *   and a late answer keeps it: replacing it would only cost a page load on a machine that is
 *   already busy), and when no host answers for `headlessGraceMs` while the runtime runs (e.g. its
 *   page is on a runtime that restarted). An extension host the runtime launched and that has
 *   not exited counts as one on its way for up to `hostStartMs`: on a starved machine a host takes
 *   longer than the grace from its launch to ccb's extension (seen: 31 s at load 34), and replacing
 *   its page then threw away a start that was about to serve. Replacements back off from 1 s to
 *   30 s while nothing answers.
 */
export const HEALTH = {
  probeIntervalMs: 2_500,
  probeTimeoutMs: 6_000,
  headlessGraceMs: 30_000,
  hostStartMs: 120_000,
  backoffMinMs: 1_000,
  backoffMaxMs: 30_000,
};

/** A filter that matches no command: the probe's answer stays a few bytes. */
const PROBE_FILTER = "\u0000ccb-health-probe";

export interface HealthSnapshot {
  /** Hosts whose last probe answered in time / all connected hosts. */
  responsive: number;
  hosts: number;
  /** Milliseconds of the last answered probe (any host); null before the first. */
  lastProbeMs: number | null;
  /** Milliseconds since a host last answered; null before the first answer. */
  sinceAnswerMs: number | null;
}

/** Probes every connected extension host through its window and marks it answering or not. */
export class BridgeProbe {
  readonly #pending = new Set<BridgeConnection>();
  readonly #timer: NodeJS.Timeout;
  readonly #offConnect: () => void;
  #lastProbeMs: number | null = null;
  #lastAnswerAt = 0;
  #closed = false;
  /** Until then (Date.now()), a host that misses its probe also has its waiting calls given up (windowGone). */
  #goneUntil = 0;

  constructor(
    private readonly bridge: BridgeServer,
    private readonly log: Logger,
    private readonly o = HEALTH,
  ) {
    this.#offConnect = bridge.onConnect((c) => this.#probe(c));
    this.#timer = setInterval(() => {
      for (const c of bridge.connections) this.#probe(c);
    }, o.probeIntervalMs);
    this.#timer.unref();
  }

  /** When some host last answered (Date.now() clock; 0 = never). */
  get lastAnswerAt(): number {
    return this.#lastAnswerAt;
  }

  snapshot(): HealthSnapshot {
    const conns = this.bridge.connections;
    return {
      responsive: conns.filter((c) => c.responsive).length,
      hosts: conns.length,
      lastProbeMs: this.#lastProbeMs,
      sinceAnswerMs: this.#lastAnswerAt ? Date.now() - this.#lastAnswerAt : null,
    };
  }

  #probe(conn: BridgeConnection): void {
    if (this.#closed || this.#pending.has(conn)) return;
    this.#pending.add(conn);
    const t0 = performance.now();
    const late = setTimeout(() => {
      this.bridge.setResponsive(conn, false);
      if (Date.now() <= this.#goneUntil) this.bridge.failPending(conn, "its window is gone");
    }, this.o.probeTimeoutMs);
    late.unref();
    const answered = () => {
      this.#lastProbeMs = Math.round(performance.now() - t0);
      this.#lastAnswerAt = Date.now();
      this.bridge.setResponsive(conn, true);
    };
    // No timeout of its own: an answer after the deadline still brings the host back.
    this.bridge
      .callOn(conn, "commands.list", { filter: PROBE_FILTER }, { timeoutMs: 0 })
      .then(answered, (err: unknown) => {
        // An error answer is still an answer; a departure ends the probe.
        if (toCcbError(err).code !== "BRIDGE_UNAVAILABLE") answered();
        else this.log.debug(`probe of extension host ${conn.seq}: ${(err as Error).message}`);
      })
      .finally(() => {
        clearTimeout(late);
        this.#pending.delete(conn);
      });
  }

  /** A window was reported gone (windowGone) within the last probe timeout and interval. */
  get windowRecentlyGone(): boolean {
    return Date.now() <= this.#goneUntil;
  }

  /**
   * A window is known to be gone (ccb's headless Chromium exited): probe every host now, and a host
   * that misses this probe (or one already under way) also gives up the calls waiting on it, which
   * could otherwise only wait out their timeouts (issue 35: a Chromium kill took 31 s to recover,
   * most of it an editor call waiting on the dead window's host).
   */
  windowGone(): void {
    this.#goneUntil = Date.now() + this.o.probeTimeoutMs + this.o.probeIntervalMs;
    for (const c of this.bridge.connections) {
      if (c.responsive) this.#probe(c);
      else this.bridge.failPending(c, "its window is gone");
    }
  }

  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#offConnect();
  }
}

export type HeadlessState = "off" | "starting" | "running" | "restarting" | "failed" | "parked";

/** Keeps ccb's headless client open: starts it, and replaces it when it dies, hangs, or its page serves nothing. */
export class HeadlessKeeper {
  #client: HeadlessClient | undefined;
  #state: HeadlessState = "starting";
  #error = "";
  #restarts = 0;
  #failures = 0;
  /** The DevTools request the page has not answered yet, and since when (Date.now()). */
  #cdp: { client: HeadlessClient; since: number; open: boolean } | undefined;
  #startedAt = 0;
  /** Extension hosts the runtime launched that have neither exited nor been followed by an answer: pid -> launched at. */
  readonly #hostsStarting = new Map<number, number>();
  #timer: NodeJS.Timeout | undefined;
  #watch: NodeJS.Timeout;
  #busy: Promise<void> = Promise.resolve();
  #opening = 0;
  #closed = false;

  constructor(
    private readonly o: {
      /** Launch a client on a fresh link (undefined while the runtime does not run). */
      open: () => Promise<HeadlessClient> | undefined;
      /** The runtime runs. */
      running: () => boolean;
      probe: BridgeProbe;
      log: Logger;
      /** Told when the state or error changes (the bridge's idle reason). */
      onChange: () => void;
      timing?: typeof HEALTH;
    },
  ) {
    const t = o.timing ?? HEALTH;
    this.#watch = setInterval(() => this.#check(t), t.probeIntervalMs);
    this.#watch.unref();
  }

  get state(): HeadlessState {
    return this.#state;
  }
  get error(): string {
    return this.#error;
  }
  /** How many times the client was replaced. */
  get restarts(): number {
    return this.#restarts;
  }
  client(): HeadlessClient | undefined {
    return this.#client;
  }

  /** The page made progress (it loaded, its extension host started): the no-answer grace counts from here. */
  progress(): void {
    if (this.#client) this.#startedAt = Math.max(this.#startedAt, Date.now());
  }

  /** The runtime launched an extension host (a page's, this client's or a person's): one is on its way. */
  hostLaunched(pid: number): void {
    this.#hostsStarting.set(pid, Date.now());
    this.progress();
  }

  /** An extension host process exited: it will not answer (the grace counts from the last progress). */
  hostExited(pid: number): void {
    this.#hostsStarting.delete(pid);
  }

  /** The runtime exited: every host it launched went with it (it logs no exit for them). */
  runtimeExited(): void {
    this.#hostsStarting.clear();
  }

  /** Reload the client's page now (the runtime restarted: its page cannot resume on the new server). */
  reloadNow(why: string): void {
    const c = this.#client;
    if (!c || this.#closed) return;
    this.o.log.info(`headless client: reloading its page: ${why}`);
    this.#startedAt = Date.now(); // a fresh grace for the reloaded page
    this.#cdp = undefined;
    c.reload().catch(() => this.#later(`its page did not reload (Chromium ${c.pid})`));
  }

  /** When the current client opened or its page last made progress (Date.now()). */
  get openedAt(): number {
    return this.#startedAt;
  }

  /**
   * Close the client while nothing needs it (park.ts): its page leaves the workbench first (so the
   * runtime ends its extension host), then its browser closes. It stays closed until unpark.
   */
  park(why: string): Promise<void> {
    this.#busy = this.#busy.then(async () => {
      const c = this.#client;
      if (this.#closed || !c) return;
      this.#client = undefined;
      if (this.#timer) clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#set("parked");
      this.o.log.info(`headless client: closing Chromium ${c.pid}: ${why}; the next editor call reopens it`);
      await c.leave().catch(() => undefined);
      await c.close().catch(() => undefined);
    });
    return this.#busy;
  }

  /** Open a client again after park (nothing happens unless parked). */
  unpark(why: string): Promise<void> {
    if (this.#state !== "parked") return this.#busy;
    this.o.log.info(`headless client: reopening: ${why}`);
    this.#failures = 0;
    this.#set("starting");
    return this.#replace(why);
  }

  /** Open the first client (once the runtime runs). */
  start(): Promise<void> {
    return this.#replace(undefined);
  }

  /** Close the current client and open another (serialised; `why` is logged). */
  #replace(why: string | undefined): Promise<void> {
    this.#opening++;
    this.#busy = this.#busy.then(() => this.#open(why)).finally(() => this.#opening--);
    return this.#busy;
  }

  async #open(why: string | undefined): Promise<void> {
    if (this.#closed) return;
    const old = this.#client;
    this.#client = undefined;
    if (old) {
      this.#restarts++;
      this.#set("restarting");
      this.o.log.warn(`headless client: replacing Chromium ${old.pid}: ${why}`);
      await old.close().catch(() => undefined);
    }
    const opening = this.o.open();
    if (!opening) return; // the runtime is down: the watch opens one once it runs
    try {
      const c = await opening;
      if (this.#closed) {
        await c.close();
        return;
      }
      this.#client = c;
      this.#startedAt = Date.now();
      this.#cdp = undefined;
      this.#error = "";
      this.#set("running");
      void c.exited.then(() => {
        if (this.#client !== c || this.#closed) return;
        this.o.probe.windowGone();
        this.#later(`Chromium ${c.pid} exited`);
      });
    } catch (err) {
      this.#error = toCcbError(err).toUserText().replace(/\n/g, " ");
      this.o.log.warn(`headless client: ${this.#error}`);
      this.#set("failed");
      this.#later("it could not start");
    }
  }

  /** Replace after a backoff that grows while nothing answers (1 s .. 30 s). */
  #later(why: string): void {
    if (this.#timer || this.#closed || this.#state === "parked") return;
    const t = this.o.timing ?? HEALTH;
    const delay = Math.min(t.backoffMinMs * 2 ** this.#failures, t.backoffMaxMs);
    this.#failures++;
    this.o.log.info(`headless client: ${why}; a new one in ${Math.round(delay / 1000)} s`);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#replace(why);
    }, delay);
  }

  #check(t: typeof HEALTH): void {
    if (this.#closed || this.#timer || this.#state === "parked" || !this.o.running()) return;
    const c = this.#client;
    if (!c) {
      if (this.#opening === 0) this.#later("none is open while the runtime runs");
      return;
    }
    const now = Date.now();
    const answer = this.o.probe.lastAnswerAt;
    if (answer > this.#startedAt) this.#failures = 0;
    // The page: DevTools must answer (a hung renderer does not). One request at a time, waited for
    // as long as it takes: a renderer starved of CPU answers late, and that answer keeps it. A page
    // is replaced when it has answered nothing for the whole grace (a failed request is asked again,
    // the clock still running).
    const asked = this.#cdp?.client === c ? this.#cdp : { client: c, since: now, open: false };
    this.#cdp = asked;
    if (!asked.open) {
      asked.open = true;
      c.evaluate("1").then(
        () => {
          if (this.#cdp === asked) this.#cdp = undefined;
        },
        () => {
          asked.open = false;
        },
      );
    }
    if (now - asked.since > t.headlessGraceMs) {
      this.#later(
        `its page answered no DevTools request for ${Math.round((now - asked.since) / 1000)} s (Chromium ${c.pid})`,
      );
      return;
    }
    // The editor: some host must have answered since this client opened, within the grace, unless
    // a host the runtime launched is still starting (alive, unanswered, for at most hostStartMs).
    for (const [pid, at] of this.#hostsStarting)
      if (answer > at || now - at > t.hostStartMs) this.#hostsStarting.delete(pid);
    const snap = this.o.probe.snapshot();
    if (
      snap.responsive === 0 &&
      this.#hostsStarting.size === 0 &&
      now - Math.max(this.#startedAt, answer) > t.headlessGraceMs
    )
      this.#later(`no extension host answered for ${Math.round(t.headlessGraceMs / 1000)} s`);
  }

  #set(s: HeadlessState): void {
    this.#state = s;
    this.o.onChange();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#watch);
    if (this.#timer) clearTimeout(this.#timer);
    await this.#busy.catch(() => undefined);
    await this.#client?.close().catch(() => undefined);
    this.#client = undefined;
  }
}
