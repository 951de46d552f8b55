import { randomBytes } from "node:crypto";
import { chmod, lstat, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { stateDir } from "../../util/paths.ts";
import { CcbError } from "../errors.ts";
import { acquireLockFile } from "../lock-file.ts";
import { type Logger, silentLogger } from "../log.ts";
import { type Attribution, formatMessage, OUTSIDE, parseMessage } from "./attribution.ts";
import { excludeLine, rootsKey, ShadowRepo } from "./shadow.ts";
import { entryKey, indexInfo, plainPath, type Staged, sha1Store, snapshot, stagePaths } from "./stage.ts";

/**
 * The checkpoint store of a workspace: one shadow git repository per root under
 * `$XDG_STATE_HOME/ccb/checkpoints/<key of the real roots>/` (0700), shared by every ccb process of
 * the workspace through one lock file. A checkpoint is a commit whose tree is the root's recorded
 * files and whose parent is the previous checkpoint, so its diff is exactly the change it records;
 * its message carries who made it (attribution.ts).
 *
 * Recorded: what `git add` of the root would add (the root's `.gitignore` files respected, symlinks
 * recorded as links, never followed), minus files over `maxFileBytes` and files with a NUL byte in
 * their first 8000 bytes (binary). Nested repositories are not descended into. Bounded: checkpoints
 * live in segments of `segmentSize` commits, each on its own ref (the first commit of a segment is
 * a parentless copy of the previous tip); past `maxSegments` the oldest segment's ref is dropped and
 * git's gc removes what only it held.
 */

export interface CheckpointOptions {
  /** Files larger than this are not recorded (default 1 MiB). */
  maxFileBytes?: number;
  /** Checkpoints per segment (default 200). */
  segmentSize?: number;
  /** Segments kept (default 5: at most about segmentSize × maxSegments checkpoints). */
  maxSegments?: number;
  /** The store's parent folder (default `$XDG_STATE_HOME/ccb/checkpoints`). */
  baseDir?: string;
  gitPath?: string;
  log?: Logger;
}

export interface Checkpoint extends Attribution {
  /** The commit (full hex). */
  id: string;
  /** The workspace root it belongs to. */
  root: string;
  time: string;
  /** Paths (relative to the root, `/`) it changed. */
  files: string[];
}

export interface CheckpointFilter {
  /** Client name (exact), or `frontEnd:client`. */
  agent?: string;
  session?: string;
  call?: string;
  tool?: string;
  /** Only checkpoints that changed this root-relative path (or something below it). */
  path?: { root: string; rel: string };
  since?: Date;
  until?: Date;
  limit?: number;
}

const SEG = /^refs\/ckpt\/(\d{6})$/;

/**
 * A call whose changes are not all recorded yet, and until when. A call that named its paths
 * (`paths`, per root) owns only those: a full scan meanwhile leaves them to its own `end`.
 */
interface Pending {
  a: Attribution;
  until: number;
  paths?: Record<string, string[]>;
  /**
   * The call has answered: its named paths as they were then (per root, `[rel, "<mode> <oid>" or
   * null]`, their blobs written), waiting for their commit (`capture`, `settle`). Whoever records
   * next, in any process, commits it first.
   */
  done?: Record<string, [string, string | null][]>;
  /** When it answered (its checkpoint's time). */
  doneAt?: number;
}

/** How long a call that named its paths may stay pending (a process that died mid-call frees its paths then). */
const NAMED_MS = 10 * 60_000;

/** How long the effects of a command that runs on (a terminal command, a task) are its own after its call ended. */
export const LATER_MS = 60_000;

interface RepoState {
  seg: number;
  count: number;
  /** Index entries staged (stage.ts) since the last `update-index --refresh`: they carry no stat data. */
  unstat?: number;
  /**
   * The segment's tip as the last record left it, when that record ran to its end (it is dropped
   * before a record changes the index and written back after its `update-ref`): the index then
   * holds exactly the tip's tree. Trusted only while the index file is still `index`.
   */
  tip?: { commit: string; tree: string };
  /** The index file as `known` describes it (`indexSig`). */
  index?: string;
  /** Index entries of paths recent calls named: "<mode> <oid>", null when it has none at or below the path. */
  known?: Record<string, string | null>;
}

/** Paths `known` holds at most (the newest stay). */
const KNOWN_MAX = 1000;

/**
 * A full scan refreshes the index's stat data once this many entries lack it: until then `ls-files
 * -m` compares those few by content, which costs less than a refresh that lstats and rewrites the
 * whole index (bench/checkpoints.bench.ts).
 */
const REFRESH_AFTER = 200;

export class CheckpointStore {
  readonly dir: string;
  readonly repos: readonly ShadowRepo[];
  readonly maxFileBytes: number;
  private readonly segmentSize: number;
  private readonly maxSegments: number;
  private readonly log: Logger;
  #ready: Promise<void> | undefined;

  constructor(
    readonly roots: readonly string[],
    o: CheckpointOptions = {},
  ) {
    const base = o.baseDir ?? join(stateDir(), "checkpoints");
    this.dir = join(base, rootsKey(roots));
    this.repos = roots.map((r, i) => new ShadowRepo(r, join(this.dir, `root-${i}.git`), o.gitPath));
    this.maxFileBytes = o.maxFileBytes ?? 1024 * 1024;
    this.segmentSize = o.segmentSize ?? 200;
    this.maxSegments = o.maxSegments ?? 5;
    this.log = o.log ?? silentLogger;
    this.baseDir = base;
  }

  private readonly baseDir: string;

  /** Create the store's folders (0700) and repositories once. */
  ready(): Promise<void> {
    this.#ready ??= (async () => {
      await mkdir(this.baseDir, { recursive: true, mode: 0o700 });
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      await chmod(this.dir, 0o700);
      const stateRoot = join(this.baseDir, "..");
      await this.locked(async () => {
        for (const repo of this.repos) {
          const ex = excludeLine(repo.root, stateRoot);
          await repo.init(ex ? [ex] : []);
        }
      });
    })();
    this.#ready.catch(() => {
      this.#ready = undefined;
    });
    return this.#ready;
  }

  /** Run `fn` holding the store's cross-process lock. */
  async locked<T>(fn: () => Promise<T>): Promise<T> {
    const release = await acquireLockFile(join(this.dir, "lock"), {
      staleMs: 30_000,
      heartbeatMs: 5_000,
      timeoutMs: 120_000,
      timeoutError: () =>
        new CcbError("TIMEOUT", "The checkpoint store stayed locked for two minutes.", {
          hint: "Another ccb process of this workspace is recording; retry.",
        }),
    });
    try {
      return await fn();
    } finally {
      await release();
    }
  }

  /**
   * Record the current state of the roots (one checkpoint per root that changed, none where
   * nothing did), attributed by what is running:
   * - `start`, before a call that changes files: what changed since the last record belongs to a
   *   call still running whose paths are not named (a command, a task: the newest one), else to
   *   nobody in ccb ("outside ccb"); then this call becomes pending, so another process recording
   *   meanwhile attributes its changes right.
   * - `end`, after it: what changed belongs to this call while it is pending (a `later` call, whose
   *   command runs on, stays pending for `LATER_MS`).
   * - `flush`: like start, without becoming pending (before listing, diffing or restoring).
   *
   * `paths` (absolute, inside the roots): the call changes only these (fs_write, fs_delete,
   * fs_move). Then start and end look at those paths alone (a `git ls-files` limited to them),
   * not at the whole tree: the cost no longer grows with the workspace. What anyone else changed
   * elsewhere meanwhile stays in the work tree, unrecorded, until the next full scan, which gives
   * it to the pending unnamed call or to "outside ccb" exactly as it would have been given had it
   * been scanned at once (no unnamed call can start without a full scan first, and a named call's
   * paths are left to its own end). A full scan is due for every call that does not name its
   * paths, for every flush (list, diff, undo, restore, and a read-only call while a command's
   * effects are pending), and when the store is new; a named start also scans fully while an
   * unnamed call is pending, so that call's effects stay its own.
   */
  async record(
    kind: "start" | "end" | "flush",
    a: Attribution,
    o: { later?: boolean; paths?: readonly string[] } = {},
  ): Promise<Checkpoint[]> {
    await this.ready();
    return this.locked(async () => {
      const calls = await this.settleLocked();
      const mine = calls.find((c) => c.a.call === a.call);
      const others = calls.filter((c) => c !== mine);
      const unnamed = others.filter((c) => !c.paths);
      const lingering = unnamed[unnamed.length - 1];
      const someoneElse: Attribution = lingering
        ? { ...lingering.a, phase: "effects" }
        : { frontEnd: OUTSIDE.frontEnd, client: OUTSIDE.client, tool: a.tool, call: a.call, phase: "before" };
      // An end looks at what its start decided (a path found to be a symlink then is scanned for fully).
      const named =
        kind === "flush"
          ? undefined
          : kind === "end" && mine
            ? mine.paths && new Map(Object.entries(mine.paths))
            : this.scopeOf(o.paths);
      const who: Attribution = kind === "end" && (mine || named) ? a : someoneElse;
      // A named start while a command's effects are pending scans everything, so they stay its own.
      const only = named && !(kind === "start" && lingering) ? named : undefined;
      const out: Checkpoint[] = [];
      for (const repo of this.repos) {
        const rels = only ? only.get(repo.root) : undefined;
        if (only && !rels) continue;
        const exclude = others.flatMap((c) => c.paths?.[repo.root] ?? []);
        const c = await this.commitRoot(repo, who, { ...(rels ? { only: rels } : {}), exclude });
        if (c) out.push(c);
      }
      const rest = others;
      if (kind === "start") {
        const paths = named ? Object.fromEntries(named) : undefined;
        rest.push({ a, until: paths ? Date.now() + NAMED_MS : Number.MAX_SAFE_INTEGER, ...(paths ? { paths } : {}) });
      } else if (kind === "end" && mine && o.later) rest.push({ a, until: Date.now() + LATER_MS });
      if (kind !== "flush" || calls.length !== rest.length) await this.writePending(rest);
      return out;
    });
  }

  /**
   * The after-record of call `a`, which named its paths, taken on its answer path without a git
   * process: under the lock, its paths (those its start decided on) are read as they are now
   * through the same `O_NOFOLLOW` handles (stage.ts, `snapshot`), their blobs written, and their
   * entries kept in `pending.json` as the call's `done`; `settle` (queued by the caller) or any
   * record of any process commits them later, with the call's attribution and this time. What
   * anyone changes after this, on these paths or elsewhere, is not in the call's record. False
   * when it cannot be captured so (the call is not pending with named paths, a path is a
   * directory, a store that is not SHA-1): the caller records `end` then.
   */
  async capture(a: Attribution): Promise<boolean> {
    await this.ready();
    if (!this.repos.every((r) => sha1Store(r.gitDir))) return false;
    return this.locked(async () => {
      const calls = await this.readPending();
      const mine = calls.find((c) => c.a.call === a.call && !c.done);
      if (!mine?.paths) return false;
      const done: Record<string, [string, string | null][]> = {};
      for (const [root, rels] of Object.entries(mine.paths)) {
        const repo = this.repos.find((r) => r.root === root);
        if (!repo) return false;
        const entries: [string, string | null][] = [];
        for (const rel of new Set(rels)) {
          const s = snapshot(repo, rel, this.maxFileBytes);
          if (s === "dir") return false;
          entries.push([rel, entryKey(s)]);
        }
        done[root] = entries;
      }
      mine.done = done;
      mine.doneAt = Date.now();
      // Never dropped by age: it is a record already made, only its commit is to come.
      mine.until = Number.MAX_SAFE_INTEGER;
      await this.writePending(calls);
      return true;
    });
  }

  /** Commit every captured after-record (`capture`) not committed yet, by any process; the checkpoints made. */
  async settle(): Promise<Checkpoint[]> {
    if ((await lstat(join(this.dir, "pending.json")).catch(() => undefined)) === undefined) return [];
    await this.ready();
    const out: Checkpoint[] = [];
    await this.locked(() => this.settleLocked(out));
    return out;
  }

  /**
   * Holding the lock: commit the captured after-records in the order their calls answered (each
   * from its captured entries, not from the work tree), then the pending calls left. A record that
   * cannot be committed (git failed) is dropped with a warning: its changes go to the next scan.
   */
  private async settleLocked(out: Checkpoint[] = []): Promise<Pending[]> {
    const calls = await this.readPending();
    const done = calls.filter((c) => c.done).sort((x, y) => (x.doneAt ?? 0) - (y.doneAt ?? 0));
    if (done.length === 0) return calls;
    for (const [i, c] of done.entries()) {
      try {
        for (const [root, entries] of Object.entries(c.done ?? {})) {
          const repo = this.repos.find((r) => r.root === root);
          const captured = entries.map(([rel, e]) => parseEntry(rel, e));
          if (!repo || captured.some((s) => s === undefined)) continue;
          const made = await this.commitRoot(repo, c.a, {
            captured: captured as Staged[],
            time: new Date(c.doneAt ?? Date.now()),
            // The blobs of the records still to commit are in no index or commit yet: no gc now.
            keepLoose: i < done.length - 1,
          });
          if (made) out.push(made);
        }
      } catch (e) {
        this.log.warn(`checkpoint of call ${c.a.call} not committed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    const rest = calls.filter((c) => !c.done);
    await this.writePending(rest);
    return rest;
  }

  /** `paths` per root, relative (`/`); undefined when there are none or one is not strictly inside a root (scan it all then). */
  private scopeOf(paths: readonly string[] | undefined): Map<string, string[]> | undefined {
    if (!paths || paths.length === 0) return undefined;
    const m = new Map<string, string[]>();
    for (const p of paths) {
      const root = this.roots.find((r) => p.startsWith(r.endsWith(sep) ? r : `${r}${sep}`));
      if (!root) return undefined;
      const rel = relative(root, p).split(sep).join("/");
      if (rel === "" || rel.startsWith("..") || rel.split("/").some((x) => x === "" || x === "." || x === ".."))
        return undefined;
      // A write through a symlink into the workspace changes what it points at: scan it all then.
      if (!plainPath(root, rel, this.roots)) return undefined;
      m.set(root, [...(m.get(root) ?? []), rel]);
    }
    return m;
  }

  private async readPending(): Promise<Pending[]> {
    let raw: unknown;
    try {
      raw = JSON.parse(await readFile(join(this.dir, "pending.json"), "utf8"));
    } catch {
      return [];
    }
    // One call (the format before named paths) or a list.
    const list = (
      Array.isArray((raw as { calls?: unknown }).calls) ? (raw as { calls: unknown[] }).calls : [raw]
    ) as Pending[];
    const now = Date.now();
    return list.filter((p) => p && typeof p === "object" && p.a && typeof p.until === "number" && p.until > now);
  }

  private async writePending(calls: Pending[]): Promise<void> {
    const file = join(this.dir, "pending.json");
    if (calls.length > 0) await writeFile(file, JSON.stringify({ calls }), { mode: 0o600 });
    else await rm(file, { force: true });
  }

  /** Whether a call that does not name its paths (a command) may have effects not recorded yet: a read-only call flushes then. */
  async pending(): Promise<boolean> {
    if ((await lstat(join(this.dir, "pending.json")).catch(() => undefined)) === undefined) return false;
    return (await this.readPending()).some((c) => !c.paths);
  }

  /**
   * The paths of `repo` that differ from its index (under `only` when given, minus what lies under
   * `exclude`). With `refresh`, the index's stat data is refreshed first (entries staged by stage.ts
   * carry none), so that unchanged files are compared by lstat, not read again.
   */
  private async changedPaths(
    repo: ShadowRepo,
    only?: readonly string[],
    exclude: readonly string[] = [],
    refresh = false,
  ): Promise<string[]> {
    if (refresh) await repo.git(["update-index", "-q", "--refresh"], { allowFail: true });
    const r = await repo.git(
      ["ls-files", "-z", "-m", "-o", "-d", "--exclude-standard", ...(only ? ["--", ...only] : [])],
      {
        allowFail: only !== undefined,
      },
    );
    // A named path git will not look at (it lies beyond a symlink): scan the tree instead.
    if (r.code !== 0) return this.changedPaths(repo, undefined, exclude, refresh);
    const seen = new Set<string>();
    const out: string[] = [];
    for (const p of r.stdout.toString("utf8").split("\0")) {
      if (!p || p.endsWith("/") || seen.has(p)) continue; // a nested repository shows as `dir/`
      if (exclude.some((e) => p === e || p.startsWith(`${e}/`))) continue;
      seen.add(p);
      out.push(p);
    }
    return out;
  }

  /** Each repository's state file as this process last read or wrote it (every record reads it first, under the lock). */
  readonly #stateText = new Map<string, string>();

  private async readState(repo: ShadowRepo): Promise<RepoState> {
    try {
      const text = await readFile(join(repo.gitDir, "ccb-state.json"), "utf8");
      this.#stateText.set(repo.gitDir, text);
      const s = JSON.parse(text) as RepoState;
      if (Number.isInteger(s.seg) && Number.isInteger(s.count)) return s;
    } catch {
      // first use
    }
    this.#stateText.delete(repo.gitDir);
    return { seg: 1, count: 0 };
  }

  /** Write the state file, unless it holds this already (a record that found nothing to do). */
  private async writeState(repo: ShadowRepo, state: RepoState): Promise<void> {
    const text = JSON.stringify(state);
    if (this.#stateText.get(repo.gitDir) === text) return;
    await writeFile(join(repo.gitDir, "ccb-state.json"), text, { mode: 0o600 });
    this.#stateText.set(repo.gitDir, text);
  }

  private async tip(repo: ShadowRepo, seg: number): Promise<{ commit: string; tree: string } | undefined> {
    const ref = segRef(seg);
    const r = await repo.git(["rev-parse", `${ref}^{commit}`, `${ref}^{tree}`, "--"], { allowFail: true });
    const [commit, tree] = r.stdout.toString("utf8").trim().split("\n");
    return r.code === 0 && commit && tree ? { commit, tree } : undefined;
  }

  /**
   * Record `repo`'s changes as one commit. A call that named its paths, on an index that holds the
   * tip (`state.tip`), reads those paths here (stage.ts, `snapshot`) and compares them with their
   * index entries (`state.known`, valid while the index file is the one it describes; one `ls-files
   * -s` for a path not known yet): nothing changed costs no git process; a change costs
   * `update-index`, `write-tree`, `commit-tree` and `update-ref` (and an `ls-files -o` first for a
   * path new to the store, which is recorded only when git would add it). Anything else (a path
   * that is a directory, a full scan, a store whose last record did not finish) asks git what
   * changed (`ls-files -m -o -d`).
   */
  private async commitRoot(
    repo: ShadowRepo,
    a: Attribution,
    scope: {
      only?: readonly string[];
      exclude?: readonly string[];
      /** A captured after-record (`capture`): these entries, not the work tree. */
      captured?: readonly Staged[];
      /** The checkpoint's time (default now). */
      time?: Date;
      /** Start no gc (`prune`) in this record. */
      keepLoose?: boolean;
    },
  ): Promise<Checkpoint | undefined> {
    const state = await this.readState(repo);
    const sig = await indexSig(repo);
    // Both hold only while the index file is the one the last record left: every commit rewrites the
    // index, so a record by anyone else (an older ccb that keeps these fields as it found them) voids them.
    const fresh = sig !== undefined && state.index === sig;
    const known = new Map<string, string | null>(fresh ? Object.entries(state.known ?? {}) : []);
    const clean = fresh ? state.tip : undefined;
    let tip = clean ?? (await this.tip(repo, state.seg));
    // The store's first commit holds the workspace as it was found (all of it): a hidden base, nobody's change.
    const only = tip ? scope.only : undefined;
    const named = scope.captured
      ? await this.lookCaptured(repo, scope.captured, known)
      : only && clean
        ? await this.lookNamed(repo, only, scope.exclude ?? [], known)
        : "scan";
    let staged: Staged[];
    let files: string[] | undefined;
    if (named !== "scan") {
      // (A captured record on an index that may hold more than the tip goes on: write-tree tells.)
      if (named.changed.length === 0 && clean) return this.finish(repo, state, known, tip);
      if (!tip) a = { ...a, phase: "base", tool: "", call: "" };
      staged = named.changed;
      if (staged.length > 0) {
        state.tip = undefined;
        await this.writeState(repo, state);
        await repo.git(["update-index", "-z", "--index-info"], { input: indexInfo(staged) });
      }
      if (named.exact && clean) files = staged.map((e) => e.rel).sort();
    } else {
      const refresh = !only && (state.unstat ?? 0) >= REFRESH_AFTER;
      const changed = await this.changedPaths(repo, only, scope.exclude, refresh);
      if (refresh) state.unstat = 0;
      // Nothing changed, on an index known to hold the tip: nothing to write. (After a record that did
      // not finish, write-tree tells whether the index holds more than the tip.)
      if (changed.length === 0 && clean) return this.finish(repo, state, known, tip);
      if (!tip) a = { ...a, phase: "base", tool: "", call: "" };
      if (changed.length > 0 && state.tip) {
        state.tip = undefined;
        await this.writeState(repo, state);
      }
      staged = await stagePaths(repo, changed, this.maxFileBytes);
    }
    state.unstat = (state.unstat ?? 0) + staged.length;
    remember(known, staged);
    const tree = (await repo.git(["write-tree"])).stdout.toString("utf8").trim();
    if (tip && tree === tip.tree) return this.finish(repo, state, known, tip);
    if (tip && state.count >= this.segmentSize) {
      // A new segment: its first commit is a parentless copy of the tip, so older segments can go.
      state.seg += 1;
      state.count = 0;
      const base = await this.commitTree(repo, tip.tree, undefined, { ...a, phase: "base", tool: "", call: "" });
      await repo.git(["update-ref", segRef(state.seg), base, ""]);
      tip = { commit: base, tree: tip.tree };
      if (!scope.keepLoose) await this.prune(repo, state.seg);
    }
    const time = scope.time ?? new Date();
    const commit = await this.commitTree(repo, tree, tip?.commit, a, time);
    await repo.git(["update-ref", segRef(state.seg), commit, tip?.commit ?? ""]);
    state.count += 1;
    await this.finish(repo, state, known, { commit, tree });
    if (!tip) return undefined;
    files ??= await this.filesOf(repo, tip.commit, commit);
    return { ...a, id: commit, root: repo.root, time: time.toISOString(), files };
  }

  /** The record ran to its end: the index holds `tip`'s tree, and `known` is true of the index as it is now. */
  private async finish(
    repo: ShadowRepo,
    state: RepoState,
    known: Map<string, string | null>,
    tip: { commit: string; tree: string } | undefined,
  ): Promise<undefined> {
    if (tip) state.tip = tip;
    const sig = await indexSig(repo);
    if (sig !== undefined) state.index = sig;
    state.known = Object.fromEntries(known);
    await this.writeState(repo, state);
    return undefined;
  }

  /**
   * The named paths that differ from their index entries, as they are now (their blobs written);
   * "scan" when one of them is a directory (in the work tree or in the index): git compares then.
   * `exact`: the changes are all these paths change (no path is new to the index, which could
   * replace a file by a directory or back).
   */
  private async lookNamed(
    repo: ShadowRepo,
    only: readonly string[],
    exclude: readonly string[],
    known: Map<string, string | null>,
  ): Promise<{ changed: Staged[]; exact: boolean } | "scan"> {
    if (!sha1Store(repo.gitDir)) return "scan"; // blob ids are computed here as SHA-1
    const rels = [...new Set(only)].filter((p) => !exclude.some((e) => p === e || p.startsWith(`${e}/`)));
    const now: Staged[] = [];
    for (const rel of rels) {
      const s = snapshot(repo, rel, this.maxFileBytes);
      if (s === "dir") return "scan";
      now.push(s);
    }
    const unknown = rels.filter((r) => !known.has(r));
    if (unknown.length > 0) {
      const r = await repo.git(["ls-files", "-z", "-s", "--", ...unknown], { allowFail: true });
      if (r.code !== 0) return "scan";
      const found = new Map<string, string>();
      for (const rec of r.stdout.toString("utf8").split("\0")) {
        if (!rec) continue;
        const m = /^(\d{6}) ([0-9a-f]{40,64}) (\d)\t(.+)$/s.exec(rec);
        // Entries below a named path (it is a directory in the index) or a conflict: let git compare.
        if (m?.[3] !== "0" || !unknown.includes(m[4] as string)) return "scan";
        found.set(m[4] as string, `${m[1]} ${m[2]}`);
      }
      for (const u of unknown) setKnown(known, u, found.get(u) ?? null);
    }
    let changed = now.filter((s) => entryKey(s) !== known.get(s.rel));
    const added = changed.filter((s) => s.mode !== null && known.get(s.rel) === null);
    if (added.length > 0) {
      // A path new to the store is recorded when git would add it: not ignored.
      const listed = await addable(repo, added);
      if (!listed) return "scan";
      changed = changed.filter((s) => !added.includes(s) || listed.has(s.rel));
    }
    return { changed, exact: !changed.some((s) => added.includes(s)) };
  }

  /**
   * A captured after-record's entries that differ from the index (what `lookNamed` does with
   * entries read now). A path that is a directory in the index, and is a file or gone in the
   * capture, also loses the entries below it.
   */
  private async lookCaptured(
    repo: ShadowRepo,
    captured: readonly Staged[],
    known: Map<string, string | null>,
  ): Promise<{ changed: Staged[]; exact: boolean }> {
    const unknown = captured.map((s) => s.rel).filter((r) => !known.has(r));
    const below: Staged[] = [];
    if (unknown.length > 0) {
      let r = await repo.git(["ls-files", "-z", "-s", "--", ...unknown], { allowFail: true });
      // A path beyond what is a symlink in the work tree now: the whole index, filtered here.
      if (r.code !== 0) r = await repo.git(["ls-files", "-z", "-s"]);
      const want = new Set(unknown);
      const found = new Map<string, string>();
      for (const rec of r.stdout.toString("utf8").split("\0")) {
        const m = /^(\d{6}) ([0-9a-f]{40,64}) \d\t(.+)$/s.exec(rec);
        if (!m) continue;
        const path = m[3] as string;
        if (want.has(path)) found.set(path, `${m[1]} ${m[2]}`);
        else if (unknown.some((u) => path.startsWith(`${u}/`))) below.push({ rel: path, mode: null });
      }
      for (const u of unknown) setKnown(known, u, found.get(u) ?? null);
    }
    let changed = captured.filter((s) => entryKey(s) !== known.get(s.rel));
    const added = changed.filter((s) => s.mode !== null && known.get(s.rel) === null);
    if (added.length > 0) {
      // Recorded when git would add it (not ignored, not in a nested repository). One that is gone
      // from the work tree by now is not listed: its creation and its removal are both left out.
      const listed = (await addable(repo, added)) ?? new Set<string>();
      changed = changed.filter((s) => !added.includes(s) || listed.has(s.rel));
    }
    return { changed: [...below, ...changed], exact: below.length === 0 && !changed.some((s) => added.includes(s)) };
  }

  private async commitTree(
    repo: ShadowRepo,
    tree: string,
    parent: string | undefined,
    a: Attribution,
    time = new Date(),
  ): Promise<string> {
    const msg = join(repo.gitDir, "ccb-message");
    await writeFile(msg, formatMessage(a, time), { mode: 0o600 });
    const r = await repo.git(["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-F", msg]);
    return r.stdout.toString("utf8").trim();
  }

  /** Drop the segments older than the newest `maxSegments`, and what only they held. */
  private async prune(repo: ShadowRepo, current: number): Promise<void> {
    const refs = await this.segments(repo);
    const old = refs.filter((s) => s <= current - this.maxSegments);
    if (old.length === 0) return;
    for (const s of old) await repo.git(["update-ref", "-d", segRef(s)]);
    await repo.git(["reflog", "expire", "--expire=now", "--all"], { allowFail: true });
    await repo.git(["gc", "-q", "--prune=now"], { allowFail: true, timeoutMs: 600_000 });
    this.log.debug(`checkpoints: pruned ${old.length} old segment(s) of ${repo.gitDir}`);
  }

  private async segments(repo: ShadowRepo): Promise<number[]> {
    const r = await repo.git(["for-each-ref", "--format=%(refname)", "refs/ckpt/"]);
    return r.stdout
      .toString("utf8")
      .split("\n")
      .map((l) => SEG.exec(l)?.[1])
      .filter((s): s is string => s !== undefined)
      .map(Number)
      .sort((x, y) => x - y);
  }

  private async filesOf(repo: ShadowRepo, from: string, to: string): Promise<string[]> {
    const r = await repo.git(["diff-tree", "-r", "-z", "--no-renames", "--name-only", from, to]);
    return r.stdout.toString("utf8").split("\0").filter(Boolean);
  }

  /** The newest commit of `repo`'s store. */
  async tipOf(repo: ShadowRepo): Promise<string | undefined> {
    const segs = await this.segments(repo);
    const last = segs[segs.length - 1];
    return last === undefined ? undefined : (await this.tip(repo, last))?.commit;
  }

  /** Checkpoints, newest first, that match the filter. */
  async list(f: CheckpointFilter = {}): Promise<Checkpoint[]> {
    await this.ready();
    const all: Checkpoint[] = [];
    for (const repo of this.repos) {
      if (f.path && f.path.root !== repo.root) continue;
      const segs = await this.segments(repo);
      if (segs.length === 0) continue;
      const r = await repo.git([
        "log",
        "-z",
        "--no-renames",
        "--name-only",
        "--format=%x01%H%x02%P%x02%B%x03",
        ...segs.map(segRef),
        "--",
        ...(f.path && f.path.rel !== "" ? [f.path.rel] : []),
      ]);
      for (const c of parseLog(r.stdout.toString("utf8"), repo.root)) if (matches(c, f)) all.push(c);
    }
    all.sort((x, y) => (x.time < y.time ? 1 : x.time > y.time ? -1 : 0));
    return all.slice(0, f.limit ?? 100);
  }

  /** One checkpoint by id (a prefix of 7 or more hex digits). */
  async get(id: string): Promise<{ checkpoint: Checkpoint; repo: ShadowRepo; parent: string | undefined }> {
    if (!/^[0-9a-f]{7,40}$/.test(id)) {
      throw new CcbError("INVALID_ARGUMENT", `Not a checkpoint id: ${id.slice(0, 50)}`, {
        hint: "Use an id that checkpoint_list returned.",
      });
    }
    await this.ready();
    for (const repo of this.repos) {
      const r = await repo.git(["rev-parse", "-q", "--verify", `${id}^{commit}`], { allowFail: true });
      if (r.code !== 0) continue;
      const full = r.stdout.toString("utf8").trim();
      const log = await repo.git([
        "log",
        "-z",
        "-1",
        "--no-renames",
        "--name-only",
        "--format=%x01%H%x02%P%x02%B%x03",
        full,
      ]);
      const [c] = parseLog(log.stdout.toString("utf8"), repo.root);
      if (c && c.phase !== "base") return { checkpoint: c, repo, parent: c.parentId };
    }
    throw new CcbError("NOT_FOUND", `No checkpoint ${id} in this workspace's store.`, {
      hint: "Use an id that checkpoint_list returned; old checkpoints are pruned.",
    });
  }

  /** The diff a checkpoint records (against the one before it), capped at `maxBytes`. */
  async diff(id: string, maxBytes = 256 * 1024): Promise<{ checkpoint: Checkpoint; diff: string; truncated: boolean }> {
    const { checkpoint, repo, parent } = await this.get(id);
    const r = await repo.git(
      ["diff", "--no-ext-diff", "--no-textconv", "--no-renames", parent ?? EMPTY_TREE, checkpoint.id],
      { maxBytes },
    );
    const diff = r.stdout.toString("utf8");
    return { checkpoint, diff, truncated: Buffer.byteLength(diff) >= maxBytes };
  }
}

