import { realpathSync, type Stats, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve, sep } from "node:path";
import { CcbError, toCcbError } from "./errors.ts";
import { type Located, type LocateOptions, locate, type RootSet } from "./files/safe/locate.ts";

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
 * `locate` (or `resolve`, which locates and lets go of the handles): a lexical check first
 * (`..` and absolute paths), then a walk component by component from a handle on the root
 * (files/safe/locate.ts), so symlinks, and directories swapped for symlinks while the walk runs,
 * cannot lead outside. The file tools keep the handles `locate` returns and act through them.
 *
 * With several roots, paths are displayed as `<root name>/<rel>` and relative inputs of that
 * form resolve back into the named root; other relative paths resolve against the primary root.
 */
export class Workspace implements RootSet {
  readonly roots: readonly string[];
  readonly #ids = new Map<string, { dev: number; ino: number }>();
  /** Display name of each root (same order as `roots`). */
  readonly names: readonly string[];

  constructor(roots: readonly string[]) {
    if (roots.length === 0) throw new CcbError("INVALID_ARGUMENT", "At least one workspace root is required.");
    const real: string[] = [];
    for (const r of roots) {
      const abs = resolve(r);
      let st: Stats;
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
      this.#ids.set(rp, { dev: st.dev, ino: st.ino });
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
    const l = this.locate(input, { followFinal: options.followFinal });
    try {
      const exists = l.st !== undefined || l.self !== undefined;
      if (options.mustExist && !exists) {
        throw new CcbError("NOT_FOUND", `No such file or directory: ${input}`, {
          hint: "Check the path; {{list}} shows what exists.",
        });
      }
      return { abs: l.abs, root: l.root, rel: l.rel, exists };
    } finally {
      l.close();
    }
  }

  /**
   * Resolve a caller-supplied path to a verified directory handle and entry name (see
   * files/safe/locate.ts); PATH_OUTSIDE_WORKSPACE when it leads outside. The caller closes it.
   */
  locate(input: string, options: Omit<LocateOptions, "input"> = {}): Located {
    const lexical = this.lexical(input);
    let root = this.rootOf(lexical);
    let abs = lexical;
    if (!root) {
      // Named through an alias of a root (e.g. /tmp vs /private/tmp): map onto the real root.
      abs = realOfNearestSync(lexical).real;
      root = this.rootOf(abs);
      if (!root)
        throw new CcbError("PATH_OUTSIDE_WORKSPACE", `Path is outside the workspace: ${input}`, {
          hint: `Use a path inside ${this.roots.join(", ")}.`,
        });
    }
    try {
      return locate(this, root, abs, { ...options, input });
    } catch (err) {
      throw toCcbError(err, input);
    }
  }

  rootId(root: string): { dev: number; ino: number } | undefined {
    return this.#ids.get(root);
  }

  /** The lexical step alone: NUL bytes refused, path made absolute and normalised, must lie in a root. */
  lexical(input: string): string {
    if (typeof input !== "string" || input.length === 0) {
      throw new CcbError("INVALID_PATH", "Path must be a non-empty string.", {
        hint: 'Pass a path relative to the workspace root (e.g. "src/index.ts") or "." for the root.',
      });
    }
    if (input.includes("\0")) {
      throw new CcbError("INVALID_PATH", "Path contains a NUL byte.", {
        hint: "Remove the NUL character from the path.",
      });
    }
    const named = isAbsolute(input) ? undefined : this.namedRoot(input);
    const abs = isAbsolute(input)
      ? resolve(input)
      : named
        ? resolve(named.root, named.rest)
        : resolve(this.primary, input);
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
    throw new CcbError(
      "PATH_OUTSIDE_WORKSPACE",
      `Refusing to read ${display}: it has ${st.nlink} hard links, and the other names may be outside the workspace.`,
      {
        hint: "A hard-linked file cannot be proven to lie inside the workspace. Replace it with a copy (e.g. `cp --remove-destination` or {{write}} of new content) to make it readable.",
        details: { nlink: st.nlink },
      },
    );
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
