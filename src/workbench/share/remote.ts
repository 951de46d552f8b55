import { WebSocket } from "ws";
import type { EditorWriter } from "../../core/core.ts";
import { checkAnswer, type EditorBridge, type EditorCallOptions } from "../../core/editor/bridge.ts";
import { CcbError, ccbErrorFromWire } from "../../core/errors.ts";
import type { LiveClients } from "../../core/live-clients.ts";
import type { Logger } from "../../core/log.ts";
import { registerSecret } from "../../core/secret-vault.ts";
import { extensionMethods, isExtensionMethod, MAX_FRAME_BYTES } from "../../editor-wire/contract.ts";
import { PendingCalls } from "../../editor-wire/pending.ts";
import { ClientHandshake, HANDSHAKE_MS } from "./handshake.ts";
import { type ClientFrame, type FrontEnd, parse, ServerFrame } from "./protocol.ts";
import { ATTACH_PATH, type ShareRecord } from "./record.ts";
import { RemoteTerminals } from "./terminals.ts";

/**
 * An attached front end's EditorBridge: every call and event goes over the attach channel to the
 * owner's BridgeServer. Through the writer its lease gave it (`editor`), it fills this process's
 * core.bridge while the owner's bridge serves and clears it, with the owner's reason, otherwise;
 * while the channel is up, this process's core.terminals are the owner's (RemoteTerminals).
 */
/** touch(): at most one call per this long, with a filter that matches no command (a few bytes back). */
const TOUCH_EVERY_MS = 10_000;
const TOUCH_FILTER = "\u0000ccb-touch";

