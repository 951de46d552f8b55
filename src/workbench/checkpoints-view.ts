import { type Checkpoint, type Checkpoints, checkpointsOf, describeCheckpoint } from "../core/checkpoints/index.ts";
import { watchRecords } from "../core/checkpoints/watch.ts";
import type { Core } from "../core/core.ts";
import { CcbError } from "../core/errors.ts";
import { type LiveClient, type LiveClients, liveClientsOf } from "../core/live-clients.ts";
import type { Logger } from "../core/log.ts";
import type {
  ChangeSet,
  ChangeSetFile,
  CheckpointMethod,
  PresenceEntry,
  ServerParamsOf,
  ServerResultOf,
} from "../editor-wire/contract.ts";
import type { BridgeConnection, BridgeServer } from "./bridge-server.ts";
import type { AttachedPeer } from "./share/protocol.ts";

/**
 * The ccb side of the person's "Agent changes" view (extension/src/checkpoints-view.ts): who
 * is at the workbench now and the workspace's recent change sets, each with its files before and
 * after, and the person's undo or restore of one. Every workbench tab's extension host asks here (a
 * shared workbench's tabs all reach the ccb process that runs it), and the answers come from the
 * workspace's one checkpoint store, which every ccb process of the workspace records into: a change
 * an attached front end's agent made is listed in every tab. An undo runs as the person's (front end
 * "person", client "workbench"), through the same `Checkpoints.undo` the agents' tool uses: confined,
 * refused with the conflicting hunks named when someone changed the same lines since, and itself a
 * checkpoint.
 *
 * Pushed, not polled: once a tab has asked, the store's refs are watched (core/checkpoints/watch.ts:
 * a record by any ccb process of the workspace moves one), and every tab is sent a
 * `checkpointsChanged` event when one moves, when who is attached changes (a front end, an MCP
 * session, an IDE client, an ACP session comes or goes) and when a tab comes or goes; each tab's
 * view then asks again.
 */

/** Who runs the workbench, the front ends attached to it and every client connected to them (share/owner.ts fills it in). */
export interface Presence {
  entries(): PresenceEntry[];
  /** Told when the entries may have changed. */
  onChange(listener: () => void): () => void;
}

/** What of a file is sent to the tab at most (the store records nothing larger by default). */
const MAX_SIDE_BYTES = 4 * 1024 * 1024;

/** Events within this long go to the tabs as one (a record moves a ref in two steps; a burst of records). */
const COALESCE_MS = 50;

