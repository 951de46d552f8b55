import { type Checkpoint, type Checkpoints, checkpointsOf, describeCheckpoint } from "../core/checkpoints/index.ts";
import type { Core } from "../core/core.ts";
import { CcbError } from "../core/errors.ts";
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

/**
 * The ccb side of the person's "Agent changes" view (bridge-extension/src/checkpoints-view.ts): who
 * is at the workbench now and the workspace's recent change sets, each with its files before and
 * after, and the person's undo or restore of one. Every workbench tab's extension host asks here (a
 * shared workbench's tabs all reach the ccb process that runs it), and the answers come from the
 * workspace's one checkpoint store, which every ccb process of the workspace records into: a change
 * an attached front end's agent made is listed in every tab. An undo runs as the person's (front end
 * "person", client "workbench"), through the same `Checkpoints.undo` the agents' tool uses: confined,
 * refused with the conflicting hunks named when someone changed the same lines since, and itself a
 * checkpoint.
 */

/** The ccb process that runs the workbench and the front ends attached to it (share/owner.ts fills it in). */
export type Presence = () => PresenceEntry[];

/** What of a file is sent to the tab at most (the store records nothing larger by default). */
const MAX_SIDE_BYTES = 4 * 1024 * 1024;

export class CheckpointsView {
  #presence: Presence = () => [{ kind: "runs", label: `ccb (pid ${process.pid})`, detail: "runs this workbench" }];

  constructor(
    private readonly core: Core,
    private readonly bridge: BridgeServer,
    private readonly log: Logger,
  ) {}

  /** Who runs the workbench and who is attached to it (a shared workbench's owner sets this). */
  setPresence(presence: Presence): void {
    this.#presence = presence;
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
    const list = await this.#store().list({ limit: p.limit ?? 100 });
    return { attached: [...this.#presence(), ...tabs], changes: list.map((c) => this.view(c)) };
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

/** Who is at a workbench: the ccb process that runs it (a front end, or the detached host) and the front ends attached to it. */
export function sharePresence(
  owner: { kind: string; pid: number; since: number; startedBy?: string | undefined },
  attached: () => ReadonlyArray<{ frontEnd: string; pid: number; since: number }>,
): Presence {
  return () => [
    {
      kind: "runs",
      label: owner.kind === "host" ? `detached ccb host (pid ${owner.pid})` : `ccb ${owner.kind} (pid ${owner.pid})`,
      detail: `runs this workbench since ${clock(owner.since)}${owner.startedBy ? `, started by ccb ${owner.startedBy}` : ""}`,
    },
    ...attached().map((a) => ({
      kind: "attached" as const,
      label: `ccb ${a.frontEnd} (pid ${a.pid})`,
      detail: `attached since ${clock(a.since)}`,
    })),
  ];
}
