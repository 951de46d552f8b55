import { realpathSync, statSync, type Stats } from "node:fs";
import { lstat, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { CcbError, toCcbError } from "./errors.ts";

/** A path that has been proven to lie inside one of the workspace roots. */
export interface ResolvedPath {
  /** Absolute path with symlinks of existing ancestors resolved. */
  readonly abs: string;
  /** The root it lies in (a real path). */
  readonly root: string;
  /** Path relative to that root, with `/` separators; "" for the root itself. */
  readonly rel: string;
  /** Whether the path exists (as resolved). */
  readonly exists: boolean;
}

export interface ResolveOptions {
  /** Refuse when the path does not exist (NOT_FOUND). */
  mustExist?: boolean;
  /**
   * Follow a symlink in the last component (default true). With false, the parent is resolved
   * and the last component is kept as it is, so delete/move act on a link itself, never on
   * what it points to (which may be outside the workspace).
   */
  followFinal?: boolean;
}

function isInside(child: string, parent: string): boolean {
  if (child === parent) return true;
  const withSep = parent.endsWith(sep) ? parent : parent + sep;
  return child.startsWith(withSep);
}

/** Display names of roots: their base names, made unique with a `~N` suffix. */
function rootNames(roots: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return roots.map((r) => {
    const base = basename(r) || "root";
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return n === 1 ? base : `${base}~${n}`;
  });
}

/**
 * The set of workspace roots and the one place where caller-supplied paths are confined.
 *
 * Every path of every tool (files, search, terminal cwd, git paths, bridge edits) goes through
 * `resolve`: a lexical check first, then the real path of the path or of its nearest existing
 * ancestor must lie inside a root, so `..`, absolute paths and symlinks cannot escape.
 *
 * With several roots, paths are displayed as `<root name>/<rel>` and relative inputs of that
 * form resolve back into the named root; other relative paths resolve against the primary root.
 */
export class Workspace {
  readonly roots: readonly string[];
  /** Display name of each root (same order as `roots`). */
  readonly names: readonly string[];

  constructor(roots: readonly string[]) {
    if (roots.length === 0) throw new CcbError("INVALID_ARGUMENT", "At least one workspace root is required.");
    const real: string[] = [];
    for (const r of roots) {
      const abs = resolve(r);
      let st;
      try {
        st = statSync(abs);
      } catch {
        throw new CcbError("NOT_FOUND", `Workspace root does not exist: ${abs}`, {
          hint: "Pass an existing directory with --workspace or CCB_WORKSPACE.",
        });
      }
      if (!st.isDirectory()) throw new CcbError("NOT_DIRECTORY", `Workspace root is not a directory: ${abs}`);
      const rp = realpathSync(abs);
      if (!real.includes(rp)) real.push(rp);
    }
    this.roots = real;
    this.names = rootNames(real);
  }

  /** The first root: relative paths resolve against it. */
  get primary(): string {
    return this.roots[0] as string;
  }

  /** Human/model friendly display of a resolved path (relative to its root, prefixed with the root name when there are several). */
  display(p: Pick<ResolvedPath, "root" | "rel">): string {
    return this.displayRel(p.root, p.rel);
  }

  /** Display of `rel` (`/` separators) inside `root`; resolves back to the same path via `resolve`. */
  displayRel(root: string, rel: string): string {
    if (this.roots.length === 1) return rel === "" ? "." : rel;
    const i = this.roots.indexOf(root);
    const name = i >= 0 ? (this.names[i] as string) : basename(root);
    return rel === "" ? name : `${name}/${rel}`;
  }

  /** The innermost root containing a real absolute path, if any. */
  rootOf(abs: string): string | undefined {
    let best: string | undefined;
    for (const r of this.roots) if (isInside(abs, r) && (!best || r.length > best.length)) best = r;
    return best;
  }

  /** True when `abs` is a root or an ancestor of one (deleting or moving it would remove a root). */
  containsRoot(abs: string): boolean {
    return this.roots.some((r) => isInside(r, abs));
  }

  /**
   * Resolve a caller-supplied path inside the workspace or throw PATH_OUTSIDE_WORKSPACE.
   * Relative paths resolve against the primary root (or the root they name, with several roots).
   */
  async resolve(input: string, options: ResolveOptions = {}): Promise<ResolvedPath> {
    const lexical = this.lexical(input);
    let real: string;
    let exists: boolean;
    try {
      if (options.followFinal === false && !this.roots.includes(lexical)) {
        const parent = await realOfNearest(dirname(lexical), input);
        real = join(parent.real, basename(lexical));
        exists = parent.exists && (await lstat(real).then(() => true, () => false));
      } else {
        ({ real, exists } = await realOfNearest(lexical, input));
      }
    } catch (err) {
      throw toCcbError(err, input);
    }
    const root = this.rootOf(real);
    if (!root) {
      throw new CcbError("PATH_OUTSIDE_WORKSPACE", `Path resolves outside the workspace: ${input}`, {
        hint: `Use a path inside ${this.roots.join(", ")}. Symlinks that point outside the workspace are not followed.`,
      });
    }
    if (options.mustExist && !exists) {
      throw new CcbError("NOT_FOUND", `No such file or directory: ${input}`, {
        hint: "Check the path; fs_list shows what exists.",
      });
    }
    const rel = relative(root, real).split(sep).join("/");
    return { abs: real, root, rel, exists };
  }

  /** The lexical step alone: NUL bytes refused, path made absolute and normalised, must lie in a root. */
  lexical(input: string): string {
    if (typeof input !== "string" || input.length === 0) {
      throw new CcbError("INVALID_PATH", "Path must be a non-empty string.", {
        hint: 'Pass a path relative to the workspace root (e.g. "src/index.ts") or "." for the root.',
      });
    }
    if (input.includes("\0")) {
      throw new CcbError("INVALID_PATH", "Path contains a NUL byte.", { hint: "Remove the NUL character from the path." });
    }
    const named = isAbsolute(input) ? undefined : this.namedRoot(input);
    const abs = isAbsolute(input) ? resolve(input) : named ? resolve(named.root, named.rest) : resolve(this.primary, input);
    const root = this.rootOf(abs) ?? this.lexicalRootMatch(abs);
    if (!root) {
      throw new CcbError("PATH_OUTSIDE_WORKSPACE", `Path is outside the workspace: ${input}`, {
        hint: `Use a path inside ${this.roots.join(", ")}.`,
      });
    }
    return abs;
  }

  /** With several roots, a relative path starting with a root's display name belongs to that root. */
  private namedRoot(input: string): { root: string; rest: string } | undefined {
    if (this.roots.length < 2) return undefined;
    const first = input.split(/[/\\]/, 1)[0] as string;
    const i = this.names.indexOf(first);
    const root = i >= 0 ? this.roots[i] : undefined;
    return root === undefined ? undefined : { root, rest: input.slice(first.length).replace(/^[/\\]+/, "") || "." };
  }

  /** Roots are real paths; a caller may name them through a symlinked alias (e.g. /tmp vs /private/tmp). */
  private lexicalRootMatch(abs: string): string | undefined {
    const { real } = realOfNearestSync(abs);
    return this.rootOf(real);
  }

  isRoot(p: ResolvedPath): boolean {
    return p.rel === "" || this.roots.includes(p.abs);
  }
}

/**
 * Refuse to read a regular file with more than one hard link: its other names may lie outside the
 * workspace, so it cannot be proven to be inside. Writes are safe (temp file + rename replaces
 * the directory entry, leaving the other links' inode untouched).
 */
export function assertSingleLink(st: Pick<Stats, "isFile" | "nlink">, display: string): void {
  if (st.isFile() && st.nlink > 1) {
    throw new CcbError("PATH_OUTSIDE_WORKSPACE", `Refusing to read ${display}: it has ${st.nlink} hard links, and the other names may be outside the workspace.`, {
      hint: "A hard-linked file cannot be proven to lie inside the workspace. Replace it with a copy (e.g. `cp --remove-destination` or fs_write of new content) to make it readable.",
      details: { nlink: st.nlink },
    });
  }
}

/** Real path of `p`, or of its nearest existing ancestor joined with the missing tail. */
async function realOfNearest(p: string, input: string): Promise<{ real: string; exists: boolean }> {
  const tail: string[] = [];
  let cur = p;
  for (;;) {
    try {
      const real = await realpath(cur);
      return { real: tail.length ? join(real, ...tail.reverse()) : real, exists: tail.length === 0 };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ELOOP") {
        throw new CcbError("INVALID_PATH", `Too many levels of symbolic links: ${input}`, {
          hint: "A symlink loop is in the path; remove or fix the symlink.",
        });
      }
      if (code === "ENOENT" || code === "ENOTDIR") {
        // A dangling symlink: refuse to let a later create follow it somewhere else.
        let st: Stats | undefined;
        try {
          st = await lstat(cur);
        } catch {
          st = undefined;
        }
        if (st?.isSymbolicLink()) {
          throw new CcbError("PATH_OUTSIDE_WORKSPACE", `Path goes through a dangling symlink: ${input}`, {
            hint: "The symlink's target does not exist, so it cannot be proven to stay inside the workspace. Remove or fix the symlink first.",
          });
        }
        const parent = dirname(cur);
        if (parent === cur) return { real: p, exists: false };
        tail.push(basename(cur));
        cur = parent;
        continue;
      }
      throw err;
    }
  }
}

function realOfNearestSync(p: string): { real: string } {
  const tail: string[] = [];
  let cur = p;
  for (;;) {
    try {
      const real = realpathSync(cur);
      return { real: tail.length ? join(real, ...tail.reverse()) : real };
    } catch {
      const parent = dirname(cur);
      if (parent === cur) return { real: p };
      tail.push(basename(cur));
      cur = parent;
    }
  }
}
