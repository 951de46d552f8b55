import type { Core } from "../core.ts";
import { CcbError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { type Attribution, type Caller, cleanValue } from "./attribution.ts";
import { type Checkpoint, type CheckpointFilter, type CheckpointOptions, CheckpointStore, newCallId } from "./store.ts";
import { type FileChange, planRestore, planUndo } from "./undo.ts";

export type { Caller } from "./attribution.ts";
export type { Checkpoint, CheckpointFilter } from "./store.ts";

/** A checkpoint's id, time and attribution as every listing shows them (the tools, the person's view). */
export function describeCheckpoint(c: Checkpoint) {
  return {
    id: c.id,
    time: c.time,
    frontEnd: c.frontEnd,
    client: c.client,
    ...(c.session ? { session: c.session } : {}),
    ...(c.identity ? { identity: c.identity } : {}),
    tool: c.tool,
    call: c.call,
    phase: c.phase,
    ...(c.undoOf ? { undoOf: c.undoOf } : {}),
  };
}

/**
 * The workspace's checkpoints as the tools use them: the recording around every tool call that can
 * change files (one hook in the kernel's `runTool`), and undo/restore written through the core's
 * file service (confined, atomic, each file only if it still holds what the plan was made from).
 */

const UNKNOWN: Caller = { frontEnd: "person", client: "unknown caller" };

export class Checkpoints {
  #queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly store: CheckpointStore,
    private readonly core: Pick<Core, "files" | "workspace">,
    private readonly log: Logger,
  ) {}

  /** Run `fn` after everything queued before it (records of this process stay in order). */
  private enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(fn, fn);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  /** Records queued by this process, done (a clean shutdown waits for them: `checkpointsOf`). */
  idle(): Promise<void> {
    return this.#queue.then(() => undefined);
  }

  /**
   * Run one tool call with its records: before it (changes since the last record, attributed to
   * whoever made them) and after it (its own changes). A failed record is logged, never fails the call.
   */
  async around<R>(
    def: {
      name: string;
      annotations: { readOnlyHint: boolean };
      /** Its effects go on after it returned (a command in a terminal, a task, a debug session, a diff the client writes). */
      lingers?: boolean;
      /** It records for itself (a restore). */
      recordsItself?: boolean;
      /**
       * The absolute paths it can change, when it changes nothing else (fs_write, fs_delete,
       * fs_move): only they are looked at before and after it, not the whole tree (store.ts, record).
       */
      paths?: readonly string[];
    },
    caller: Caller | undefined,
    run: () => Promise<R>,
  ): Promise<R> {
    if (def.annotations.readOnlyHint || def.recordsItself) {
      // A command's effects since its call are recorded by the next call, whichever it is.
      if (!def.recordsItself && (await this.store.pending()))
        void this.enqueue(() => this.store.record("flush", this.attribution(def.name, caller))).catch((e) =>
          this.failed(e),
        );
      return run();
    }
    const a = this.attribution(def.name, caller);
    const paths = def.lingers ? undefined : def.paths;
    await this.enqueue(() => this.store.record("start", a, paths ? { paths } : {})).catch((e) => this.failed(e));
    try {
      return await run();
    } finally {
      // Before the answer: a change made right after the call returns (by the person, another
      // agent) must not land in this call's record. A call that named its paths captures them
      // (read in Node, no git process) and its commit is queued: the next record of this process
      // waits for it, and any other process's commits it first (store.ts, capture). Otherwise the
      // record is taken here: a scan taken later could not tell the call's changes from anyone's.
      if (!paths || !(await this.capture(a))) {
        await this.enqueue(() =>
          this.store.record("end", a, { later: def.lingers === true, ...(paths ? { paths } : {}) }),
        ).catch((e) => this.failed(e));
      }
    }
  }

  /** Capture a named call's after-record now and queue its commit; false when it must be recorded at once. */
  private async capture(a: Attribution): Promise<boolean> {
    let captured: boolean;
    try {
      captured = await this.store.capture(a);
    } catch (e) {
      this.log.debug(`checkpoint capture: ${e instanceof Error ? e.message : String(e)}`);
      return false;
    }
    if (captured) void this.enqueue(() => this.store.settle()).catch((e) => this.failed(e));
    return captured;
  }

  private attribution(tool: string, caller: Caller | undefined): Attribution {
    const c = caller ?? UNKNOWN;
    return {
      frontEnd: c.frontEnd,
      client: cleanValue(c.client),
      ...(c.session ? { session: cleanValue(c.session) } : {}),
      ...(c.identity ? { identity: cleanValue(c.identity) } : {}),
      tool,
      call: newCallId(),
      phase: "after",
    };
  }

  private failed(e: unknown): void {
    this.log.warn(`checkpoint not recorded: ${e instanceof Error ? e.message : String(e)}`);
  }

  /** Everything up to now recorded (this process's queue and a running command's effects). */
  async flush(caller?: Caller): Promise<void> {
    await this.enqueue(() => this.store.record("flush", this.attribution("checkpoint", caller)));
  }

  async list(f: CheckpointFilter): Promise<Checkpoint[]> {
    await this.flush();
    return this.store.list(f);
  }

  /**
   * Take back the changes of the checkpoints that match (one id, one call, one session, one agent),
   * keeping every other change; refused, with the conflicting hunks named, when a change made since
   * touches the same lines. The undo is itself a checkpoint.
   */
  async undo(
    select: { id?: string; call?: string; session?: string; agent?: string },
    caller: Caller | undefined,
    signal?: AbortSignal,
  ): Promise<{ undone: Checkpoint[]; written: FileChange[]; recorded: Checkpoint[] }> {
    await this.flush(caller);
    let chosen: Checkpoint[];
    if (select.id) chosen = [(await this.store.get(select.id)).checkpoint];
    else {
      if (!select.call && !select.session && !select.agent)
        throw new CcbError("INVALID_ARGUMENT", "Say what to undo: id, call, session or agent.");
      const f: CheckpointFilter = { limit: 1000 };
      if (select.call) f.call = select.call;
      if (select.session) f.session = select.session;
      if (select.agent) f.agent = select.agent;
      chosen = (await this.store.list(f)).filter((c) => c.phase !== "before");
    }
    if (chosen.length === 0) throw new CcbError("NOT_FOUND", "No recorded change matches.");
    const items = [];
    for (const c of chosen) {
      const g = await this.store.get(c.id);
      if (g.parent) items.push({ checkpoint: g.checkpoint, repo: g.repo, parent: g.parent });
    }
    const plan = await planUndo(this.store.dir, items);
    if (plan.conflicts.length > 0) {
      throw new CcbError(
        "VERSION_CONFLICT",
        `Nothing was undone: ${plan.conflicts.map((c) => `${this.display(c.root, c.path)} ${c.reason}`).join("; ")}.`,
        {
          hint: "Undo a narrower change set (one call), or edit those lines by hand; checkpoint_diff shows each change.",
        },
      );
    }
    const recorded = await this.apply(
      plan.changes,
      caller,
      "undo",
      chosen.map((c) => c.id),
      signal,
    );
    return { undone: chosen, written: plan.changes, recorded };
  }

  /** Set every recorded file back to its state at checkpoint `id` (what changed since is recorded first, so this can be undone). */
  async restore(
    id: string,
    caller: Caller | undefined,
    signal?: AbortSignal,
  ): Promise<{ checkpoint: Checkpoint; written: FileChange[]; recorded: Checkpoint[] }> {
    await this.flush(caller);
    const { checkpoint, repo } = await this.store.get(id);
    const tip = await this.store.tipOf(repo);
    const changes = tip ? await planRestore(repo, checkpoint.id, tip) : [];
    const recorded = await this.apply(changes, caller, "restore", [checkpoint.id], signal);
    return { checkpoint, written: changes, recorded };
  }

  private async apply(
    changes: readonly FileChange[],
    caller: Caller | undefined,
    what: string,
    of: string[],
    signal?: AbortSignal,
  ): Promise<Checkpoint[]> {
    const a: Attribution = {
      ...this.attribution(`checkpoint_restore (${what})`, caller),
      phase: "restore",
      undoOf: of,
    };
    // It writes exactly these files: only they are looked at (a full scan ran in the flush before).
    const paths = changes.map((ch) => `${ch.root}/${ch.path}`);
    await this.enqueue(() => this.store.record("start", a, { paths }));
    let failure: unknown;
    try {
      for (const ch of changes) {
        const abs = `${ch.root}/${ch.path}`;
        if (ch.content === null) {
          await this.core.files.delete(abs, {
            ...(ch.expected ? { expectedVersion: ch.expected } : {}),
            ...sig(signal),
          });
        } else {
          await this.core.files.write(abs, ch.content, {
            createParents: true,
            ...(ch.expected ? { expectedVersion: ch.expected } : {}),
            ...sig(signal),
          });
        }
      }
    } catch (e) {
      failure = e;
    }
    // Recorded before the call returns (also what a failure half-way wrote): the restore's own checkpoint undoes it.
    const recorded = await this.enqueue(() => this.store.record("end", a, { paths }));
    if (failure !== undefined) throw failure;
    return recorded;
  }

  private display(root: string, path: string): string {
    return this.core.workspace.displayRel(root, path);
  }
}

function sig(signal: AbortSignal | undefined): { signal?: AbortSignal } {
  return signal ? { signal } : {};
}

const stores = new WeakMap<object, Checkpoints | null>();

/**
 * The checkpoints of a core's workspace (one per core, created on first use); none when
 * `CCB_CHECKPOINTS=off`.
 */
export function checkpointsOf(core: Core, options: CheckpointOptions = {}): Checkpoints | undefined {
  let c = stores.get(core);
  if (c === undefined) {
    c =
      process.env.CCB_CHECKPOINTS === "off"
        ? null
        : new Checkpoints(
            new CheckpointStore(core.workspace.roots, {
              log: core.log.child("checkpoints"),
              ...options,
              ...envLimits(),
            }),
            core,
            core.log.child("checkpoints"),
          );
    stores.set(core, c);
    // A clean shutdown commits the records still queued (a kill leaves them to the next record: store.ts, capture).
    const queued = c;
    if (queued) core.onDispose(() => queued.idle());
  }
  return c ?? undefined;
}

function envLimits(): CheckpointOptions {
  const n = Number(process.env.CCB_CHECKPOINT_MAX_FILE_BYTES);
  return Number.isInteger(n) && n > 0 ? { maxFileBytes: n } : {};
}