/** The index file's identity: any rewrite (git writes a new file and renames it) changes it. */
async function indexSig(repo: ShadowRepo): Promise<string | undefined> {
  const st = await lstat(join(repo.gitDir, "index"), { bigint: true }).catch(() => undefined);
  return st && `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

/** A captured entry ("<mode> <oid>" or null) as staged; undefined when it is not one. */
function parseEntry(rel: string, e: string | null): Staged | undefined {
  if (e === null) return { rel, mode: null };
  const m = /^(100644|100755|120000) ([0-9a-f]{40})$/.exec(e);
  return m ? { rel, mode: m[1] as "100644" | "100755" | "120000", oid: m[2] as string } : undefined;
}

function setKnown(known: Map<string, string | null>, rel: string, entry: string | null): void {
  known.delete(rel);
  known.set(rel, entry);
  if (known.size > KNOWN_MAX) known.delete(known.keys().next().value as string);
}

/** `known` after these entries were staged: theirs set, any below or above them dropped (a file can replace a directory). */
function remember(known: Map<string, string | null>, staged: readonly Staged[]): void {
  if (staged.length > 64) {
    known.clear();
    return;
  }
  for (const s of staged) {
    for (const k of known.keys()) if (k.startsWith(`${s.rel}/`) || s.rel.startsWith(`${k}/`)) known.delete(k);
    setKnown(known, s.rel, entryKey(s));
  }
}

/** git's empty tree: the parent of a store's first checkpoint. */
export const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

function segRef(seg: number): string {
  return `refs/ckpt/${String(seg).padStart(6, "0")}`;
}

type Parsed = Checkpoint & { parentId: string | undefined };

function parseLog(out: string, root: string): Parsed[] {
  const res: Parsed[] = [];
  for (const chunk of out.split("\x01")) {
    const end = chunk.indexOf("\x03");
    if (end < 0) continue;
    const [id, parents, body] = chunk.slice(0, end).split("\x02");
    if (!id) continue;
    const a = parseMessage(body ?? "");
    if (a.phase === "base") continue;
    const files = chunk
      .slice(end + 1)
      .split("\0")
      .map((s) => s.replace(/^\n/, ""))
      .filter(Boolean);
    res.push({ ...a, id, root, files, parentId: parents?.split(" ")[0] || undefined });
  }
  return res;
}

function matches(c: Checkpoint, f: CheckpointFilter): boolean {
  if (f.agent && f.agent !== c.client && f.agent !== `${c.frontEnd}:${c.client}`) return false;
  if (f.session && f.session !== c.session) return false;
  if (f.call && f.call !== c.call) return false;
  if (f.tool && f.tool !== c.tool) return false;
  if (f.since && new Date(c.time) < f.since) return false;
  if (f.until && new Date(c.time) > f.until) return false;
  return true;
}

/** A fresh id for one tool call. */
export function newCallId(): string {
  return randomBytes(6).toString("hex");
}

/** Which of `added` git would add (untracked, not ignored, not in a nested repository); undefined when git could not say. */
async function addable(repo: ShadowRepo, added: readonly Staged[]): Promise<Set<string> | undefined> {
  const r = await repo.git(["ls-files", "-z", "-o", "--exclude-standard", "--", ...added.map((s) => s.rel)], {
    allowFail: true,
  });
  return r.code === 0 ? new Set(r.stdout.toString("utf8").split("\0")) : undefined;
}
