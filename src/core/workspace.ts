import { realpathSync, statSync } from "node:fs";
import { lstat, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { CcbError } from "./errors.ts";

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
}

function isInside(child: string, parent: string): boolean {
  if (child === parent) return true;
  const withSep = parent.endsWith(sep) ? parent : parent + sep;
  return child.startsWith(withSep);
}

/**
 * The set of workspace roots and the one place where caller-supplied paths are confined.
 *
 * Every path of every tool (files, search, terminal cwd, git paths, bridge edits) goes through
 * `resolve`: a lexical check first, then the real path of the path or of its nearest existing
 * ancestor must lie inside a root, so `..`, absolute paths and symlinks cannot escape.
 */
export class Workspace {
  readonly roots: readonly string[];

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
  }

  /** The first root: relative paths resolve against it. */
  get primary(): string {
    return this.roots[0] as string;
  }

  /** Human/model friendly display of a resolved path (relative to its root, prefixed with the root name when there are several). */
  display(p: ResolvedPath): string {
    if (this.roots.length === 1) return p.rel === "" ? "." : p.rel;
    return p.rel === "" ? basename(p.root) : `${basename(p.root)}/${p.rel}`;
  }

  /**
   * Resolve a caller-supplied path inside the workspace or throw PATH_OUTSIDE_WORKSPACE.
   * Relative paths resolve against the primary root; other roots are named by absolute paths.
   */
  async resolve(input: string, options: ResolveOptions = {}): Promise<ResolvedPath> {
    const lexical = this.lexical(input);
    const { real, exists } = await realOfNearest(lexical);
    const root = this.roots.find((r) => isInside(real, r));
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
      throw new CcbError("INVALID_PATH", "Path must be a non-empty string.");
    }
    if (input.includes("\0")) {
      throw new CcbError("INVALID_PATH", "Path contains a NUL byte.");
    }
    const abs = isAbsolute(input) ? resolve(input) : resolve(this.primary, input);
    const root = this.roots.find((r) => isInside(abs, r)) ?? this.lexicalRootMatch(abs);
    if (!root) {
      throw new CcbError("PATH_OUTSIDE_WORKSPACE", `Path is outside the workspace: ${input}`, {
        hint: `Use a path inside ${this.roots.join(", ")}.`,
      });
    }
    return abs;
  }

  /** Roots are real paths; a caller may name them through a symlinked alias (e.g. /tmp vs /private/tmp). */
  private lexicalRootMatch(abs: string): string | undefined {
    const { real } = realOfNearestSync(abs);
    return this.roots.find((r) => isInside(real, r));
  }

  isRoot(p: ResolvedPath): boolean {
    return p.rel === "";
  }
}

/** Real path of `p`, or of its nearest existing ancestor joined with the missing tail. */
async function realOfNearest(p: string): Promise<{ real: string; exists: boolean }> {
  const tail: string[] = [];
  let cur = p;
  for (;;) {
    try {
      const real = await realpath(cur);
      return { real: tail.length ? join(real, ...tail.reverse()) : real, exists: tail.length === 0 };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") {
        // A dangling symlink: refuse to let a later create follow it somewhere else.
        try {
          const st = await lstat(cur);
          if (st.isSymbolicLink()) {
            throw new CcbError("PATH_OUTSIDE_WORKSPACE", `Path is a dangling symlink: ${p}`, {
              hint: "Remove or fix the symlink first.",
            });
          }
        } catch (inner) {
          if (inner instanceof CcbError) throw inner;
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
