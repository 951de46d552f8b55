import { lstat, readdir } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { CcbError } from "../errors.ts";
import { assertSingleLink, type Workspace } from "../workspace.ts";
import type { ParsedGitArgs } from "./args.ts";
import type { RunGit } from "./preflight.ts";

/**
 * Which files git may touch: every path git is told about must resolve inside the workspace
 * (Workspace.resolve: `..`, absolute paths, symlinks, `file://` URLs) and, when it is a regular
 * file, have a single link; directories handed to `--no-index` are searched for hard links, and
 * so are the work-tree files a content-reading subcommand would read. A hard-linked file's other
 * names may lie outside the workspace, so git must neither read it (show, diff, grep, add) nor
 * write through it (`--output`).
 */

/** How deep a `--no-index` directory operand is searched for hard-linked files. */
const MAX_WALK_DEPTH = 8;

export class GitConfinement {
  constructor(readonly workspace: Workspace) {}

  /**
   * A path-like argument must resolve inside the workspace: absolute paths, `..`, `file://` URLs and
   * symlinks all go through workspace.resolve. Only `scheme://` URLs of other schemes are skipped;
   * `host:path`, `rev:path` and `:/message` are checked as paths too (harmless when they are what
   * they look like, and an option such as `diff --no-index` would take them as paths).
   */
  async confineToken(dir: string, token: string, walkDirs = false): Promise<void> {
    if (token.length === 0) return;
    let p = token;
    const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(token);
    if (scheme) {
      if (scheme[1]?.toLowerCase() !== "file") return;
      p = safeDecode(token.slice("file://".length));
    }
    const r = await this.workspace.resolve(isAbsolute(p) ? p : join(dir, p));
    if (r.exists) await this.refuseHardLinked(r.abs, token, walkDirs ? 0 : MAX_WALK_DEPTH);
  }

  /**
   * git must not read or write a file through a hard link (its other names may lie outside the
   * workspace): a path argument naming one is refused, and so is a directory argument holding one
   * (such as a `diff --no-index` operand), to a bounded depth.
   */
  async refuseHardLinked(abs: string, shown: string, depth: number): Promise<void> {
    const st = await lstat(abs).catch(() => undefined);
    if (!st) return;
    if (st.isFile()) {
      try {
        assertSingleLink(st, shown);
      } catch (err) {
        throw new CcbError(
          "GIT_REFUSED",
          `Refused: ${shown} is a hard-linked file; git would read or write the file behind its other names, which may lie outside the workspace.`,
          {
            hint: "Replace it with a copy ({{write}} of its content) first.",
            cause: err,
          },
        );
      }
      return;
    }
    if (!st.isDirectory() || depth >= MAX_WALK_DEPTH) return;
    if (basenameOf(abs) === ".git") return;
    const names = await readdir(abs).catch(() => [] as string[]);
    if (names.length > 10_000) return;
    for (const n of names) await this.refuseHardLinked(join(abs, n), `${shown}/${n}`, depth + 1);
  }

  /** `rev:path`, `:path`, `:N:path` name a blob at a work-tree path: refused when that path is a hard link. */
  async refuseHardLinkedRevPath(dir: string, toplevel: string, token: string): Promise<void> {
    if (/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(token) || token.startsWith(":/") || token.startsWith(":(")) return;
    const m = /^[^:]*:(?:[0-3]:)?(.+)$/.exec(token);
    if (!m) return;
    const rel = m[1] as string;
    const abs = rel.startsWith("./") || rel.startsWith("../") ? join(dir, rel) : join(toplevel, rel);
    const r = await this.workspace.resolve(abs).catch(() => undefined);
    if (r?.exists) await this.refuseHardLinked(r.abs, token, MAX_WALK_DEPTH);
  }

