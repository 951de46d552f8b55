import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type RawData, WebSocket, WebSocketServer } from "ws";
import type { Core } from "../core/core.ts";
import { type BridgeWriter, checkAnswer, type EditorBridge } from "../core/editor/bridge.ts";
import { confineDebugParams } from "../core/editor/debug-confine.ts";
import { CcbError, ccbErrorFromWire, toCcbError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import { registerSecret } from "../core/secret-vault.ts";
import { CCB_VERSION } from "../core/version.ts";
import {
  BRIDGE_PROTOCOL_VERSION,
  type BridgeEvent,
  CLOSE_BAD_FRAME,
  CLOSE_BAD_TOKEN,
  CLOSE_SHUTDOWN,
  CLOSE_TIMEOUT,
  ExtensionFrame,
  type ExtensionMethod,
  extensionMethods,
  HELLO_TIMEOUT_MS,
  HelloFrame,
  isExtensionMethod,
  isServerMethod,
  MAX_FRAME_BYTES,
  mapTaggedPaths,
  PING_INTERVAL_MS,
  parseFrame,
  type Role,
  type ServerFrame,
  type ServerMethod,
  SILENCE_TIMEOUT_MS,
  serverMethods,
} from "../editor-wire/contract.ts";
import { PendingCalls } from "../editor-wire/pending.ts";
import { newToken, tokensEqual } from "../util/secrets.ts";

export interface BridgeServerOptions {
  core: Core;
  /** The core's editor state, as its holder lets this server write it (Core.claimEditor). */
  editor: BridgeWriter;
  log: Logger;
  /** The bridge token (>= 128 random bits); generated when omitted. */
  token?: string;
  /** Override of the silence timeout (tests). */
  silenceTimeoutMs?: number;
  helloTimeoutMs?: number;
  /** Serves requests the extension sends to ccb (terminals); confinement is handled here. */
  serve?: (method: ServerMethod, params: unknown, conn: BridgeConnection) => Promise<unknown>;
  /** Why there is no bridge while no extension host is connected (e.g. runtime state). */
  idleReason?: () => string;
}

/**
 * Who brings an editor window back when none serves (the workbench: host-supply.ts). Without one,
 * a call that finds no serving host fails at once with the reason.
 */
export interface HostSupply {
  /** ccb's window is closing, closed or reopening on purpose (closed while idle): every call goes through `arrival` first. */
  readonly parked: boolean;
  /** A host is expected to serve soon although none does now: the core keeps this server as its bridge. */
  expected(): boolean;
  /** Bring one (reopen) and wait for it, bounded; a call that still finds no host then fails with the reason. */
  arrival(signal?: AbortSignal): Promise<void>;
}

/** One extension host's connection (one per open workbench tab). */
export class BridgeConnection {
  readonly seq: number;
  readonly clientId: string;
  readonly connectedAt = Date.now();
  /** Server-clock time of the last "focused" report; 0 = never focused. */
  focusAt = 0;
  /** focusAt came from the hello only (the extension host's state before it knew the window's). */
  focusFromHello = false;
  role: Role = "standby";
  /** The last health probe (a round trip through the extension host to its window) answered in time. */
  responsive = true;
  /** The editor calls sent to this host that wait for its answer. */
  readonly pending = new PendingCalls();
  constructor(
    readonly ws: WebSocket,
    seq: number,
    readonly hello: HelloFrame,
  ) {
    this.seq = seq;
    this.clientId = hello.clientId;
  }
  send(frame: ServerFrame): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(frame));
  }
}

/**
 * The `/bridge` WebSocket endpoint and ccb's EditorBridge. Extension hosts authenticate with a
 * hello frame. The serving role: the host whose window gained focus last serves — a person's tab
 * that opens in front reports focus in its hello and takes over at once; a hidden (background)
 * window has no focus and never takes the role; ccb's own headless client declares its page hidden
 * and unfocused (src/platform/chromium.ts), so it serves only while no window was ever focused.
 * With no focus ever reported the first connected serves. Losing focus never moves the role, and
 * only a focus gain or a departure does, so two windows cannot flap. It fills core.bridge while a host serves and clears it with a reason otherwise.
 * Every path that crosses it is confined to the workspace here, whatever the caller did before.
 */
export class BridgeServer implements EditorBridge {
  readonly token: string;
  /** Every answer is checked against the contract in callOn, as it comes off the extension's socket. */
  readonly checksAnswers = true;
  readonly #wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  readonly #conns = new Set<BridgeConnection>();
  readonly #listeners = new Set<(event: { type: string; [key: string]: unknown }) => void>();
  readonly #roleListeners = new Set<(active: BridgeConnection | undefined) => void>();
  readonly #connectListeners = new Set<(conn: BridgeConnection) => void>();
  #active: BridgeConnection | undefined;
  #seq = 0;
  #closed = false;
  #o: BridgeServerOptions;
  #supply: HostSupply | undefined;
  #inFlight = 0;
  #lastCallAt = Date.now();

