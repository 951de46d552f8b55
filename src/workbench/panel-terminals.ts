import type { Core } from "../core/core.ts";
import { CcbError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { CheckpointMethod, ServerMethod } from "../editor-wire/contract.ts";
import type { BridgeConnection, BridgeServer } from "./bridge-server.ts";

/**
 * Terminals shared both ways between the core's PTYs and the workbench's terminal panel:
 * a terminal a tool creates is attached to the serving extension host; a "ccb shared terminal"
 * opened in the panel becomes a core PTY (origin "workbench") that tools can read and write.
 * Output is streamed to every connection the terminal is attached to.
 */
export class TerminalShare {
  readonly #attached = new Map<BridgeConnection, Set<string>>();
  readonly #offs: Array<() => void> = [];

  constructor(
    private readonly core: Core,
    private readonly bridge: BridgeServer,
    private readonly log: Logger,
  ) {
    this.#offs.push(
      core.terminals.local.onEvent((ev) => {
        if (ev.type === "created") void this.#attachToActive(ev.id);
        else if (ev.type === "data" && ev.data !== undefined)
          this.#forEachAttached(ev.id, (c) =>
            bridge.notify({ type: "terminalData", id: ev.id, data: ev.data as string }, c),
          );
        else if (ev.type === "exit") {
          const info = core.terminals.local.list().find((t) => t.id === ev.id);
          this.#forEachAttached(ev.id, (c) =>
            bridge.notify({ type: "terminalExit", id: ev.id, exitCode: info?.exitCode ?? null }, c),
          );
        }
      }),
      bridge.onActiveChange((active) => {
        for (const c of this.#attached.keys()) if (!bridge.connections.includes(c)) this.#attached.delete(c);
        if (!active) return;
        for (const t of core.terminals.local.list()) if (t.running) void this.#attach(active, t.id);
      }),
    );
  }

  #set(conn: BridgeConnection): Set<string> {
    let s = this.#attached.get(conn);
    if (!s) this.#attached.set(conn, (s = new Set()));
    return s;
  }

  #forEachAttached(id: string, fn: (c: BridgeConnection) => void): void {
    for (const [c, ids] of this.#attached) if (ids.has(id)) fn(c);
  }

  async #attachToActive(id: string): Promise<void> {
    const info = this.core.terminals.local.list().find((t) => t.id === id);
    if (!info || info.origin === "workbench") return; // the panel that asked for it is attached already
    const active = this.bridge.active;
    if (active) await this.#attach(active, id);
  }

  async #attach(conn: BridgeConnection, id: string): Promise<void> {
    const ids = this.#set(conn);
    if (ids.has(id)) return;
    ids.add(id); // from now on its output streams to this connection
    try {
      const r = await this.core.terminals.local.read(id, { scrollback: true });
      const info = r.info;
      await this.bridge.callOn(conn, "terminal.attach", {
        id,
        title: `${info.title} (${id})`,
        backlog: r.output,
        focus: false,
      });
    } catch (err) {
      ids.delete(id);
      this.log.debug(`terminal ${id}: not shown in the workbench: ${(err as Error).message}`);
    }
  }

  /** Requests from the extension (its terminal panel; the checkpoints view's go to checkpoints-view.ts). */
  async serve(
    method: Exclude<ServerMethod, CheckpointMethod>,
    params: unknown,
    conn: BridgeConnection,
  ): Promise<unknown> {
    const t = this.core.terminals.local;
    switch (method) {
      case "terminal.create": {
        const p = params as { cols: number; rows: number; title?: string; cwd?: string };
        const info = await t.create({
          cols: Math.max(2, Math.min(1000, p.cols)),
          rows: Math.max(1, Math.min(500, p.rows)),
          origin: "workbench",
          ...(p.title ? { title: p.title } : {}),
          ...(p.cwd ? { cwd: p.cwd } : {}),
        });
        this.#set(conn).add(info.id);
        return { id: info.id, title: info.title };
      }
      case "terminal.input": {
        const p = params as { id: string; data: string };
        t.write(p.id, p.data);
        return {};
      }
      case "terminal.resize": {
        const p = params as { id: string; cols: number; rows: number };
        t.resize(p.id, p.cols, p.rows);
        return {};
      }
      case "terminal.close": {
        const p = params as { id: string };
        const info = t.list().find((x) => x.id === p.id);
        if (info?.origin === "workbench" && info.running) await t.kill(p.id);
        this.#attached.get(conn)?.delete(p.id);
        return {};
      }
      case "workspace.resolve":
        throw new CcbError("INTERNAL", "workspace.resolve is answered by the bridge server");
      default: {
        const never: never = method;
        return never;
      }
    }
  }

  dispose(): void {
    for (const off of this.#offs) off();
    this.#attached.clear();
  }
}