  /**
   * Subcommands that read work-tree files into objects or output (add, commit, stash, diff, grep,
   * update-index) must not meet a hard-linked file: the files git would read are the modified
   * tracked ones, and for add and stash the untracked ones (ignored ones too when forced), which
   * git lists itself. Runs after the config scan: `ls-files --modified` may run clean filters.
   */
  async refuseHardLinkedInWorkTree(run: RunGit, toplevel: string, parsed: ParsedGitArgs): Promise<void> {
    const forced = parsed.rest.some(
      (t) => t === "-f" || t === "--force" || t === "--no-exclude-standard" || t === "--ignored",
    );
    // diff and grep read tracked files only (grep --untracked excepted); add and stash also untracked ones.
    const untracked =
      parsed.sub === "add" || parsed.sub === "stage" || parsed.sub === "stash" || parsed.rest.includes("--untracked");
    const which = untracked ? ["--modified", "--others", ...(forced ? [] : ["--exclude-standard"])] : ["--modified"];
    const r = await run(["ls-files", "-z", ...which], toplevel);
    if (r.exitCode !== 0) return;
    for (const rel of r.stdout.toString("utf8").split("\0")) {
      if (rel.length === 0) continue;
      await this.refuseHardLinked(join(toplevel, rel), rel, MAX_WALK_DEPTH);
    }
  }

  /** A path-valued key (commit.template, blame.ignoreRevsFile, ...) planted in a repository config file. */
  async confineKeyPath(dir: string, value: string, key: string, origin: string): Promise<void> {
    const p = value.startsWith("~") ? `${process.env.HOME ?? "/"}${value.slice(1)}` : value;
    await this.confineToken(dir, p).catch((err: unknown) => {
      throw new CcbError(
        "GIT_REFUSED",
        `The repository config sets ${key} (${origin}) to ${value}, which lies outside the workspace or is hard-linked; ccb does not run git while it is set.`,
        {
          hint: `Remove it, e.g. {{git}} ["config", "--unset-all", "${key}"], or point it at a file inside the workspace.`,
          cause: err,
        },
      );
    });
  }

  async confineRepoPath(abs: string, what: string): Promise<void> {
    await this.workspace.resolve(abs).catch((err: unknown) => {
      throw new CcbError("PATH_OUTSIDE_WORKSPACE", `${what} (${abs}) lies outside the workspace.`, {
        hint: "Add that directory as a workspace root (--workspace), or run git in a repository that lies wholly inside the workspace.",
        cause: err,
      });
    });
  }

  async confineUrl(dir: string, url: string, key: string): Promise<void> {
    await this.confineToken(dir, url).catch((err: unknown) => {
      throw new CcbError(
        "PATH_OUTSIDE_WORKSPACE",
        `The repository config sets ${key} to a local path outside the workspace (${url}).`,
        {
          hint: `Point it inside the workspace or at a remote URL, e.g. {{git}} ["config", "${key}", "<url>"], or remove it.`,
          cause: err,
        },
      );
    });
  }
}

/** Subcommands that read work-tree file contents (see refuseHardLinkedInWorkTree). */
const WORK_TREE_READERS = new Set([
  "add",
  "stage",
  "commit",
  "stash",
  "diff",
  "diff-files",
  "diff-index",
  "grep",
  "update-index",
]);

export function readsWorkTree(parsed: ParsedGitArgs): boolean {
  if (parsed.sub === null || !WORK_TREE_READERS.has(parsed.sub)) return false;
  const pre = parsed.rest.includes("--") ? parsed.rest.slice(0, parsed.rest.indexOf("--")) : parsed.rest;
  if (pre.includes("--no-index")) return false; // its operands are walked instead
  if (
    (parsed.sub === "diff" || parsed.sub === "diff-index" || parsed.sub === "grep") &&
    (pre.includes("--cached") || pre.includes("--staged"))
  )
    return false;
  return true;
}

function basenameOf(p: string): string {
  const i = Math.max(p.lastIndexOf("/"), p.lastIndexOf("\\"));
  return p.slice(i + 1);
}

export function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
