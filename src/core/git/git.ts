import { stat } from "node:fs/promises";
import { isAbsolute, join, resolve as resolvePath } from "node:path";
import { CcbError } from "../errors.ts";
import { type Logger, silentLogger } from "../log.ts";
import type { Workspace } from "../workspace.ts";
import { type ParsedGitArgs, parseGitArgs } from "./args.ts";
import { GitConfinement, readsWorkTree } from "./confine.ts";
import { ccbGlobalConfig, ceilingFor, configOverrides, gitEnv } from "./env.ts";
import { type ExecResult, execGit } from "./exec.ts";
import { checkSequencerTodo, listConfig, type RepoInfo, type RunGit, repoInfo, scanConfig } from "./preflight.ts";
import { type GitEntryKind, parsePorcelainV2 } from "./status.ts";

/**
 * Git for tools: parsed status, capped diff, and `run` of any allowed subcommand with an argument
 * array (never a shell). Every invocation:
 * - resolves its directory and every path-like argument inside the workspace (PATH_OUTSIDE_WORKSPACE);
 * - refuses caller arguments that would run programs or set dangerous config (git/args.ts, git/keys.ts);
 * - checks that the repository lies in the workspace and that no config file it reads holds a key
 *   that runs a program (git/preflight.ts);
 * - runs git with a fixed environment and `-c` overrides placed last (git/env.ts): hooks off,
 *   fsmonitor off, editor/pager/askpass fixed, no system/global config except the user's identity;
 * - kills the process group on timeout or abort and caps the output.
 *
 * The rule that closes the class "git runs a program the workspace controls": a program reaches git
 * only through config (or through attributes naming a config-defined driver). So every config git
 * can read is either ccb's (no system config, a ccb-owned global file, `-c` overrides placed last
 * that fix every program-valued key with a fixed name) or vetted before git runs (the repository's
 * local and worktree config with includes, and the config of every submodule repository, found by
 * gitlink and by `modules/**`, whatever its `.git` is); keys with names git lets the repository
 * choose (filter.<driver>, diff.<driver>, merge.<driver>, credential.<url>, ...) cannot be fixed
 * by override, so their presence in a vetted file refuses the command. git is kept from starting
 * git in submodules at all (git/env.ts), so the vetting is the second wall, not the only one.
 * Files: every path git is told about (arguments, option values, values of path-valued keys,
 * `rev:path` blobs, `--no-index` operands, the work-tree files a content-reading command would
 * read) must be confined and single-link.
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

/** Subcommands that create or name a repository elsewhere, or never run drivers: no config scan. */
const NO_SCAN = new Set(["config", "init", "init-db", "clone", "version"]);
/** Subcommands that talk to remotes: local-path URLs in the repository config must lie in the workspace. */
const TRANSPORT = new Set([
  "fetch",
  "pull",
  "push",
  "ls-remote",
  "remote",
  "submodule",
  "archive",
  "fetch-pack",
  "send-pack",
]);
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
  private readonly confine: GitConfinement;

  constructor(
    readonly workspace: Workspace,
    options: GitServiceOptions = {},
  ) {
    this.gitPath = options.gitPath ?? "git";
    this.log = options.log ?? silentLogger;
    this.confine = new GitConfinement(workspace);
  }

  async status(
    options: { path?: string; paths?: string[]; untracked?: boolean; timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<GitStatus> {
    const args = [
      "status",
      "--porcelain=v2",
      "--branch",
      "-z",
      "--find-renames",
      "--ignore-submodules=dirty",
      `--untracked-files=${options.untracked === false ? "no" : "all"}`,
    ];
    const r = await this.internal(args, options.path, options.paths, {
      timeoutMs: options.timeoutMs ?? READ_TIMEOUT_MS,
      maxBytes: 16 * 1024 * 1024,
      killOnCap: true,
      signal: options.signal,
    });
    if (r.result.stdoutTruncated)
      throw new CcbError("TOO_LARGE", "git status output is larger than 16 MB.", {
        hint: "Pass paths to narrow it, or set untracked:false.",
      });
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

  async diff(
    options: {
      path?: string;
      paths?: string[];
      staged?: boolean;
      maxBytes?: number;
      contextLines?: number;
      timeoutMs?: number;
      signal?: AbortSignal;
    } = {},
  ): Promise<GitDiffResult> {
    const maxBytes = Math.max(1, options.maxBytes ?? GIT_DIFF_DEFAULT_MAX_BYTES);
    const args = ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "--ignore-submodules=dirty"];
    if (options.staged) args.push("--cached");
    if (options.contextLines !== undefined) args.push(`-U${Math.max(0, Math.floor(options.contextLines))}`);
    const r = await this.internal(args, options.path, options.paths, {
      timeoutMs: options.timeoutMs ?? READ_TIMEOUT_MS,
      maxBytes,
      killOnCap: true,
      signal: options.signal,
    });
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

  async run(
    args: string[],
    options: { cwd?: string; timeoutMs?: number; maxBytes?: number; signal?: AbortSignal } = {},
  ): Promise<GitRunResult> {
    const parsed = parseGitArgs(args);
    if (parsed.sub !== null && !(await this.knownCommands()).has(parsed.sub)) {
      throw new CcbError("GIT_REFUSED", `Not a built-in git subcommand: ${parsed.sub}.`, {
        hint: "Only git's own subcommands run here: aliases and external git-* programs can run anything.",
      });
    }
    const prep = await this.prepare(options.cwd, parsed, options.signal);
    const noFile = parsed.sub !== null && NO_FILE_TRANSPORT.has(parsed.sub);
    // The overrides go last before the subcommand (git: the last -c wins); without a subcommand
    // (`--version`), global options must come last.
    // `git config` never starts programs (its --edit is refused) and must show the files as they are.
    const overrides = parsed.sub === "config" ? [] : overrideArgs(noFile);
    const rest =
      parsed.sub !== null &&
      IGNORE_DIRTY_SUBMODULES.has(parsed.sub) &&
      !parsed.rest.some((t) => t.startsWith("--ignore-submodules"))
        ? ["--ignore-submodules=dirty", ...parsed.rest]
        : parsed.rest;
    const argv =
      parsed.sub === null ? [...overrides, ...parsed.global] : [...parsed.global, ...overrides, parsed.sub, ...rest];
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
      return new Set(
        r.stdout
          .toString("utf8")
          .split("\n")
          .map((l) => l.trim())
          .filter((l) => l.length > 0),
      );
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
    const parsed: ParsedGitArgs = {
      global: [],
      repoSelect: [],
      sub: args[0] ?? null,
      rest: args.slice(1),
      pathTokens: [],
      chdirs: [],
    };
    const prep = await this.prepare(cwd, parsed, opts.signal);
    if (!prep.info) {
      throw new CcbError(
        "GIT_FAILED",
        `Not a git repository: ${this.workspace.display(await this.workspace.resolve(prep.dir))}`,
        {
          hint: 'Pass the path of a directory inside a repository, or create one with {{git}} ["init"].',
        },
      );
    }
    const specs: string[] = [];
    for (const p of paths ?? []) specs.push((await this.workspace.resolve(isAbsolute(p) ? p : join(prep.dir, p))).abs);
    const argv = ["--no-optional-locks", "--literal-pathspecs", ...overrideArgs(), ...args, "--", ...specs];
    const result = await this.exec(argv, prep, { ...opts, what: `git ${args[0]}` });
    if (result.exitCode !== 0 && !result.killedOnCap) {
      throw new CcbError(
        "GIT_FAILED",
        `git ${args[0]} failed: ${result.stderr.toString("utf8").trim() || `exit code ${result.exitCode}`}`,
      );
    }
    return { result, prep };
  }

  /** Resolve the directory and path arguments, locate the repository, scan its config. */
  private async prepare(
    cwdInput: string | undefined,
    parsed: ParsedGitArgs,
    signal: AbortSignal | undefined,
  ): Promise<Prepared> {
    const cwd = await this.workspace.resolve(cwdInput ?? ".", { mustExist: true });
    if (!(await stat(cwd.abs)).isDirectory()) throw new CcbError("NOT_DIRECTORY", `Not a directory: ${cwdInput}`);
    let dir = cwd.abs;
    for (const c of parsed.chdirs) dir = (await this.workspace.resolve(resolvePath(dir, c))).abs;
    const noIndex = parsed.rest.includes("--no-index");
    for (const t of parsed.pathTokens) await this.confine.confineToken(dir, t, noIndex);
    // `grep --no-index` searches the directory itself when no path is given.
    if (noIndex && parsed.sub === "grep") await this.confine.refuseHardLinked(dir, ".", 0);
    const run = this.preflightRunner(cwd.root, signal);
    const scan = parsed.sub === null || !NO_SCAN.has(parsed.sub);
    const listing = scan ? listConfig(run, cwd.abs, parsed.repoSelect) : undefined;
    listing?.catch(() => {}); // awaited below when there is a repository
    const info = await repoInfo(run, cwd.abs, parsed.repoSelect);
    if (info) {
      for (const p of [info.gitDir, info.commonDir, info.toplevel])
        if (p !== null) await this.confine.confineRepoPath(p, "the repository");
      if (listing) {
        const checkUrl =
          parsed.sub !== null && TRANSPORT.has(parsed.sub)
            ? (url: string, key: string) => this.confine.confineUrl(dir, url, key)
            : undefined;
        await scanConfig(
          run,
          cwd.abs,
          parsed.repoSelect,
          info,
          {
            checkUrl,
            confineRepoPath: (abs, what) => this.confine.confineRepoPath(abs, what),
            confineKeyPath: (at, value, key, origin) => this.confine.confineKeyPath(at, value, key, origin),
          },
          listing,
        );
      }
      if (info.toplevel !== null) {
        for (const t of parsed.pathTokens) await this.confine.refuseHardLinkedRevPath(dir, info.toplevel, t);
        if (readsWorkTree(parsed)) await this.confine.refuseHardLinkedInWorkTree(run, info.toplevel, parsed);
      }
      if (parsed.sub === "rebase" || parsed.sub === "cherry-pick" || parsed.sub === "revert")
        await checkSequencerTodo(info.gitDir);
    }
    return { dir: cwd.abs, root: cwd.root, info };
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
      if (r.timedOut)
        throw new CcbError(
          "TIMEOUT",
          `git's preflight (${argv.find((a) => !a.startsWith("-")) ?? "git"}) did not finish within ${READ_TIMEOUT_MS} ms.`,
        );
      if (r.stdoutTruncated)
        throw new CcbError("TOO_LARGE", "The repository config is larger than 16 MB; ccb does not run git on it.");
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
        details: {
          stdout: result.stdout.toString("utf8").slice(0, 4096),
          stderr: result.stderr.toString("utf8").slice(0, 4096),
        },
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

function overrideArgs(noFileProtocol = false): string[] {
  return configOverrides({ noFileProtocol }).flatMap((kv) => ["-c", kv]);
}

function clampTimeout(ms: number): number {
  if (!Number.isFinite(ms) || ms <= 0) return GIT_DEFAULT_TIMEOUT_MS;
  return Math.min(ms, GIT_MAX_TIMEOUT_MS);
}
