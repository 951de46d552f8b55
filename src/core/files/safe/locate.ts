import { readlinkSync, type Stats } from "node:fs";
import { relative, resolve as resolvePath, sep } from "node:path";
import { CcbError } from "../../errors.ts";
import { type Dir, lstatAt, mkdirAt, openDirAt, openDirPath } from "./dir.ts";
import { gitDirRefusal, isGitDir } from "./gitdir.ts";

/** What the resolver needs of the workspace: its roots and the identity each had at start. */
export interface RootSet {
  rootOf(abs: string): string | undefined;
  /** dev/ino of a root, recorded when the workspace was created. */
  rootId(root: string): { dev: number; ino: number } | undefined;
}

export interface LocateOptions {
  /** Follow a symlink in the last component (default true). */
  followFinal?: boolean;
  /** Create missing intermediate directories (relative to the verified handles). */
  createParents?: boolean;
  /** Refuse a `.git` component, and a directory on the way that is (or would become, with the entry) a git dir. */
  gitGuard?: boolean;
  /** Display of the input, for messages. */
  input: string;
}

/**
 * A path resolved inside a root. `parent` is an open, verified handle on the directory holding the
 * entry (undefined for a root itself, whose handle is `self`); the caller closes it with `close()`.
 * Every later operation addresses the entry as `parent.at(name)`, so no component can be swapped
 * between this check and that use.
 */
export interface Located {
  readonly root: string;
  /** Path relative to the root ("/" separators; "" for the root), symlinks resolved. */
  readonly rel: string;
  /** root + rel. */
  readonly abs: string;
  readonly parent: Dir | undefined;
  readonly name: string;
  /** Handle on the root when the path is the root itself. */
  readonly self: Dir | undefined;
  /** lstat of the entry (of the symlink's target when followed); undefined when missing. */
  readonly st: Stats | undefined;
  /** Set when an ancestor is missing (or not a directory); `parent` is undefined then. */
  readonly missingParent?: "missing" | "not-directory";
  close(): void;
}

const MAX_HOPS = 40;

function split(root: string, abs: string): string[] {
  const rel = relative(root, abs);
  return rel === "" ? [] : rel.split(sep);
}

function outside(input: string): CcbError {
  return new CcbError("PATH_OUTSIDE_WORKSPACE", `Path resolves outside the workspace: ${input}`, {
    hint: "Use a path inside the workspace. Symlinks that point outside the workspace are not followed.",
  });
}

function openRoot(rs: RootSet, root: string, input: string): Dir {
  const dir = openDirPath(root);
  const id = rs.rootId(root);
  if (id && (id.dev !== dir.st.dev || id.ino !== dir.st.ino)) {
    dir.close();
    throw new CcbError(
      "PATH_OUTSIDE_WORKSPACE",
      `The workspace root ${root} was replaced since ccb started: ${input}`,
      {
        hint: "Restart ccb on the intended directory.",
      },
    );
  }
  return dir;
}

/**
 * Resolve `abs` (lexically normalised, inside `root`) component by component from a handle on
 * the root. Each directory is opened relative to the previous handle with O_NOFOLLOW and
 * fstat-verified; a symlink is read through its parent's handle and, when its target lies inside
 * a root, the walk restarts from that root's handle with the target's components (so a symlink
 * never leads anywhere a plain path could not). A component that changes kind between lstat and
 * open (a swap) restarts the walk, which then sees the new state. Targets of followed symlinks
 * must exist (a dangling link cannot be proven to stay inside).
 */
export function locate(rs: RootSet, rootIn: string, abs: string, options: LocateOptions): Located {
  let root = rootIn;
  let parts = split(root, abs);
  let mustExist = 0;
  let hops = 0;
  const followFinal = options.followFinal ?? true;
  for (;;) {
    let dir = openRoot(rs, root, options.input);
    const done: string[] = [];
    let restart = false;
    try {
      for (let i = 0; i < parts.length && !restart; i++) {
        const name = parts[i] as string;
        const last = i === parts.length - 1;
        if (options.gitGuard && (name === ".git" || isGitDir(dir, name))) throw gitDirRefusal(options.input);
        let st = lstatAt(dir, name);
        if (!st && i < mustExist) {
          throw new CcbError("PATH_OUTSIDE_WORKSPACE", `Path goes through a dangling symlink: ${options.input}`, {
            hint: "The symlink's target does not exist, so it cannot be proven to stay inside the workspace. Remove or fix the symlink first.",
          });
        }
        if (!st && last) return located(root, [...done, name], dir, name, undefined);
        if (!st) {
          if (!options.createParents) {
            dir.close();
            return missing(root, parts, "missing");
          }
          mkdirAt(dir, name);
          st = lstatAt(dir, name);
          if (!st) throw Object.assign(new Error(`could not create ${name}`), { code: "ENOENT" });
        }
        if (st.isSymbolicLink() && (!last || followFinal)) {
          if (++hops > MAX_HOPS) throw loop(options.input);
          const target = readlinkSync(dir.at(name));
          const next = resolvePath(root, ...done, target);
          const nroot = rs.rootOf(next);
          if (!nroot) throw outside(options.input);
          const tparts = split(nroot, next);
          parts = [...tparts, ...parts.slice(i + 1)];
          mustExist = tparts.length;
          root = nroot;
          restart = true;
          break;
        }
        if (last) return located(root, [...done, name], dir, name, st);
        if (!st.isDirectory()) {
          dir.close();
          return missing(root, parts, "not-directory");
        }
        let child: Dir;
        try {
          child = openDirAt(dir, name);
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (code !== "ELOOP" && code !== "ENOTDIR" && code !== "ENOENT") throw err;
          if (++hops > MAX_HOPS) throw loop(options.input);
          restart = true; // the entry changed kind between lstat and open: look again
          break;
        }
        dir.close();
        dir = child;
        done.push(name);
      }
      if (!restart) {
        // No components: the root itself.
        const self = dir;
        return { root, rel: "", abs: root, parent: undefined, name: "", self, st: self.st, close: () => self.close() };
      }
      dir.close();
    } catch (err) {
      dir.close();
      throw err;
    }
  }
}

function loop(input: string): CcbError {
  return new CcbError("INVALID_PATH", `Too many levels of symbolic links: ${input}`, {
    hint: "A symlink loop is in the path; remove or fix the symlink.",
  });
}

function located(root: string, relParts: string[], parent: Dir, name: string, st: Stats | undefined): Located {
  const rel = relParts.join("/");
  return {
    root,
    rel,
    abs: resolvePath(root, ...relParts),
    parent,
    name,
    self: undefined,
    st,
    close: () => parent.close(),
  };
}

function missing(root: string, parts: string[], why: "missing" | "not-directory"): Located {
  const rel = parts.join("/");
  return {
    root,
    rel,
    abs: resolvePath(root, ...parts),
    parent: undefined,
    name: parts[parts.length - 1] ?? "",
    self: undefined,
    st: undefined,
    missingParent: why,
    close: () => undefined,
  };
}
