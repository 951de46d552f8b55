import type { Core } from "./core.ts";

/**
 * The clients connected to this ccb process now: each MCP session of `ccb serve` (its
 * `clientInfo.name`), each IDE client of `ccb ide`, each ACP session of `ccb acp`. A front end adds
 * one when the client said who it is and removes it when it leaves; the person's "Agent changes"
 * view names them (src/workbench/checkpoints-view.ts), and an attached front end sends its own to
 * the process that runs the shared workbench (src/workbench/share/). Names come from peers: cut to
 * one short line of printable characters here.
 */

export interface LiveClient {
  /** "mcp" | "ide" | "acp" */
  frontEnd: string;
  /** The client's name (MCP clientInfo.name, the IDE client's, the ACP client's). */
  client: string;
  session?: string;
  /** When it connected (ms since the epoch). */
  since: number;
}

const MAX = 120;
/** At most this many are listed (a flood of sessions does not grow what goes to every tab). */
const MAX_CLIENTS = 200;
/** Clients known only by their requests kept at once (a flood of names evicts the oldest). */
const MAX_KEYED = 1000;

function clean(v: string): string {
  const line = v.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, " ").trim();
  return (line.length > MAX ? line.slice(0, MAX) : line) || "(unnamed)";
}

export class LiveClients {
  readonly #clients = new Set<LiveClient>();
  readonly #listeners = new Set<() => void>();
  readonly #keyed = new Map<string, { leave: () => void; timer?: NodeJS.Timeout }>();

  /** A client connected; the returned function removes it (idempotent). */
  add(c: { frontEnd: string; client: string; session?: string | undefined }): () => void {
    const entry: LiveClient = {
      frontEnd: clean(c.frontEnd),
      client: clean(c.client),
      ...(c.session ? { session: clean(c.session) } : {}),
      since: Date.now(),
    };
    this.#clients.add(entry);
    this.#emit();
    return () => {
      if (this.#clients.delete(entry)) this.#emit();
    };
  }

  /**
   * A client known by its requests rather than by a connection (an MCP 2026-07-28 client, which
   * sends no `initialize`): listed from its first request under `key`, and gone at `end(key)` or,
   * with `idleMs`, after that long without another request (a stateless HTTP client has no
   * connection whose end says it left). At most MAX_KEYED are kept: the oldest goes first.
   */
  seen(key: string, c: { frontEnd: string; client: string; session?: string | undefined }, idleMs?: number): void {
    let e = this.#keyed.get(key);
    if (!e) {
      if (this.#keyed.size >= MAX_KEYED) this.end(this.#keyed.keys().next().value as string);
      e = { leave: this.add(c) };
      this.#keyed.set(key, e);
    }
    if (idleMs !== undefined) {
      clearTimeout(e.timer);
      e.timer = setTimeout(() => this.end(key), idleMs);
      e.timer.unref();
    }
  }

  /** The client seen under `key` left (idempotent). */
  end(key: string): void {
    const e = this.#keyed.get(key);
    if (!e) return;
    clearTimeout(e.timer);
    this.#keyed.delete(key);
    e.leave();
  }

  list(): LiveClient[] {
    return [...this.#clients].slice(0, MAX_CLIENTS).map((c) => ({ ...c }));
  }

  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(): void {
    for (const l of this.#listeners) {
      try {
        l();
      } catch {
        // a listener's failure is its own
      }
    }
  }
}

const registries = new WeakMap<object, LiveClients>();

/** The live clients of a core's process (one registry per core, created on first use). */
export function liveClientsOf(core: Pick<Core, "workspace">): LiveClients {
  let r = registries.get(core);
  if (!r) registries.set(core, (r = new LiveClients()));
  return r;
}