  constructor(options: BridgeServerOptions) {
    this.#o = { ...options };
    this.token = options.token ?? newToken();
    registerSecret(this.token);
  }

  /** Set who serves the extension's requests (terminals). */
  setServe(serve: NonNullable<BridgeServerOptions["serve"]>): void {
    this.#o.serve = serve;
  }

  /** Who brings a host back when none serves (undefined: nobody; a call without a host fails at once). */
  setSupply(supply: HostSupply | undefined): void {
    this.#supply = supply;
  }

  /** An agent is at work: the clock of idleness restarts, and a parked window starts reopening (unawaited). */
  touch(): void {
    this.#lastCallAt = Date.now();
    if (this.#supply?.parked) this.#supply.arrival().catch(() => undefined);
  }

  /** Editor calls under way, and when the last one started or ended (Date.now()): probes are not calls. */
  get calls(): { inFlight: number; lastAt: number } {
    return { inFlight: this.#inFlight, lastAt: this.#lastCallAt };
  }

  get active(): BridgeConnection | undefined {
    return this.#active;
  }
  get connections(): readonly BridgeConnection[] {
    return [...this.#conns];
  }

  /** Upgrade handler for the gateway's `/bridge` route. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (this.#closed) {
      socket.destroy();
      return;
    }
    // Browser pages have no business here: the extension host's WebSocket sends no Origin.
    const origin = req.headers.origin;
    if (origin && origin !== "null" && /^[a-z-]+:\/\//i.test(origin)) {
      socket.end("HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) => this.#accept(ws));
  }

  #accept(ws: WebSocket): void {
    const log = this.#o.log;
    let conn: BridgeConnection | undefined;
    const silenceMs = this.#o.silenceTimeoutMs ?? SILENCE_TIMEOUT_MS;
    let timer = setTimeout(() => ws.close(CLOSE_TIMEOUT, "hello timeout"), this.#o.helloTimeoutMs ?? HELLO_TIMEOUT_MS);
    const touch = () => {
      clearTimeout(timer);
      timer = setTimeout(() => ws.close(CLOSE_TIMEOUT, "silence timeout"), silenceMs);
    };
    ws.on("error", (err) => log.debug(`bridge socket: ${err.message}`));
    ws.on("message", (data: RawData, isBinary: boolean) => {
      const text = isBinary ? "" : data.toString();
      if (!conn) {
        const hello = parseFrame(HelloFrame, text);
        if (!hello) return ws.close(CLOSE_BAD_FRAME, "expected a hello frame");
        if (!tokenMatches(hello.token, this.token)) {
          log.warn("bridge: refused a connection with a wrong token");
          return ws.close(CLOSE_BAD_TOKEN, "bad token");
        }
        if (hello.protocol !== BRIDGE_PROTOCOL_VERSION)
          return ws.close(CLOSE_BAD_FRAME, `protocol ${BRIDGE_PROTOCOL_VERSION} required`);
        touch();
        conn = new BridgeConnection(ws, ++this.#seq, hello);
        if (hello.focused) {
          conn.focusAt = Date.now();
          conn.focusFromHello = true;
        }
        this.#conns.add(conn);
        log.info(`bridge: extension host ${conn.seq} connected (VS Code ${hello.vscodeVersion})`);
        conn.send({ type: "welcome", role: "standby", serverVersion: CCB_VERSION, pingIntervalMs: PING_INTERVAL_MS });
        this.#elect();
        for (const l of this.#connectListeners) l(conn);
        return;
      }
      touch();
      const frame = parseFrame(ExtensionFrame, text);
      if (!frame) return ws.close(CLOSE_BAD_FRAME, "bad frame");
      this.#onFrame(conn, frame);
    });
    ws.on("close", (code) => {
      clearTimeout(timer);
      if (!conn) return;
      log.info(`bridge: extension host ${conn.seq} left (${code})`);
      this.#conns.delete(conn);
      conn.pending.failAll(
        () =>
          new CcbError("BRIDGE_UNAVAILABLE", "The editor disconnected before answering.", {
            hint: "Retry once the workbench is back.",
          }),
      );
      this.#elect();
    });
  }

  #onFrame(conn: BridgeConnection, frame: ExtensionFrame): void {
    switch (frame.type) {
      case "ping":
        conn.send({ type: "pong" });
        return;
      case "focus":
        if (frame.focused) {
          conn.focusAt = Date.now();
          conn.focusFromHello = false;
          this.#elect();
        } else if (conn.focusFromHello) {
          // The hello's "focused" was the extension host's default, not the window's: never focused.
          conn.focusAt = 0;
          conn.focusFromHello = false;
          this.#elect();
        }
        return;
      case "event":
        this.#emit(frame.event);
        return;
      case "response":
        if (frame.error) conn.pending.reject(frame.id, ccbErrorFromWire(frame.error));
        else conn.pending.resolve(frame.id, frame.result);
        return;
      case "request":
        void this.#serveRequest(conn, frame.id, frame.method, frame.params);
        return;
      default: {
        frame satisfies never;
        return;
      }
    }
  }

  async #serveRequest(conn: BridgeConnection, id: number, method: string, params: unknown): Promise<void> {
    try {
      if (!isServerMethod(method)) throw new CcbError("INVALID_ARGUMENT", `Unknown method ${method}`);
      const parsed = serverMethods[method].params.safeParse(params);
      if (!parsed.success) throw new CcbError("INVALID_ARGUMENT", `Invalid params for ${method}`);
      let result: unknown;
      if (method === "workspace.resolve") {
        result = { path: (await this.#o.core.workspace.resolve((parsed.data as { path: string }).path)).abs };
      } else if (this.#o.serve) {
        result = await this.#o.serve(method, parsed.data, conn);
      } else {
        throw new CcbError("UNSUPPORTED", `${method} is not served here`);
      }
      conn.send({ type: "response", id, result });
    } catch (err) {
      const e = toCcbError(err);
      conn.send({
        type: "response",
        id,
        error: { code: e.code, message: e.message, ...(e.hint ? { hint: e.hint } : {}) },
      });
    }
  }

  /**
   * Mark a host as answering or not (src/workbench/health.ts probes each one): a host whose window
   * is gone (its tab closed or its browser killed; the runtime keeps the host for its reconnection
   * grace) or stuck stops serving until it answers again.
   */
  setResponsive(conn: BridgeConnection, responsive: boolean): void {
    if (conn.responsive === responsive || !this.#conns.has(conn)) return;
    conn.responsive = responsive;
    this.#o.log.info(`bridge: extension host ${conn.seq} ${responsive ? "answers again" : "stopped answering"}`);
    this.#elect();
  }

  /**
   * Reject the calls waiting on a host whose window is known to be gone (ccb's headless Chromium
   * exited and this host then missed its probe): its extension host lives on for the runtime's
   * reconnection grace but can no longer reach the editor, so they would only wait out their own
   * timeouts. The caller gets BRIDGE_UNAVAILABLE and retries on the host that serves next.
   */
  failPending(conn: BridgeConnection, why: string): void {
    if (conn.pending.size === 0) return;
    this.#o.log.info(`bridge: extension host ${conn.seq}: ${conn.pending.size} call(s) given up: ${why}`);
    conn.pending.failAll(
      () =>
        new CcbError("BRIDGE_UNAVAILABLE", `The editor went away before answering (${why}).`, {
          hint: "Retry: the workbench's other window or its replacement answers.",
        }),
    );
  }

  /** Subscribe to hosts connecting (the health probe starts at once). */
  onConnect(listener: (conn: BridgeConnection) => void): () => void {
    this.#connectListeners.add(listener);
    return () => this.#connectListeners.delete(listener);
  }

  /** Among the hosts that answer, the one focused last serves; with no focus ever reported, the first connected. Only a focus gain or a departure moves the role. */
  #elect(): void {
    let best: BridgeConnection | undefined;
    for (const c of this.#conns) {
      if (!c.responsive) continue;
      if (!best || c.focusAt > best.focusAt || (c.focusAt === best.focusAt && c.seq < best.seq)) best = c;
    }
    if (best === this.#active) return;
    const old = this.#active;
    this.#active = best;
    if (old && this.#conns.has(old)) {
      old.role = "standby";
      old.send({ type: "role", role: "standby" });
    }
    if (best) {
      best.role = "active";
      best.send({ type: "role", role: "active" });
      this.#o.log.info(`bridge: extension host ${best.seq} serves`);
      this.#o.editor.set(this);
    } else if (this.#supply?.expected() && !this.#closed) {
      this.#o.editor.set(this); // the next call wakes the window, or waits for the host that comes back
    } else if (!this.#closed) {
      this.#o.editor.clear(
        this.#o.idleReason?.() ??
          "No workbench tab is connected, so there is no extension host to serve editor requests.",
      );
    }
    for (const l of this.#roleListeners) l(best);
  }

  /** Subscribe to changes of the serving connection. */
  onActiveChange(listener: (active: BridgeConnection | undefined) => void): () => void {
    this.#roleListeners.add(listener);
    return () => this.#roleListeners.delete(listener);
  }

  /** Send an event frame to the serving extension host (terminal output). */
  notify(event: BridgeEvent, conn: BridgeConnection | undefined = this.#active): void {
    conn?.send({ type: "event", event });
  }

  onEvent(listener: (event: { type: string; [key: string]: unknown }) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(event: BridgeEvent): void {
    for (const l of this.#listeners) {
      try {
        l(event);
      } catch (err) {
        this.#o.log.debug(`bridge event listener: ${String(err)}`);
      }
    }
  }

  async call(
    method: string,
    params: unknown,
    options: { signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<unknown> {
    if (!isExtensionMethod(method)) throw new CcbError("INVALID_ARGUMENT", `Unknown editor method: ${method}`);
    const spec = extensionMethods[method];
    const checked = spec.params.safeParse(params);
    if (!checked.success)
      throw new CcbError(
        "INVALID_ARGUMENT",
        `Invalid parameters for ${method}: ${checked.error.issues[0]?.message ?? ""}`,
      );
    const confined = await this.#confine(method, checked.data as Record<string, unknown>);
    this.#inFlight++;
    this.#lastCallAt = Date.now();
    try {
      // parked: closing (the host still listed may be the closing page's), closed, or reopening
      const supply = this.#closed ? undefined : this.#supply;
      if (supply && (supply.parked || (!this.#active && supply.expected()))) await supply.arrival(options.signal);
      const conn = this.#active;
      if (!conn) {
        this.#o.core.bridge.require(); // throws BRIDGE_UNAVAILABLE with the reason
        throw new CcbError(
          "BRIDGE_UNAVAILABLE",
          `The live editor bridge is not connected: ${this.#o.idleReason?.() ?? ""}`,
        );
      }
      return await this.callOn(conn, method, confined, options);
    } finally {
      this.#inFlight--;
      this.#lastCallAt = Date.now();
    }
  }

  /** A call on one given extension host (params already checked and confined by the caller). */
  async callOn(
    c: BridgeConnection,
    method: ExtensionMethod,
    params: unknown,
    options: { signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<unknown> {
    const spec = extensionMethods[method];
    const timeoutMs = options.timeoutMs ?? spec.timeoutMs;
    const raw = await c.pending.call((id) => c.send({ type: "request", id, method, params }), {
      signal: options.signal,
      timeoutMs,
      abortError: () => new CcbError("ABORTED", `${method} was cancelled.`),
      timeoutError: () =>
        new CcbError("TIMEOUT", `The editor did not answer ${method} within ${Math.round(timeoutMs / 1000)} s.`, {
          hint: "The workbench may be busy; retry.",
        }),
    });
    return checkAnswer(method, raw);
  }

  /** Re-confine every path a call carries (defect 1 of the anchor: bridge writes escaping via symlinks). */
  async #confine(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const ws = this.#o.core.workspace;
    const out = { ...params };
    if (typeof params.path === "string") out.path = (await ws.resolve(params.path)).abs;
    if (typeof params.vsixPath === "string")
      out.vsixPath = (await ws.resolve(params.vsixPath, { mustExist: true })).abs;
    if (Array.isArray(params.files))
      out.files = await Promise.all(
        params.files.map(async (f: { path?: unknown }) =>
          typeof f?.path === "string" ? { ...f, path: (await ws.resolve(f.path)).abs } : f,
        ),
      );
    if (method.startsWith("debug.")) Object.assign(out, await confineDebugParams(ws, method, params));
    if (method === "commands.execute") {
      try {
        out.args = await mapTaggedPaths(params.args, async (p) => (await ws.resolve(p)).abs);
      } catch (err) {
        if (err instanceof TypeError) throw new CcbError("INVALID_ARGUMENT", err.message);
        throw err;
      }
    }
    return out;
  }

  /** Wait until some extension host serves (or the signal fires). */
  waitForActive(signal?: AbortSignal): Promise<BridgeConnection> {
    if (this.#active) return Promise.resolve(this.#active);
    return new Promise((resolve, reject) => {
      const off = this.onActiveChange((a) => {
        if (!a) return;
        off();
        signal?.removeEventListener("abort", onAbort);
        resolve(a);
      });
      const onAbort = () => {
        off();
        reject(new CcbError("ABORTED", "Stopped waiting for the editor bridge."));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  async close(reason = "The workbench stopped."): Promise<void> {
    this.#closed = true;
    for (const c of this.#conns) c.ws.close(CLOSE_SHUTDOWN, "ccb is shutting down");
    this.#conns.clear();
    this.#active = undefined;
    this.#o.editor.clear(reason);
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }
}

const tokenMatches = tokensEqual;