export class RemoteBridge implements EditorBridge {
  /** Every answer is checked against this process's contract as it comes off the attach channel (the owner may run another ccb version). */
  readonly checksAnswers = true;
  readonly #listeners = new Set<(event: { type: string; [key: string]: unknown }) => void>();
  readonly #pending = new PendingCalls();
  #ws: WebSocket;
  #link: string | undefined;
  #connected = false;
  #touchedAt = 0;
  #runtime: string | undefined;
  #ready!: () => void;
  #first!: () => void;
  /** Resolves with the owner's first state frame (and, when the workbench runs, a first link). */
  readonly firstState = new Promise<void>((r) => (this.#first = r));
  /** Resolves once the owner's runtime answered (or could not start). */
  readonly ready = new Promise<void>((r) => (this.#ready = r));
  /** Resolves when the channel closes (the owner left or died, or release()). */
  readonly closed: Promise<void>;

  /** The mutual proof (handshake.ts): nothing counts, and nothing secret is said, before the owner proved itself. */
  #handshake: ClientHandshake;
  #welcomed = false;
  /** The owner's terminals, in this process's core.terminals while the channel is up. */
  #terminals: RemoteTerminals | undefined;
  #offClients: (() => void) | undefined;

  private constructor(
    ws: WebSocket,
    private readonly o: { editor: EditorWriter; log: Logger; owner: string; clients?: LiveClients | undefined },
    handshake: ClientHandshake,
  ) {
    this.#ws = ws;
    this.#handshake = handshake;
    this.closed = new Promise<void>((resolve) => {
      ws.on("close", () => {
        this.#pending.failAll(
          () =>
            new CcbError("BRIDGE_UNAVAILABLE", "The shared workbench went away before answering.", {
              hint: "Retry in a moment: another front end takes it over.",
            }),
        );
        if (this.#terminals) o.editor.releaseTerminals(this.#terminals);
        this.#offClients?.();
        this.#first();
        this.#ready();
        resolve();
      });
    });
    ws.on("message", (data, isBinary) => {
      const frame = isBinary ? undefined : parse(ServerFrame, data.toString());
      if (!frame) {
        o.log.debug("share: ignored a bad frame from the owner");
        return;
      }
      this.#onFrame(frame);
    });
  }

  /** Whether the channel is up (and the owner proved it holds the secret). */
  get open(): boolean {
    return this.#welcomed && this.#ws.readyState === WebSocket.OPEN;
  }

  /**
   * Connect to the owner of `record`; rejects when its gateway does not answer or refuses. Nothing
   * secret goes out before the listener proved it knows the record's secret (handshake.ts): a
   * listener that cannot, or says nothing within HANDSHAKE_MS, is dropped and `firstState` resolves
   * with the channel closed.
   */
  static connect(
    record: ShareRecord,
    o: {
      editor: EditorWriter;
      log: Logger;
      frontEnd: FrontEnd;
      timeoutMs?: number;
      /** This process's connected clients: the owner is told them now and on every change (the person's view names them). */
      clients?: LiveClients | undefined;
    },
  ): Promise<RemoteBridge> {
    registerSecret(record.secret);
    const url = `${record.gatewayUrl.replace(/^http/, "ws")}${ATTACH_PATH}`;
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, {
        maxPayload: MAX_FRAME_BYTES,
        handshakeTimeout: o.timeoutMs ?? 5000,
      });
      const fail = (err: Error) => {
        ws.removeAllListeners();
        ws.on("error", () => undefined);
        ws.terminate();
        reject(err);
      };
      ws.once("error", fail);
      ws.once("unexpected-response", (_req, res) => fail(new Error(`attach refused: HTTP ${res.statusCode}`)));
      ws.once("open", () => {
        ws.off("error", fail);
        ws.on("error", (err) => o.log.debug(`share socket: ${err.message}`));
        const owner =
          record.frontEnd === "host"
            ? `ccb's workbench host (pid ${record.pid}) runs it`
            : `another ccb front end (${record.frontEnd}, pid ${record.pid}) runs it`;
        const handshake = new ClientHandshake(record.secret, record.gatewayUrl, {
          frontEnd: o.frontEnd,
          pid: process.pid,
          purpose: "attach",
        });
        const rb = new RemoteBridge(ws, { ...o, owner }, handshake);
        const silent = setTimeout(() => {
          if (rb.#welcomed) return;
          o.log.warn("share: the workbench gateway did not complete the handshake in time; not attaching");
          ws.terminate();
        }, HANDSHAKE_MS);
        ws.once("close", () => clearTimeout(silent));
        rb.#send(handshake.hello());
        resolve(rb);
      });
    });
  }

  #onFrame(frame: ServerFrame): void {
    const editor = this.o.editor;
    // Nothing counts before the owner proved it holds the secret (not someone on a dead owner's port).
    if (!this.#welcomed) {
      const step = this.#handshake.step(frame);
      if (typeof step === "object") {
        this.#send(step.send);
        return;
      }
      if (step === "welcomed") {
        this.#welcomed = true;
        this.#terminals = new RemoteTerminals((method, params, timeoutMs, signal) =>
          this.#request((id) => ({ type: "call", id, method, params }), signal, timeoutMs),
        );
        editor.useTerminals(this.#terminals);
        const clients = this.o.clients;
        if (clients && frame.type === "welcome" && frame.clients) {
          const tell = () => this.#send({ type: "clients", clients: clients.list() });
          this.#offClients = clients.onChange(tell);
          tell();
        }
        return;
      }
      this.o.log.warn("share: the workbench gateway did not prove it knows the secret; not attaching");
      this.#ws.terminate();
      return;
    }
    switch (frame.type) {
      case "challenge":
      case "welcome":
        return;
      case "state": {
        this.#runtime = frame.runtime;
        const was = this.#connected;
        this.#connected = frame.connected;
        if (frame.runtime) {
          editor.setWorkbench({
            url: () => this.url() ?? "",
            runtime: frame.runtime,
            freshUrl: () => this.freshUrl(),
          });
        } else editor.setWorkbench(undefined);
        if (frame.connected) {
          if (!was) editor.set(this);
        } else editor.clear(`${frame.reason} (the workbench is shared: ${this.o.owner})`);
        if (frame.ready) this.#ready();
        if (frame.runtime && !this.#link) void this.refreshLink().then(this.#first);
        else this.#first();
        return;
      }
      case "event":
        for (const l of this.#listeners) {
          try {
            l(frame.event);
          } catch (err) {
            this.o.log.debug(`bridge event listener: ${String(err)}`);
          }
        }
        return;
      case "response":
        if (frame.error) this.#pending.reject(frame.id, ccbErrorFromWire(frame.error));
        else this.#pending.resolve(frame.id, frame.result);
        return;
    }
  }

  #send(frame: ClientFrame): boolean {
    if (this.#ws.readyState !== WebSocket.OPEN) return false;
    this.#ws.send(JSON.stringify(frame));
    return true;
  }

  /** A request to the owner with a fresh id: given up (and cancelled there) on abort or when the owner is silent. */
  #request(frame: (id: number) => ClientFrame, signal?: AbortSignal, timeoutMs?: number): Promise<unknown> {
    return this.#pending.call(
      (id) => {
        if (!this.#send(frame(id)))
          throw new CcbError("BRIDGE_UNAVAILABLE", "The shared workbench is not connected.", {
            hint: "Retry in a moment.",
          });
      },
      {
        signal,
        // The owner applies the method's own timeout; this one only guards a silent owner.
        timeoutMs: timeoutMs && timeoutMs > 0 ? timeoutMs + 5000 : 0,
        abortError: () => new CcbError("ABORTED", "The editor call was cancelled."),
        timeoutError: () =>
          new CcbError(
            "TIMEOUT",
            `The shared workbench did not answer within ${Math.round((timeoutMs ?? 0) / 1000)} s.`,
            {
              hint: "Retry.",
            },
          ),
        onGiveUp: (id) => this.#send({ type: "cancel", id }),
      },
    );
  }

  /**
   * An agent is at work: the owner's workbench should know (its idle clock, a parked headless client
   * reopening). Over the channel that is a call like any other, one that matches no command, sent at
   * most every TOUCH_EVERY_MS and not awaited.
   */
  touch(): void {
    const now = Date.now();
    if (!this.#connected || now - this.#touchedAt < TOUCH_EVERY_MS) return;
    this.#touchedAt = now;
    this.call("commands.list", { filter: TOUCH_FILTER }).catch(() => undefined);
  }

  async call(method: string, params: unknown, options: EditorCallOptions = {}): Promise<unknown> {
    if (!isExtensionMethod(method)) throw new CcbError("INVALID_ARGUMENT", `Unknown editor method: ${method}`);
    // 0 = no timeout (a diff waits for the person); the owner applies the same one.
    const timeoutMs = options.timeoutMs ?? extensionMethods[method].timeoutMs;
    const raw = await this.#request(
      (id) => ({
        type: "call",
        id,
        method,
        params,
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      }),
      options.signal,
      timeoutMs,
    );
    return checkAnswer(method, raw);
  }

  onEvent(listener: (event: { type: string; [key: string]: unknown }) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** A one-time browser link to the workbench (each is used once: a fresh one is fetched after). */
  url(): string | undefined {
    const link = this.#link;
    this.#link = undefined;
    if (this.#runtime) void this.refreshLink();
    return link;
  }

  /** A one-time link, fetched from the owner when none is held (calls in a burst each get their own). */
  async freshUrl(): Promise<string | undefined> {
    return this.url() ?? (await this.#askLink());
  }

  /** A one-time link to the workbench's `/app` page on the owner's gateway (for a person). */
  appLink(): Promise<string | undefined> {
    return this.#askLink("app");
  }

  async refreshLink(): Promise<void> {
    // undefined when the owner is gone: the takeover brings a new link
    const url = await this.#askLink();
    if (url) this.#link = url;
  }

  /** A fresh one-time link from the owner (undefined when it does not answer). */
  async #askLink(page?: "app"): Promise<string | undefined> {
    const r = (await this.#request((id) => ({ type: "link", id, ...(page ? { page } : {}) }), undefined, 5000).catch(
      () => undefined,
    )) as { url?: string | null } | undefined;
    return r?.url ?? undefined;
  }

  close(): Promise<void> {
    if (this.#connected) this.o.editor.clear("This front end left the shared workbench.");
    this.o.editor.setWorkbench(undefined);
    if (this.#ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    this.#ws.close(1000, "released");
    const t = setTimeout(() => this.#ws.terminate(), 2000);
    return this.closed.finally(() => clearTimeout(t));
  }
}
