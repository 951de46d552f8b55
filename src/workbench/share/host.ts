import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type RawData, WebSocket, WebSocketServer } from "ws";
import type { Core } from "../../core/core.ts";
import type { EditorMethods } from "../../core/editor/bridge.ts";
import { CcbError, toCcbError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import { maskDeep } from "../../core/secret-vault.ts";
import { extensionMethods, isExtensionMethod, MAX_FRAME_BYTES } from "../../editor-wire/contract.ts";
import { type EdgePolicy, TOKEN_QUERY_KEYS } from "../../net/policy.ts";
import type { WorkbenchHandle } from "../index.ts";
import type { WorkbenchHttp } from "../routes.ts";
import { HANDSHAKE_MS, HostHandshake } from "./handshake.ts";
import { type AttachedPeer, ClientFrame, parse, type ServerFrame, type ShareStatus } from "./protocol.ts";
import { ATTACH_PATH } from "./record.ts";
import { isTerminalMethod, killCreated, serveTerminalCall } from "./terminals.ts";

/**
 * The attach channel's policy: no browser Origin, the gateway's Host allow-list, no token in the
 * query, and the bridge's frame cap. Its credential is in-band, as the bridge's is: the mutual
 * proof of handshake.ts, in which the secret never travels (a bearer token in the upgrade would
 * hand the secret to whoever listens on a dead owner's port).
 */
const ATTACH_POLICY: EdgePolicy = {
  name: "workbench-attach",
  origin: { kind: "none" },
  auth: [],
  inBand: "a mutual proof of the share secret, which never travels (handshake.ts)",
  refuseQueryKeys: TOKEN_QUERY_KEYS,
  maxFrameBytes: MAX_FRAME_BYTES,
};

interface Peer extends AttachedPeer {
  ws: WebSocket;
  calls: Map<number, AbortController>;
  /** Terminals this front end started on the owner (killed when it leaves). */
  terminals: Set<string>;
}

/**
 * The owner's side of sharing: attached front ends call the owner's editor bridge (core.bridge of
 * the owner, the BridgeServer, which confines every path) and its terminals, and get its events
 * and state.
 */
export class ShareHost {
  readonly #wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  readonly #peers = new Set<Peer>();
  readonly #offs: Array<() => void> = [];
  readonly #listeners = new Set<(count: number) => void>();
  readonly #attachedListeners = new Set<() => void>();
  #ready = false;
  #closed = false;

  constructor(
    private readonly o: {
      core: Core;
      log: Logger;
      http: WorkbenchHttp;
      secret: string;
      owner: ShareStatus["owner"];
      workbench: WorkbenchHandle;
    },
  ) {
    o.http.gateway.addUpgrade(ATTACH_PATH, (req, socket, head) => this.#upgrade(req, socket, head), ATTACH_POLICY);
    this.#offs.push(o.core.bridge.onChange(() => this.#broadcastState()));
    void o.workbench.ready.then(() => {
      this.#ready = true;
      this.#broadcastState();
    });
    // Events reach peers from whichever bridge serves: subscribe to the BridgeServer itself.
    this.#offs.push(o.workbench.bridge.onEvent((event) => this.#broadcast({ type: "event", event })));
  }

  get attached(): AttachedPeer[] {
    return [...this.#peers].map(({ frontEnd, pid, since, clients }) => ({
      frontEnd,
      pid,
      since,
      clients: clients.map((c) => ({ ...c })),
    }));
  }

  /** Told whenever who is attached changes: a front end came or left, or its clients changed. */
  onAttachedChange(listener: () => void): () => void {
    this.#attachedListeners.add(listener);
    return () => this.#attachedListeners.delete(listener);
  }

  /** Told the number of attached front ends whenever it changes. */
  onPeersChange(listener: (count: number) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  status(): ShareStatus {
    const wb = this.o.workbench.status();
    const b = this.o.core.bridge.status();
    return {
      owner: this.o.owner,
      attached: this.attached,
      runtime: wb.runtime,
      runtimePid: this.o.workbench.runtimePid() ?? null,
      state: wb.state,
      bridge: { connected: b.connected, reason: b.reason },
      health: { ...wb.health, headlessClient: wb.headlessClient },
    };
  }

  #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (this.#closed) {
      socket.destroy();
      return;
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) => this.#accept(ws));
  }

  #accept(ws: WebSocket): void {
    const log = this.o.log;
    let peer: Peer | undefined;
    let query = false;
    // hello, then prove: nothing is served before the front end proved it knows the secret (handshake.ts)
    let hello: Extract<ClientFrame, { type: "hello" }> | undefined;
    const handshake = new HostHandshake(this.o.secret, this.o.http.url);
    const timer = setTimeout(() => ws.close(4408, "handshake timeout"), HANDSHAKE_MS);
    const reply = (frame: ServerFrame) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(frame));
    };
    ws.on("error", (err) => log.debug(`attach socket: ${err.message}`));
    ws.on("message", (data: RawData, isBinary: boolean) => {
      const frame = isBinary ? undefined : parse(ClientFrame, data.toString());
      if (!frame) return ws.close(4400, "bad frame");
      if (!hello) {
        if (frame.type !== "hello") return ws.close(4400, "expected a hello frame");
        hello = frame;
        reply(handshake.challenge(frame.nonce));
        return;
      }
      if (!peer && !query) {
        if (frame.type !== "prove") return ws.close(4400, "expected a prove frame");
        if (!handshake.verify(frame.proof)) {
          log.warn(`share: a client (said pid ${hello.pid}) could not prove it knows the secret; refused`);
          return ws.close(4401, "not proven");
        }
        clearTimeout(timer);
        reply({ type: "welcome", clients: true });
        if (hello.purpose === "query") {
          query = true;
          return;
        }
        peer = {
          ws,
          frontEnd: hello.frontEnd,
          pid: hello.pid,
          since: Date.now(),
          clients: [],
          calls: new Map(),
          terminals: new Set(),
        };
        this.#peers.add(peer);
        log.info(`share: ${peer.frontEnd} (pid ${peer.pid}) attached`);
        this.#send(peer, this.#state());
        this.#emitPeers();
        return;
      }
      if (query) return this.#onQuery(ws, frame);
      if (peer) this.#onFrame(peer, frame);
    });
    ws.on("close", () => {
      clearTimeout(timer);
      if (!peer) return;
      for (const c of peer.calls.values()) c.abort();
      void killCreated(this.o.core.terminals.local, peer.terminals);
      this.#peers.delete(peer);
      log.info(`share: ${peer.frontEnd} (pid ${peer.pid}) left`);
      this.#emitPeers();
    });
  }

  /** A query connection (`ccb workbench status`, `ccb workbench link`): a link or the status, nothing else. */
  #onQuery(ws: WebSocket, frame: ClientFrame): void {
    let result: unknown;
    if (frame.type === "link") result = { url: this.#link(frame.page) ?? null };
    else if (frame.type === "status") result = this.status();
    else {
      ws.close(4400, "a query asks for a link or the status");
      return;
    }
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "response", id: frame.id, result }));
  }

  #link(page: "workbench" | "app" | undefined): string | undefined {
    return page === "app" ? this.o.workbench.link("/app") : this.o.workbench.url();
  }

  #onFrame(peer: Peer, frame: ClientFrame): void {
    switch (frame.type) {
      case "hello":
      case "prove":
        return;
      case "status":
        this.#send(peer, { type: "response", id: frame.id, result: this.status() });
        return;
      case "cancel":
        peer.calls.get(frame.id)?.abort();
        return;
      case "link": {
        this.#send(peer, { type: "response", id: frame.id, result: { url: this.#link(frame.page) ?? null } });
        return;
      }
      case "call":
        void this.#call(peer, frame.id, frame.method, frame.params, frame.timeoutMs);
        return;
      case "clients":
        peer.clients = frame.clients;
        this.#emitAttached();
        return;
    }
  }

  async #call(peer: Peer, id: number, method: string, params: unknown, timeoutMs: number | undefined): Promise<void> {
    const ac = new AbortController();
    peer.calls.set(id, ac);
    try {
      if (isTerminalMethod(method)) {
        const result = await serveTerminalCall(this.o.core.terminals.local, method, params, ac.signal, peer.terminals);
        // terminal output leaves this process: the owner's own secrets are masked in it, as in its own tools' results
        this.#send(peer, { type: "response", id, result: maskDeep(result) });
        return;
      }
      // Validated at this edge: only the contract's editor methods, with the contract's params.
      if (!isExtensionMethod(method)) throw new CcbError("INVALID_ARGUMENT", `Unknown editor method ${method}.`);
      const parsed = extensionMethods[method].params.safeParse(params);
      if (!parsed.success) throw new CcbError("INVALID_ARGUMENT", `Invalid params for ${method}.`);
      const bridge = this.o.core.bridge.require();
      const result = await bridge.call(method, parsed.data as EditorMethods[typeof method]["params"], {
        signal: ac.signal,
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      });
      this.#send(peer, { type: "response", id, result });
    } catch (err) {
      const e = toCcbError(err);
      this.#send(peer, {
        type: "response",
        id,
        error: { code: e.code, message: e.message, ...(e.hint ? { hint: e.hint } : {}) },
      });
    } finally {
      peer.calls.delete(id);
    }
  }

  #state(): ServerFrame {
    const b = this.o.core.bridge.status();
    const w = this.o.workbench.status();
    return {
      type: "state",
      connected: b.connected,
      reason: b.reason,
      ready: this.#ready,
      ...(w.runtime && w.state === "running" ? { runtime: w.runtime } : {}),
    };
  }

  #broadcastState(): void {
    this.#broadcast(this.#state());
  }

  #broadcast(frame: ServerFrame): void {
    for (const p of this.#peers) this.#send(p, frame);
  }

  #send(peer: Peer, frame: ServerFrame): void {
    if (peer.ws.readyState === WebSocket.OPEN) peer.ws.send(JSON.stringify(frame));
  }

  #emitPeers(): void {
    for (const l of this.#listeners) l(this.#peers.size);
    this.#emitAttached();
  }

  #emitAttached(): void {
    for (const l of this.#attachedListeners) l();
  }

  /** Close every attach connection (the owner is leaving: attached front ends take over). */
  async close(): Promise<void> {
    this.#closed = true;
    for (const off of this.#offs) off();
    for (const p of this.#peers) p.ws.close(4000, "the workbench owner is leaving");
    this.#peers.clear();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }
}
