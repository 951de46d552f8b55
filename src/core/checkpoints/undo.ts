import { createHash, randomBytes } from "node:crypto";
import { lstat, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CcbError } from "../errors.ts";
import type { ShadowRepo } from "./shadow.ts";
import type { Checkpoint } from "./store.ts";

/**
 * Taking changes back. Undo reverse-applies each chosen checkpoint's change, newest first, on the
 * files as they are now, with a 3-way merge per file (`git merge-file`: base = the file as the
 * checkpoint left it, ours = the file now, theirs = the file before the checkpoint), so changes
 * made since on other lines are kept. A change made since on the same lines is a conflict: the
 * whole undo is refused with each conflicting hunk named, and nothing is written. Restore sets
 * every recorded file to its state at a checkpoint.
 */

/** One file to write (content) or delete (null), if it still holds `expected` (its sha256, null: absent). */
export interface FileChange {
  root: string;
  path: string;
  content: Buffer | null;
  expected: string | null;
}

export interface Conflict {
  root: string;
  path: string;
  /** What stands in the way, with line numbers of the file as it is now. */
  reason: string;
}

interface Entry {
  /** The file before the checkpoint (theirs), its blob or null when absent. */
  before: string | null;
  /** The file as the checkpoint left it (base). */
  after: string | null;
}

const ZERO = /^0+$/;

/** What a checkpoint changed, path by path (blob ids; null: absent). */
async function entriesOf(repo: ShadowRepo, from: string, to: string): Promise<Map<string, Entry>> {
  const r = await repo.git(["diff-tree", "-r", "-z", "--no-renames", from, to]);
  const parts = r.stdout.toString("utf8").split("\0");
  const out = new Map<string, Entry>();
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const meta = parts[i]?.replace(/^:/, "").split(" ");
    const path = parts[i + 1];
    if (!meta || meta.length < 5 || !path) continue;
    const [oldMode, newMode, a, b] = meta as [string, string, string, string];
    if (oldMode === "160000" || newMode === "160000") continue; // a nested repository: not recorded
    out.set(path, { before: ZERO.test(a) ? null : a, after: ZERO.test(b) ? null : b });
  }
  return out;
}

async function blob(repo: ShadowRepo, id: string | null): Promise<Buffer | null> {
  if (id === null) return null;
  return (await repo.git(["cat-file", "blob", id])).stdout;
}

/** The file now: its bytes, null when absent; a link or folder in its place cannot be merged. */
async function current(root: string, path: string): Promise<Buffer | null | "not-a-file"> {
  const abs = join(root, path);
  const st = await lstat(abs).catch(() => undefined);
  if (!st) return null;
  if (!st.isFile()) return "not-a-file";
  return readFile(abs);
}

export function sha256(b: Buffer): string {
  return createHash("sha256").update(b).digest("hex");
}

/** Conflict hunks of `git merge-file -p` output, as line ranges of the current file. */
function conflictHunks(merged: string): string[] {
  const hunks: string[] = [];
  let line = 0; // lines of "ours" seen
  let state: "out" | "ours" | "theirs" = "out";
  let start = 0;
  for (const l of merged.split("\n")) {
    if (state === "out" && l.startsWith("<<<<<<< ")) {
      state = "ours";
      start = line + 1;
    } else if (state === "ours" && (l.startsWith("||||||| ") || l === "=======")) {
      state = "theirs";
      hunks.push(line >= start ? `lines ${start}-${line}` : `at line ${start}`);
    } else if (state === "theirs" && l.startsWith(">>>>>>> ")) {
      state = "out";
    } else if (state !== "theirs") {
      line += 1;
    }
  }
  return hunks;
}