export class CheckpointsView {
  #presence: Presence;
  #offPresence: () => void;
  readonly #offs: Array<() => void> = [];
  #watching: Promise<void> | undefined;
  #stopWatch: (() => void) | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(
    private readonly core: Core,
    private readonly bridge: BridgeServer,
    private readonly log: Logger,
  ) {
    this.#presence = ownPresence(liveClientsOf(core));
    this.#offPresence = this.#presence.onChange(() => this.changed());
    this.#offs.push(
      bridge.onConnect(() => this.changed()),
      bridge.onActiveChange(() => this.changed()),
    );
  }

  /** Who runs the workbench and who is attached to it (a shared workbench's owner sets this). */
  setPresence(presence: Presence): void {
    this.#offPresence();
    this.#presence = presence;
    this.#offPresence = presence.onChange(() => this.changed());
    this.changed();
  }

  /** Tell every tab to ask again (coalesced). */
  changed(): void {
    if (this.#closed || this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      for (const conn of this.bridge.connections) this.bridge.notify({ type: "checkpointsChanged" }, conn);
    }, COALESCE_MS);
    this.#timer.unref?.();
  }

  /** Watch the store from the first time a tab asks (a workbench nobody looks at watches nothing). */
  #watch(cps: Checkpoints): void {
    this.#watching ??= watchRecords(cps.store, () => this.changed()).then(
      (stop) => {
        if (this.#closed) stop();
        else this.#stopWatch = stop;
      },
      (err: unknown) => {
        this.log.warn(`the changes view is not told of new checkpoints: ${(err as Error).message}`);
      },
    );
  }

  /** Resolves once the store is watched (after the first overview a tab asked for). */
  async watched(): Promise<void> {
    await this.#watching;
  }

  close(): void {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#offPresence();
    for (const off of this.#offs) off();
    this.#stopWatch?.();
  }

  async serve(method: CheckpointMethod, params: unknown, conn: BridgeConnection): Promise<unknown> {
    switch (method) {
      case "checkpoints.overview":
        return this.overview(params as ServerParamsOf<"checkpoints.overview">, conn);
      case "checkpoints.files":
        return this.files(params as ServerParamsOf<"checkpoints.files">);
      case "checkpoints.undo":
        return this.undo(params as ServerParamsOf<"checkpoints.undo">);
      default: {
        const never: never = method;
        return never;
      }
    }
  }

  #store(): Checkpoints {
    const c = checkpointsOf(this.core);
    if (!c)
      throw new CcbError("UNSUPPORTED", "Checkpoints are off in this ccb (CCB_CHECKPOINTS=off).", {
        hint: "Start ccb without CCB_CHECKPOINTS=off to record changes.",
      });
    return c;
  }

  private async overview(
    p: ServerParamsOf<"checkpoints.overview">,
    conn: BridgeConnection,
  ): Promise<ServerResultOf<"checkpoints.overview">> {
    const tabs: PresenceEntry[] = this.bridge.connections.map((c, i) => ({
      kind: "tab",
      label: c === conn ? "this tab" : `workbench tab ${i + 1}`,
      detail: [
        c.role === "active" ? "serves the agents' editor calls" : "",
        c.responsive ? "" : "not answering",
        `since ${clock(c.connectedAt)}`,
      ]
        .filter(Boolean)
        .join(", "),
    }));
    const cps = this.#store();
    this.#watch(cps);
    const list = await cps.list({ limit: p.limit ?? 100 });
    return { attached: [...this.#presence.entries(), ...tabs], changes: list.map((c) => this.view(c)) };
  }

  private view(c: Checkpoint): ChangeSet {
    return {
      ...describeCheckpoint(c),
      files: c.files.map((f) => ({ path: `${c.root}/${f}`, rel: this.core.workspace.displayRel(c.root, f) })),
    };
  }

  private async files(p: ServerParamsOf<"checkpoints.files">): Promise<ServerResultOf<"checkpoints.files">> {
    const cps = this.#store();
    await cps.flush();
    const { checkpoint, repo, parent } = await cps.store.get(p.id);
    const side = async (commit: string | undefined, path: string): Promise<string | null> => {
      if (!commit) return null;
      const r = await repo.git(["cat-file", "blob", `${commit}:${path}`], {
        allowFail: true,
        maxBytes: MAX_SIDE_BYTES,
      });
      return r.code === 0 ? r.stdout.toString("utf8") : null;
    };
    const view = this.view(checkpoint);
    const files: ChangeSetFile[] = [];
    for (const [i, f] of checkpoint.files.entries()) {
      const shown = view.files[i];
      if (!shown) continue;
      files.push({ ...shown, before: await side(parent, f), after: await side(checkpoint.id, f) });
    }
    return { changeSet: view, files };
  }

  private async undo(p: ServerParamsOf<"checkpoints.undo">): Promise<ServerResultOf<"checkpoints.undo">> {
    const cps = this.#store();
    const caller = { frontEnd: "person" as const, client: "workbench" };
    const r = p.mode === "restore" ? await cps.restore(p.id, caller) : await cps.undo({ id: p.id }, caller);
    const files = r.written.map((w) => this.core.workspace.displayRel(w.root, w.path));
    this.log.info(
      `the person ${p.mode === "restore" ? "restored" : "undid"} ${p.id.slice(0, 12)} (${files.length} file(s))`,
    );
    return { files, recorded: r.recorded.map((c) => c.id) };
  }
}

function clock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}

/** A client connected to a ccb process, as the person reads it. */
function clientEntry(c: LiveClient, via: string): PresenceEntry {
  return {
    kind: "client",
    label: `${c.client} (${c.frontEnd})`,
    detail: [`via ${via}`, c.session ? `session ${c.session}` : "", `since ${clock(c.since)}`]
      .filter(Boolean)
      .join(", "),
  };
}

/** An unshared workbench: this process runs it, and its own clients. */
function ownPresence(clients: LiveClients): Presence {
  return {
    entries: () => [
      { kind: "runs", label: `ccb (pid ${process.pid})`, detail: "runs this workbench" },
      ...clients.list().map((c) => clientEntry(c, `ccb (pid ${process.pid})`)),
    ],
    onChange: (l) => clients.onChange(l),
  };
}

/**
 * Who is at a shared workbench: the ccb process that runs it (a front end, or the detached host)
 * with its own clients, and each front end attached to it with the clients it said it has.
 */
export function sharePresence(
  owner: { kind: string; pid: number; since: number; startedBy?: string | undefined },
  attached: () => ReadonlyArray<AttachedPeer>,
  own: LiveClients,
  onAttachedChange: (listener: () => void) => () => void,
): Presence {
  const ownerLabel =
    owner.kind === "host" ? `detached ccb host (pid ${owner.pid})` : `ccb ${owner.kind} (pid ${owner.pid})`;
  return {
    entries: () => [
      {
        kind: "runs",
        label: ownerLabel,
        detail: `runs this workbench since ${clock(owner.since)}${owner.startedBy ? `, started by ccb ${owner.startedBy}` : ""}`,
      },
      ...own.list().map((c) => clientEntry(c, ownerLabel)),
      ...attached().flatMap((a) => [
        {
          kind: "attached" as const,
          label: `ccb ${a.frontEnd} (pid ${a.pid})`,
          detail: `attached since ${clock(a.since)}`,
        },
        ...a.clients.map((c) => clientEntry({ ...c }, `ccb ${a.frontEnd} (pid ${a.pid})`)),
      ]),
    ],
    onChange(listener) {
      const offs = [own.onChange(listener), onAttachedChange(listener)];
      return () => {
        for (const off of offs) off();
      };
    },
  };
}
