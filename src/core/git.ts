import { lstat, readdir, stat } from "node:fs/promises";
import { isAbsolute, join, resolve as resolvePath } from "node:path";
import { CcbError } from "./errors.ts";
import { parseGitArgs, type ParsedGitArgs } from "./git-args.ts";
import { ccbGlobalConfig, ceilingFor, configOverrides, gitEnv } from "./git-env.ts";
import { execGit, type ExecResult } from "./git-exec.ts";
import { checkSequencerTodo, listConfig, repoInfo, scanConfig, type RepoInfo, type RunGit } from "./git-preflight.ts";
import { parsePorcelainV2, type GitEntryKind } from "./git-status.ts";
import { silentLogger, type Logger } from "./log.ts";
import { assertSingleLink, type Workspace } from "./workspace.ts";

/**
 * Git for tools: parsed status, capped diff, and `run` of any allowed subcommand with an argument
 * array (never a shell). Every invocation:
 * - resolves its directory and every path-like argument inside the workspace (PATH_OUTSIDE_WORKSPACE);
 * - refuses caller arguments that would run programs or set dangerous config (git-args.ts, git-keys.ts);
 * - checks that the repository lies in the workspace and that no config file it reads holds a key
 *   that runs a program (git-preflight.ts);
 * - runs git with a fixed environment and `-c` overrides placed last (git-env.ts): hooks off,
 *   fsmonitor off, editor/pager/askpass fixed, no system/global config except the user's identity;
 * - kills the process group on timeout or abort and caps the output.
 */

export interface GitStatusEntry {
  path: string;
  index: string;
  worktree: string;
  origPath?: string;
  kind?: GitEntryKind;
  submodule?: boolean;
}
export interface GitStatus {
  repo: string;
  branch: string | null;
  upstream: string | null;
  ahead: number;
  behind: number;
  entries: GitStatusEntry[];
  clean: boolean;
  /** HEAD commit, null before the first commit. */
  oid?: string | null;
  detached?: boolean;
}
export interface GitRunResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  truncated: boolean;
  /** Bytes of stdout git wrote (more than shown when truncated). */
  stdoutBytes?: number;
}
export interface GitDiffResult {
  diff: string;
  truncated: boolean;
  /** Bytes of diff git produced before ccb stopped reading (at least this many when truncated). */
  bytes?: number;
  /** Set when truncated: says so and how to narrow the diff. */
  message?: string;
}

export interface GitServiceOptions {
  /** The git executable (default `git` on PATH). */
  gitPath?: string;
  log?: Logger;
}

export const GIT_DEFAULT_TIMEOUT_MS = 120_000;
export const GIT_MAX_TIMEOUT_MS = 600_000;
export const GIT_DEFAULT_MAX_BYTES = 1024 * 1024;
export const GIT_DIFF_DEFAULT_MAX_BYTES = 256 * 1024;
const READ_TIMEOUT_MS = 60_000;
/** How deep a `--no-index` directory operand is searched for hard-linked files. */
const MAX_WALK_DEPTH = 8;

/** Subcommands that create or name a repository elsewhere, or never run drivers: no config scan. */
const NO_SCAN = new Set(["config", "init", "init-db", "clone", "version"]);
/** Subcommands that talk to remotes: local-path URLs in the repository config must lie in the workspace. */
const TRANSPORT = new Set(["fetch", "pull", "push", "ls-remote", "remote", "submodule", "archive", "fetch-pack", "send-pack"]);
/**
 * Subcommands for which the `file` transport is off: a local push runs the target repository's
 * hooks and `archive --remote` its tar filters, in a process that does not inherit ccb's `-c`.
 */
const NO_FILE_TRANSPORT = new Set(["push", "send-pack", "archive"]);

interface Prepared {
  dir: string;
  root: string;
  info: RepoInfo | null;
}

export class GitService {
  readonly gitPath: string;
  private readonly log: Logger;
  private commands: Promise<Set<string>> | undefined;

  constructor(
    readonly workspace: Workspace,
    options: GitServiceOptions = {},
  ) {
    this.gitPath = options.gitPath ?? "git";
    this.log = options.log ?? silentLogger;
  }