async function merge3(
  repo: ShadowRepo,
  tmp: string,
  ours: Buffer,
  base: Buffer,
  theirs: Buffer,
): Promise<{ clean: true; content: Buffer } | { clean: false; hunks: string[] }> {
  const id = randomBytes(6).toString("hex");
  const files = ["now", "checkpoint", "before"].map((n) => join(tmp, `${id}-${n}`)) as [string, string, string];
  await Promise.all([writeFile(files[0], ours), writeFile(files[1], base), writeFile(files[2], theirs)]);
  try {
    const r = await repo.git(["merge-file", "-p", "-L", "now", "-L", "checkpoint", "-L", "before", ...files], {
      allowFail: true,
    });
    if (r.code === 0) return { clean: true, content: r.stdout };
    if (r.code > 0 && r.code < 128) return { clean: false, hunks: conflictHunks(r.stdout.toString("utf8")) };
    throw new CcbError("GIT_FAILED", `git merge-file failed: ${r.stderr.split("\n", 1)[0]}`);
  } finally {
    await Promise.all(files.map((f) => rm(f, { force: true })));
  }
}

/**
 * The changes that take back `checkpoints` (any order: applied newest first), or the conflicts
 * that keep it from being done safely.
 */
export async function planUndo(
  storeDir: string,
  items: readonly { checkpoint: Checkpoint; repo: ShadowRepo; parent: string }[],
): Promise<{ changes: FileChange[]; conflicts: Conflict[] }> {
  const tmp = join(storeDir, `tmp-${randomBytes(6).toString("hex")}`);
  await mkdir(tmp, { mode: 0o700 });
  try {
    const work = new Map<string, { root: string; path: string; now: Buffer | null; expected: string | null }>();
    const conflicts: Conflict[] = [];
    const sorted = [...items].sort((x, y) => (x.checkpoint.time < y.checkpoint.time ? 1 : -1));
    for (const { checkpoint, repo, parent } of sorted) {
      for (const [path, e] of await entriesOf(repo, parent, checkpoint.id)) {
        const key = `${repo.root}\0${path}`;
        let w = work.get(key);
        if (!w) {
          const cur = await current(repo.root, path);
          if (cur === "not-a-file") {
            conflicts.push({ root: repo.root, path, reason: "is no longer a regular file" });
            continue;
          }
          w = { root: repo.root, path, now: cur, expected: cur === null ? null : sha256(cur) };
          work.set(key, w);
        }
        const [before, after] = await Promise.all([blob(repo, e.before), blob(repo, e.after)]);
        const now = w.now;
        if (eq(now, after)) w.now = before;
        else if (eq(now, before)) continue;
        else if (after === null) conflicts.push({ root: repo.root, path, reason: "was created again since" });
        else if (before === null) conflicts.push({ root: repo.root, path, reason: "was changed since" });
        else if (now === null) conflicts.push({ root: repo.root, path, reason: "was deleted since" });
        else {
          const m = await merge3(repo, tmp, now, after, before);
          if (m.clean) w.now = m.content;
          else {
            conflicts.push({
              root: repo.root,
              path,
              reason: `was changed since on the same lines (${m.hunks.join(", ") || "conflicting hunks"})`,
            });
          }
        }
      }
    }
    const changes: FileChange[] = [];
    for (const w of work.values()) {
      const changed = w.now === null ? w.expected !== null : w.expected !== sha256(w.now);
      if (changed) changes.push({ root: w.root, path: w.path, content: w.now, expected: w.expected });
    }
    return { changes, conflicts };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** The changes that set every recorded file of `repo` to its state at `checkpoint`. */
export async function planRestore(repo: ShadowRepo, checkpoint: string, tip: string): Promise<FileChange[]> {
  const out: FileChange[] = [];
  for (const [path, e] of await entriesOf(repo, tip, checkpoint)) {
    const cur = await current(repo.root, path);
    if (cur === "not-a-file") continue;
    // A file the store does not hold now (over the limits, ignored) is never overwritten.
    if (e.before === null && cur !== null) continue;
    const target = await blob(repo, e.after);
    if (eq(cur, target)) continue;
    out.push({ root: repo.root, path, content: target, expected: cur === null ? null : sha256(cur) });
  }
  return out;
}

function eq(a: Buffer | null, b: Buffer | null): boolean {
  return a === null || b === null ? a === b : a.equals(b);
}
