import type { Logger } from "../../core/log.ts";
import { selectionChangedParams, selectionKey } from "./converters.ts";
import type { EditorSelection } from "./editor.ts";

/**
 * Notifications from the editor to connected clients.
 * - `selection_changed`: debounced (bursts collapse into the last one), de-duplicated, and never
 *   sent to a client before it is ready (`readyDelayMs` after its `notifications/initialized`:
 *   the CLI registers its handlers only after the handshake). A client that becomes ready gets the
 *   current selection.
 * - `at_mentioned`: queued until a client is ready, then delivered once.
 */

export interface NotifierOptions {
  debounceMs?: number;
  readyDelayMs?: number;
  /** Most queued at-mentions kept while no client is connected. */
  maxQueued?: number;
  log: Logger;
}

export interface AtMention {
  filePath: string;
  lineStart: number;
  lineEnd: number;
}

type Send = (method: string, params: Record<string, unknown>) => void;

interface Client {
  send: Send;
  ready: boolean;
  timer: NodeJS.Timeout | undefined;
  lastKey: string;
}

export class Notifier {
  readonly #debounceMs: number;
  readonly #readyDelayMs: number;
  readonly #maxQueued: number;
  readonly #log: Logger;
  readonly #clients = new Map<number, Client>();
  readonly #queue: AtMention[] = [];
  #pending: { value: EditorSelection | null } | undefined;
  #debounce: NodeJS.Timeout | undefined;
  #current: EditorSelection | null = null;
  #latest: EditorSelection | null = null;

  constructor(options: NotifierOptions) {
    this.#debounceMs = options.debounceMs ?? 100;
    this.#readyDelayMs = options.readyDelayMs ?? 500;
    this.#maxQueued = options.maxQueued ?? 50;
    this.#log = options.log;
  }

  /** The last selection the editor reported (null when none). */
  get current(): EditorSelection | null {
    return this.#current;
  }

  /** The last non-empty selection the editor reported, in any file. */
  get latest(): EditorSelection | null {
    return this.#latest;
  }

  get queuedMentions(): number {
    return this.#queue.length;
  }

  addClient(id: number, send: Send): void {
    this.#clients.set(id, { send, ready: false, timer: undefined, lastKey: "" });
  }

  /** The client finished its handshake; it becomes ready after the delay. */
  clientInitialized(id: number): void {
    const c = this.#clients.get(id);
    if (!c || c.ready || c.timer) return;
    c.timer = setTimeout(() => {
      c.timer = undefined;
      c.ready = true;
      this.#onReady(id, c);
    }, this.#readyDelayMs);
    c.timer.unref?.();
  }

  removeClient(id: number): void {
    const c = this.#clients.get(id);
    if (c?.timer) clearTimeout(c.timer);
    this.#clients.delete(id);
  }

  isReady(id: number): boolean {
    return this.#clients.get(id)?.ready === true;
  }

  /** A selection event from the editor (debounced). */
  selection(value: EditorSelection | null): void {
    this.#pending = { value };
    if (this.#debounce) clearTimeout(this.#debounce);
    this.#debounce = setTimeout(() => this.#flushSelection(), this.#debounceMs);
    this.#debounce.unref?.();
  }

  atMentioned(m: AtMention): void {
    const ready = [...this.#clients.values()].filter((c) => c.ready);
    if (ready.length === 0) {
      if (this.#queue.length >= this.#maxQueued) this.#queue.shift();
      this.#queue.push(m);
      this.#log.debug("at_mentioned queued until a client is ready");
      return;
    }
    for (const c of ready) this.#safeSend(c, "at_mentioned", { ...m });
  }

  dispose(): void {
    if (this.#debounce) clearTimeout(this.#debounce);
    for (const c of this.#clients.values()) if (c.timer) clearTimeout(c.timer);
    this.#clients.clear();
  }

  #flushSelection(): void {
    this.#debounce = undefined;
    const p = this.#pending;
    this.#pending = undefined;
    if (!p) return;
    this.#current = p.value;
    if (p.value && p.value.text.length > 0) this.#latest = p.value;
    if (!p.value) return;
    for (const c of this.#clients.values()) if (c.ready) this.#sendSelection(c, p.value);
  }

  #sendSelection(c: Client, s: EditorSelection): void {
    const key = selectionKey(s);
    if (key === c.lastKey) return;
    c.lastKey = key;
    this.#safeSend(c, "selection_changed", selectionChangedParams(s));
  }

  #onReady(id: number, c: Client): void {
    this.#log.debug(`client ${id} ready for notifications`);
    if (this.#current) this.#sendSelection(c, this.#current);
    while (this.#queue.length > 0) {
      const m = this.#queue.shift() as AtMention;
      for (const client of this.#clients.values()) if (client.ready) this.#safeSend(client, "at_mentioned", { ...m });
    }
  }

  #safeSend(c: Client, method: string, params: Record<string, unknown>): void {
    try {
      c.send(method, params);
    } catch (err) {
      this.#log.debug(`notification ${method} not sent: ${(err as Error).message}`);
    }
  }
}