  async status(options: { path?: string; paths?: string[]; untracked?: boolean; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<GitStatus> {
    const args = ["status", "--porcelain=v2", "--branch", "-z", "--find-renames", "--ignore-submodules=dirty", `--untracked-files=${options.untracked === false ? "no" : "all"}`];
    const r = await this.internal(args, options.path, options.paths, { timeoutMs: options.timeoutMs ?? READ_TIMEOUT_MS, maxBytes: 16 * 1024 * 1024, killOnCap: true, signal: options.signal });
    if (r.result.stdoutTruncated) throw new CcbError("TOO_LARGE", "git status output is larger than 16 MB.", { hint: "Pass paths to narrow it, or set untracked:false." });
    const p = parsePorcelainV2(r.result.stdout.toString("utf8"));
    const toplevel = r.prep.info?.toplevel ?? r.prep.dir;
    const repo = this.workspace.display(await this.workspace.resolve(toplevel));
    return {
      repo,
      branch: p.branch,
      upstream: p.upstream,
      ahead: p.ahead,
      behind: p.behind,
      entries: p.entries,
      clean: p.entries.every((e) => e.kind === "ignored"),
      oid: p.oid,
      detached: p.detached,
    };
  }

  async diff(options: { path?: string; paths?: string[]; staged?: boolean; maxBytes?: number; contextLines?: number; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<GitDiffResult> {
    const maxBytes = Math.max(1, options.maxBytes ?? GIT_DIFF_DEFAULT_MAX_BYTES);
    const args = ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "--ignore-submodules=dirty"];
    if (options.staged) args.push("--cached");
    if (options.contextLines !== undefined) args.push(`-U${Math.max(0, Math.floor(options.contextLines))}`);
    const r = await this.internal(args, options.path, options.paths, { timeoutMs: options.timeoutMs ?? READ_TIMEOUT_MS, maxBytes, killOnCap: true, signal: options.signal });
    const truncated = r.result.stdoutTruncated;
    let buf = r.result.stdout;
    if (truncated) {
      const nl = buf.lastIndexOf(0x0a);
      if (nl > 0) buf = buf.subarray(0, nl + 1);
    }
    const diff = buf.toString("utf8");
    if (!truncated) return { diff, truncated, bytes: r.result.stdoutBytes };
    return {
      diff,
      truncated,
      bytes: r.result.stdoutBytes,
      message: `The diff is larger than ${maxBytes} bytes and was truncated after ${buf.length} bytes; pass paths to see the rest, or raise maxBytes.`,
    };
  }

  async run(args: string[], options: { cwd?: string; timeoutMs?: number; maxBytes?: number; signal?: AbortSignal } = {}): Promise<GitRunResult> {
    const parsed = parseGitArgs(args);
    if (parsed.sub !== null && !(await this.knownCommands()).has(parsed.sub)) {
      throw new CcbError("GIT_REFUSED", `Not a built-in git subcommand: ${parsed.sub}.`, {
        hint: "git_run runs git's own subcommands only: aliases and external git-* programs can run anything.",
      });
    }
    const prep = await this.prepare(options.cwd, parsed, options.signal);
    const noFile = parsed.sub !== null && NO_FILE_TRANSPORT.has(parsed.sub);
    // The overrides go last before the subcommand (git: the last -c wins); without a subcommand
    // (`--version`), global options must come last.
    // `git config` never starts programs (its --edit is refused) and must show the files as they are.
    const overrides = parsed.sub === "config" ? [] : overrideArgs(noFile);
    const rest = parsed.sub !== null && IGNORE_DIRTY_SUBMODULES.has(parsed.sub) && !parsed.rest.some((t) => t.startsWith("--ignore-submodules")) ? ["--ignore-submodules=dirty", ...parsed.rest] : parsed.rest;
    const argv = parsed.sub === null ? [...overrides, ...parsed.global] : [...parsed.global, ...overrides, parsed.sub, ...rest];
    const result = await this.exec(argv, prep, {
      timeoutMs: clampTimeout(options.timeoutMs ?? GIT_DEFAULT_TIMEOUT_MS),
      maxBytes: Math.max(1, options.maxBytes ?? GIT_DEFAULT_MAX_BYTES),
      signal: options.signal,
      what: `git ${parsed.sub ?? args.join(" ")}`,
    });
    this.log.debug(`git ${parsed.sub ?? ""} exited ${result.exitCode}`);
    return {
      exitCode: result.exitCode ?? -1,
      stdout: result.stdout.toString("utf8"),
      stderr: result.stderr.toString("utf8"),
      truncated: result.stdoutTruncated || result.stderrTruncated,
      stdoutBytes: result.stdoutBytes,
    };
  }

  /** git's own subcommands (built-ins and the scripts in its exec path), asked once. */
  private knownCommands(): Promise<Set<string>> {
    this.commands ??= (async () => {
      const r = await execGit(this.gitPath, ["--list-cmds=builtins,main"], {
        cwd: this.workspace.primary,
        env: gitEnv({ globalConfig: await ccbGlobalConfig(this.gitPath) }),
        timeoutMs: READ_TIMEOUT_MS,
        maxBytes: 1024 * 1024,
      });
      return new Set(r.stdout.toString("utf8").split("\n").map((l) => l.trim()).filter((l) => l.length > 0));
    })();
    this.commands.catch(() => {
      this.commands = undefined;
    });
    return this.commands;
  }

  /** status/diff: fixed arguments plus caller paths, through the same checks as `run`. */
  private async internal(
    args: string[],
    cwd: string | undefined,
    paths: string[] | undefined,
    opts: { timeoutMs: number; maxBytes: number; killOnCap: boolean; signal: AbortSignal | undefined },
  ): Promise<{ result: ExecResult; prep: Prepared }> {
    const parsed: ParsedGitArgs = { global: [], repoSelect: [], sub: args[0] ?? null, rest: args.slice(1), pathTokens: [], chdirs: [] };
    const prep = await this.prepare(cwd, parsed, opts.signal);
    if (!prep.info) {
      throw new CcbError("GIT_FAILED", `Not a git repository: ${this.workspace.display(await this.workspace.resolve(prep.dir))}`, {
        hint: 'Pass the path of a directory inside a repository, or create one with git_run ["init"].',
      });
    }
    const specs: string[] = [];
    for (const p of paths ?? []) specs.push((await this.workspace.resolve(isAbsolute(p) ? p : join(prep.dir, p))).abs);
    const argv = ["--no-optional-locks", "--literal-pathspecs", ...overrideArgs(), ...args, "--", ...specs];
    const result = await this.exec(argv, prep, { ...opts, what: `git ${args[0]}` });
    if (result.exitCode !== 0 && !result.killedOnCap) {
      throw new CcbError("GIT_FAILED", `git ${args[0]} failed: ${result.stderr.toString("utf8").trim() || `exit code ${result.exitCode}`}`);
    }
    return { result, prep };
  }

  /** Resolve the directory and path arguments, locate the repository, scan its config. */
  private async prepare(cwdInput: string | undefined, parsed: ParsedGitArgs, signal: AbortSignal | undefined): Promise<Prepared> {
    const cwd = await this.workspace.resolve(cwdInput ?? ".", { mustExist: true });
    if (!(await stat(cwd.abs)).isDirectory()) throw new CcbError("NOT_DIRECTORY", `Not a directory: ${cwdInput}`);
    let dir = cwd.abs;
    for (const c of parsed.chdirs) dir = (await this.workspace.resolve(resolvePath(dir, c))).abs;
    const noIndex = parsed.rest.includes("--no-index");
    for (const t of parsed.pathTokens) await this.confineToken(dir, t, noIndex);
    // `grep --no-index` searches the directory itself when no path is given.
    if (noIndex && parsed.sub === "grep") await this.refuseHardLinked(dir, ".", 0);
    const run = this.preflightRunner(cwd.root, signal);
    const scan = parsed.sub === null || !NO_SCAN.has(parsed.sub);
    const listing = scan ? listConfig(run, cwd.abs, parsed.repoSelect) : undefined;
    listing?.catch(() => {}); // awaited below when there is a repository
    const info = await repoInfo(run, cwd.abs, parsed.repoSelect);
    if (info) {
      for (const p of [info.gitDir, info.commonDir, info.toplevel]) if (p !== null) await this.confineRepoPath(p, "the repository");
      if (listing) {
        const checkUrl = parsed.sub !== null && TRANSPORT.has(parsed.sub) ? (url: string, key: string) => this.confineUrl(dir, url, key) : undefined;
        await scanConfig(
          run,
          cwd.abs,
          parsed.repoSelect,
          info,
          {
            checkUrl,
            confineRepoPath: (abs, what) => this.confineRepoPath(abs, what),
            confineKeyPath: (at, value, key, origin) => this.confineKeyPath(at, value, key, origin),
          },
          listing,
        );
      }
      if (info.toplevel !== null) {
        for (const t of parsed.pathTokens) await this.refuseHardLinkedRevPath(dir, info.toplevel, t);
        if (readsWorkTree(parsed)) await this.refuseHardLinkedInWorkTree(run, info.toplevel, parsed);
      }
      if (parsed.sub === "rebase" || parsed.sub === "cherry-pick" || parsed.sub === "revert") await checkSequencerTodo(info.gitDir);
    }
    return { dir: cwd.abs, root: cwd.root, info };
  }

  /**
   * A path-like argument must resolve inside the workspace: absolute paths, `..`, `file://` URLs and
   * symlinks all go through workspace.resolve. Only `scheme://` URLs of other schemes are skipped;
   * `host:path`, `rev:path` and `:/message` are checked as paths too (harmless when they are what
   * they look like, and an option such as `diff --no-index` would take them as paths).
   */
  private async confineToken(dir: string, token: string, walkDirs = false): Promise<void> {
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
  private async refuseHardLinked(abs: string, shown: string, depth: number): Promise<void> {
    const st = await lstat(abs).catch(() => undefined);
    if (!st) return;
    if (st.isFile()) {
      try {
        assertSingleLink(st, shown);
      } catch (err) {
        throw new CcbError("GIT_REFUSED", `Refused: ${shown} is a hard-linked file; git would read or write the file behind its other names, which may lie outside the workspace.`, {
          hint: "Replace it with a copy (fs_write of its content) first.",
          cause: err,
        });
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
  private async refuseHardLinkedRevPath(dir: string, toplevel: string, token: string): Promise<void> {
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
   * update-index) must not meet a hard-linked file: the files git would read are the modified and
   * the untracked ones (ignored ones too when forced), which git lists itself.
   */
  private async refuseHardLinkedInWorkTree(run: RunGit, toplevel: string, parsed: ParsedGitArgs): Promise<void> {
    const forced = parsed.rest.some((t) => t === "-f" || t === "--force" || t === "--no-exclude-standard" || t === "--ignored");
    const r = await run(["ls-files", "-z", "--modified", "--others", ...(forced ? [] : ["--exclude-standard"])], toplevel);
    if (r.exitCode !== 0) return;
    for (const rel of r.stdout.toString("utf8").split("\0")) {
      if (rel.length === 0) continue;
      await this.refuseHardLinked(join(toplevel, rel), rel, MAX_WALK_DEPTH);
    }
  }

  /** A path-valued key (commit.template, blame.ignoreRevsFile, ...) planted in a repository config file. */
  private async confineKeyPath(dir: string, value: string, key: string, origin: string): Promise<void> {
    const p = value.startsWith("~") ? `${process.env.HOME ?? "/"}${value.slice(1)}` : value;
    await this.confineToken(dir, p).catch((err: unknown) => {
      throw new CcbError("GIT_REFUSED", `The repository config sets ${key} (${origin}) to ${value}, which lies outside the workspace or is hard-linked; ccb does not run git while it is set.`, {
        hint: `Remove it, e.g. git_run ["config", "--unset-all", "${key}"], or point it at a file inside the workspace.`,
        cause: err,
      });
    });
  }

  private async confineRepoPath(abs: string, what: string): Promise<void> {
    await this.workspace.resolve(abs).catch((err: unknown) => {
      throw new CcbError("PATH_OUTSIDE_WORKSPACE", `${what} (${abs}) lies outside the workspace.`, {
        hint: "Add that directory as a workspace root (--workspace), or run git in a repository that lies wholly inside the workspace.",
        cause: err,
      });
    });
  }

  private async confineUrl(dir: string, url: string, key: string): Promise<void> {
    await this.confineToken(dir, url).catch((err: unknown) => {
      throw new CcbError("PATH_OUTSIDE_WORKSPACE", `The repository config sets ${key} to a local path outside the workspace (${url}).`, {
        hint: `Point it inside the workspace or at a remote URL, e.g. git_run ["config", "${key}", "<url>"], or remove it.`,
        cause: err,
      });
    });
  }

  private preflightRunner(root: string, signal: AbortSignal | undefined): RunGit {
    return async (argv, cwd) => {
      const r = await execGit(this.gitPath, [...overrideArgs(), ...argv], {
        cwd,
        env: gitEnv({ globalConfig: await ccbGlobalConfig(this.gitPath), ceiling: ceilingFor(root) }),
        timeoutMs: READ_TIMEOUT_MS,
        maxBytes: 16 * 1024 * 1024,
        killOnCap: true,
        signal,
      });
      // A check that did not finish must not pass as "nothing found".
      if (r.timedOut) throw new CcbError("TIMEOUT", `git's preflight (${argv.find((a) => !a.startsWith("-")) ?? "git"}) did not finish within ${READ_TIMEOUT_MS} ms.`);
      if (r.stdoutTruncated) throw new CcbError("TOO_LARGE", "The repository config is larger than 16 MB; ccb does not run git on it.");
      return r;
    };
  }

  private async exec(
    argv: string[],
    prep: Prepared,
    opts: { timeoutMs: number; maxBytes: number; killOnCap?: boolean; signal: AbortSignal | undefined; what: string },
  ): Promise<ExecResult> {
    const env = gitEnv({ globalConfig: await ccbGlobalConfig(this.gitPath), ceiling: ceilingFor(prep.root) });
    const result = await execGit(this.gitPath, argv, {
      cwd: prep.dir,
      env,
      timeoutMs: opts.timeoutMs,
      maxBytes: opts.maxBytes,
      killOnCap: opts.killOnCap ?? false,
      signal: opts.signal,
    });
    if (result.timedOut) {
      throw new CcbError("TIMEOUT", `${opts.what} did not finish within ${opts.timeoutMs} ms and was killed.`, {
        hint: "Raise timeoutMs (up to 600000), or narrow the command.",
        details: { stdout: result.stdout.toString("utf8").slice(0, 4096), stderr: result.stderr.toString("utf8").slice(0, 4096) },
      });
    }
    return result;
  }
}

/**
 * Subcommands given `--ignore-submodules=dirty` first: on the command line it beats a
 * `submodule.<name>.ignore` of `.gitmodules`, so their dirty check never starts git in a submodule.
 */
const IGNORE_DIRTY_SUBMODULES = new Set(["status", "diff", "diff-files", "diff-index"]);

/** Subcommands that read work-tree file contents (see refuseHardLinkedInWorkTree). */
const WORK_TREE_READERS = new Set(["add", "stage", "commit", "stash", "diff", "diff-files", "diff-index", "grep", "update-index"]);

function readsWorkTree(parsed: ParsedGitArgs): boolean {
  if (parsed.sub === null || !WORK_TREE_READERS.has(parsed.sub)) return false;
  const pre = parsed.rest.includes("--") ? parsed.rest.slice(0, parsed.rest.indexOf("--")) : parsed.rest;
  if (pre.includes("--no-index")) return false; // its operands are walked instead
  if ((parsed.sub === "diff" || parsed.sub === "diff-index" || parsed.sub === "grep") && (pre.includes("--cached") || pre.includes("--staged"))) return false;
  return true;
}

function basenameOf(p: string): string {
  const i = Math.max(p.lastIndexOf("/"), p.lastIndexOf("\\"));
  return p.slice(i + 1);
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function overrideArgs(noFileProtocol = false): string[] {
  return configOverrides({ noFileProtocol }).flatMap((kv) => ["-c", kv]);
}

function clampTimeout(ms: number): number {
  if (!Number.isFinite(ms) || ms <= 0) return GIT_DEFAULT_TIMEOUT_MS;
  return Math.min(ms, GIT_MAX_TIMEOUT_MS);
}
