import type { Dirent } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { throwIfAborted } from "../errors.ts";
import { ancestorIgnores, checkIgnore, GlobRules, type IgnoreNode, loadIgnoreNode } from "./rules.ts";
import { type Dir, openDirBeneath } from "./safe/dir.ts";

export interface WalkOptions {
  include?: readonly string[];
  exclude?: readonly string[];
  /** Honour `.gitignore` files (default true). */
  respectGitignore?: boolean;
  /** Include entries whose name starts with `.` (default false). */
  includeHidden?: boolean;
  /** 1 = direct children only; undefined = unlimited. */
  maxDepth?: number;
  signal?: AbortSignal;
}

export type EntryKind = "file" | "directory" | "symlink" | "other";

export interface WalkEntry {
  /** Absolute path. */
  abs: string;
  /** Relative to the workspace root, `/` separators. */
  rel: string;
  name: string;
  /** 1 for direct children of the start directory. */
  depth: number;
  kind: EntryKind;
  /** Matched an include glob (as opposed to passing because there are none). */
  included: boolean;
}

function kindOf(d: Dirent): EntryKind | undefined {
  if (d.isSymbolicLink()) return "symlink";
  if (d.isDirectory()) return "directory";
  if (d.isFile()) return "file";
  if (d.isFIFO() || d.isSocket() || d.isBlockDevice() || d.isCharacterDevice()) return "other";
  return undefined;
}

async function kindByLstat(abs: string): Promise<EntryKind> {
  try {
    const st = await lstat(abs);
    if (st.isSymbolicLink()) return "symlink";
    if (st.isDirectory()) return "directory";
    if (st.isFile()) return "file";
  } catch {
    // vanished
  }
  return "other";
}

const READ_AHEAD = 16;

/**
 * Entries of directory `rel` of the root, read through a handle opened component by component
 * without following symlinks (files/safe/dir.ts): a directory swapped for a symlink is not listed.
 */
async function listDir(rootAbs: string, rel: string): Promise<Dirent[] | undefined> {
  let dir: Dir | undefined;
  try {
    dir = openDirBeneath(rootAbs, rel);
    return await readdir(dir.self, { withFileTypes: true });
  } catch {
    return undefined;
  } finally {
    dir?.close();
  }
}

/** readdir of `dirs`, at most `ahead` in flight beyond the one being consumed; `get(i)` in order. */
function prefetch(
  rootAbs: string,
  dirs: readonly string[],
  ahead: number,
): (i: number) => Promise<Dirent[] | undefined> {
  const started: Array<Promise<Dirent[] | undefined>> = [];
  const start = (i: number) => {
    if (i < dirs.length && started[i] === undefined) {
      started[i] = listDir(rootAbs, dirs[i] as string);
    }
  };
  return (i) => {
    for (let k = i; k <= i + ahead; k++) start(k);
    const p = started[i] as Promise<Dirent[] | undefined>;
    delete started[i];
    return p;
  };
}

interface Pending {
  rel: string;
  depth: number;
  ignores: IgnoreNode | undefined;
}

/**
 * Breadth-first walk of `startRel` (a directory relative to `rootAbs`) applying the shared
 * filter rules (see files/rules.ts). Symlinks are reported but never followed; excluded or ignored
 * directories are pruned. Breadth-first keeps shallow entries first when a caller stops early.
 */
export async function* walk(rootAbs: string, startRel: string, options: WalkOptions = {}): AsyncGenerator<WalkEntry> {
  const respectGitignore = options.respectGitignore ?? true;
  const includeHidden = options.includeHidden ?? false;
  const globs = new GlobRules(options.include, options.exclude);
  const maxDepth = options.maxDepth ?? Number.POSITIVE_INFINITY;
  const first: Pending = {
    rel: startRel,
    depth: 0,
    ignores: respectGitignore ? await ancestorIgnores(rootAbs, startRel) : undefined,
  };
  let level: Pending[] = [first];
  while (level.length > 0) {
    const next: Pending[] = [];
    // Read the level's directories ahead (a bounded number at a time), consume them in order.
    const listings = prefetch(
      rootAbs,
      level.map((d) => d.rel),
      READ_AHEAD,
    );
    for (let i = 0; i < level.length; i++) {
      const dir = level[i] as Pending;
      throwIfAborted(options.signal);
      const dirAbs = join(rootAbs, dir.rel);
      const dirents = await listings(i);
      if (!dirents) continue; // unreadable or vanished: skip, as ripgrep does
      const ignores =
        respectGitignore && dirents.some((d) => d.name === ".gitignore")
          ? await loadIgnoreNode(rootAbs, dir.rel, dir.ignores)
          : dir.ignores;
      dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const depth = dir.depth + 1;
      for (const d of dirents) {
        const rel = dir.rel === "" ? d.name : `${dir.rel}/${d.name}`;
        const abs = join(dirAbs, d.name);
        const kind = kindOf(d) ?? (await kindByLstat(abs));
        const isDir = kind === "directory";
        if (respectGitignore && isDir && d.name === ".git") continue;
        const g = globs.decide(rel, d.name, isDir);
        if (g === "exclude") continue;
        if (g !== "include") {
          const ig = respectGitignore ? checkIgnore(ignores, rel, isDir) : "none";
          if (ig === "ignored") continue;
          if (ig === "none" && !includeHidden && d.name.startsWith(".")) continue;
        }
        yield { abs, rel, name: d.name, depth, kind, included: g === "include" };
        if (isDir && depth < maxDepth) next.push({ rel, depth, ignores });
      }
    }
    level = next;
  }
}
