import { lstat, readdir, readFile, stat } from "node:fs/promises";
import { dirname, isAbsolute, join } from "node:path";
import { CcbError } from "../errors.ts";
import type { ExecResult } from "./exec.ts";
import { indexGitlinks } from "./index-file.ts";
import { isLocalUrl, isPathValuedKey, pathOfValue, repoKeyRefusal, urlOfKey } from "./keys.ts";

/**
 * Checks made before the caller's git command runs, with git itself as the parser:
 * where the repository is (its work tree and git directories must lie in the workspace), and
 * whether any config file it (or one of its submodules) reads holds a key that would run a program
 * or names a file outside the workspace.
 *
 * Submodules are found three ways, so that no layout escapes the scan: absorbed git dirs under
 * `<common dir>/modules/**`, the paths `.gitmodules` names, and every populated gitlink of the
 * index (with or without a `.gitmodules` entry), whose git dir git itself resolves (a `.git`
 * directory, a `gitdir:` file, a separate git dir anywhere). Each submodule repository gets the
 * same checks as the superproject, recursively. ccb's overrides (git/env.ts) already keep git
 * from starting git inside submodules; this scan is the second wall for the commands that do
 * (`git submodule update`, `git rm` of a submodule, ...).
 */

export type RunGit = (argv: string[], cwd: string) => Promise<ExecResult>;

export interface RepoInfo {
  gitDir: string;
  commonDir: string;
  /** Null for a bare repository. */
  toplevel: string | null;
}

/** Where the repository of `dir` is, or null when `dir` is not in one. */
export async function repoInfo(run: RunGit, dir: string, repoSelect: string[]): Promise<RepoInfo | null> {
  const r = await run(
    [...repoSelect, "rev-parse", "--path-format=absolute", "--absolute-git-dir", "--git-common-dir", "--show-toplevel"],
    dir,
  );
  const lines = r.stdout
    .toString("utf8")
    .split("\n")
    .filter((l) => l.length > 0);
  if (lines.length < 2) {
    const err = r.stderr.toString("utf8");
    if (/not a git repository/i.test(err)) return null;
    // Anything else (unreadable config, dubious ownership, a git too old for --path-format) must not
    // be mistaken for "no repository": that would skip the checks below.
    throw new CcbError(
      "GIT_FAILED",
      `git could not inspect the repository: ${err.trim() || `exit code ${r.exitCode}`}`,
      {
        hint: "Fix the repository (or its config) first; ccb needs git 2.31 or newer.",
      },
    );
  }
  const [gitDir, commonDir, toplevel] = lines as [string, string, string | undefined];
  return { gitDir, commonDir, toplevel: r.exitCode === 0 && toplevel ? toplevel : null };
}

export interface ConfigEntry {
  scope?: string;
  origin: string;
  key: string;
  value: string | null;
}

/** Parse `git config -l -z --show-origin [--show-scope]` output. */
export function parseConfigList(out: string, withScope: boolean): ConfigEntry[] {
  const parts = out.split("\0");
  const entries: ConfigEntry[] = [];
  const step = withScope ? 3 : 2;
  for (let i = 0; i + step - 1 < parts.length; i += step) {
    const scope = withScope ? parts[i] : "local";
    const origin = parts[i + step - 2] as string;
    const kv = parts[i + step - 1] as string;
    if (scope === "command") continue;
    const nl = kv.indexOf("\n");
    entries.push({ scope, origin, key: nl === -1 ? kv : kv.slice(0, nl), value: nl === -1 ? null : kv.slice(nl + 1) });
  }
  return entries;
}

function listingFailed(r: ExecResult, where: string): CcbError {
  return new CcbError(
    "GIT_FAILED",
    `git could not read the ${where} config: ${r.stderr.toString("utf8").trim() || `exit code ${r.exitCode}`}`,
    {
      hint: "Fix the config file named in the message; ccb checks every config file before it runs git.",
    },
  );
}

function refusalFor(entries: ConfigEntry[], where: string): void {
  for (const e of entries) {
    const why = repoKeyRefusal(e.key, e.value);
    if (why) {
      throw new CcbError(
        "GIT_REFUSED",
        `The ${where} config sets ${e.key} (${e.origin}), which ${why}; ccb does not run git while it is set.`,
        {
          hint: `Remove it, e.g. {{git}} ["config", "--unset-all", "${e.key}"]${where === "repository" ? "" : " in that submodule"}, or edit the file named above.`,
          details: { key: e.key, origin: e.origin },
        },
      );
    }
  }
}

/** The effective config of the repository (start it early: it runs beside the rev-parse). */
export function listConfig(run: RunGit, dir: string, repoSelect: string[]): Promise<ExecResult> {
  return run([...repoSelect, "config", "--list", "-z", "--includes", "--show-scope", "--show-origin"], dir);
}

/** What the scan asks of the caller (git.ts), which owns the workspace. */
export interface ScanChecks {
  /** Transport subcommands: a local-path remote URL (or url.<base> base) must pass it. */
  checkUrl?: (url: string, key: string) => Promise<void>;
  /** A git directory, common directory or alternate must lie in the workspace. */
  confineRepoPath: (abs: string, what: string) => Promise<void>;
  /** The value of a path-valued key (commit.template, ...) must name a confined, single-link file; `dir` is where git runs. */
  confineKeyPath: (dir: string, value: string, key: string, origin: string) => Promise<void>;
}

const MAX_SUBMODULE_DEPTH = 4;
const MAX_SUBMODULES = 500;

/**
 * Refuse when the repository's effective config, or a submodule's, holds a key that runs a program
 * or a path-valued key naming a file outside the workspace.
 */
export async function scanConfig(
  run: RunGit,
  dir: string,
  repoSelect: string[],
  info: RepoInfo,
  checks: ScanChecks,
  started?: Promise<ExecResult>,
): Promise<void> {
  const seen = new Set<string>([info.commonDir]);
  await scanRepo(run, dir, repoSelect, info, checks, started, "repository", 0, seen);
}

async function scanRepo(
  run: RunGit,
  dir: string,
  repoSelect: string[],
  info: RepoInfo,
  checks: ScanChecks,
  started: Promise<ExecResult> | undefined,
  where: "repository" | "submodule",
  depth: number,
  seen: Set<string>,
): Promise<void> {
  const r = await (started ?? listConfig(run, dir, repoSelect));
  if (r.exitCode !== 0) throw listingFailed(r, where);
  const entries = parseConfigList(r.stdout.toString("utf8"), true);
  refusalFor(entries, where);
  await scanConditionalIncludes(run, dir, entries, 0);
  for (const e of entries) {
    if (e.scope === "global" || e.scope === "system" || !isPathValuedKey(e.key)) continue;
    const p = pathOfValue(e.key, e.value);
    if (p !== undefined) await checks.confineKeyPath(dir, p, e.key, e.origin);
  }
  if (checks.checkUrl && where === "repository") {
    for (const e of entries) {
      const url = urlOfKey(e.key, e.value);
      if (url !== undefined && isLocalUrl(url)) await checks.checkUrl(url, e.key);
    }
  }
  await checkAlternates(info, (abs) => checks.confineRepoPath(abs, "an object alternate"));
  // Old-style and absorbed submodule git dirs, populated or not (git submodule update enters them).
  for (const gitDir of await submoduleGitDirs(run, info)) {
    if (seen.has(gitDir)) continue;
    seen.add(gitDir);
    const s = await run(
      ["config", "--file", join(gitDir, "config"), "--list", "-z", "--includes", "--show-origin"],
      dir,
    );
    if (s.exitCode !== 0) throw listingFailed(s, "submodule");
    refusalFor(parseConfigList(s.stdout.toString("utf8"), false), "submodule");
  }
  if (info.toplevel === null || depth >= MAX_SUBMODULE_DEPTH) return;
  // Every populated gitlink: git resolves its repository exactly as it would when entering it.
  const hashBytes = entries.some(
    (e) => e.key.toLowerCase() === "extensions.objectformat" && e.value?.toLowerCase() === "sha256",
  )
    ? 32
    : 20;
  const links = await gitlinksOf(run, info, hashBytes);
  const subs: string[] = [];
  for (const rel of links) {
    const sub = join(info.toplevel, rel);
    if (
      await lstat(join(sub, ".git")).then(
        () => true,
        () => false,
      )
    )
      subs.push(sub);
  }
  if (seen.size + subs.length > MAX_SUBMODULES) {
    throw new CcbError(
      "GIT_REFUSED",
      `The repository has more than ${MAX_SUBMODULES} submodules; ccb checks each one's config before it runs git and stops here.`,
    );
  }
  await Promise.all(
    subs.map(async (sub) => {
      const [subInfo, listing] = await Promise.all([repoInfo(run, sub, []), listConfig(run, sub, [])]);
      if (!subInfo || subInfo.toplevel === null || seen.has(subInfo.gitDir)) return;
      seen.add(subInfo.gitDir);
      await checks.confineRepoPath(subInfo.gitDir, "the git directory of a submodule");
      await checks.confineRepoPath(subInfo.commonDir, "the git directory of a submodule");
      await scanRepo(run, sub, [], subInfo, checks, Promise.resolve(listing), "submodule", depth + 1, seen);
    }),
  );
}

/** Gitlink paths of the repository's index (read directly; git is asked only for a split index). */
async function gitlinksOf(run: RunGit, info: RepoInfo, hashBytes: 20 | 32): Promise<string[]> {
  const direct = await indexGitlinks(join(info.gitDir, "index"), hashBytes).catch(() => undefined);
  if (direct !== undefined) return direct;
  const r = await run(["ls-files", "-z", "--stage"], info.toplevel ?? info.gitDir);
  if (r.exitCode !== 0) throw listingFailed(r, "index");
  const out: string[] = [];
  for (const rec of r.stdout.toString("utf8").split("\0")) {
    const tab = rec.indexOf("\t");
    if (rec.startsWith("160000 ") && tab !== -1) out.push(rec.slice(tab + 1));
  }
  return out;
}

/**
 * `includeIf.<condition>.path` files apply only while their condition holds (branch, git dir,
 * remote URL), so the listing above may not show them; scan every such file as if it applied.
 */
async function scanConditionalIncludes(run: RunGit, dir: string, entries: ConfigEntry[], depth: number): Promise<void> {
  if (depth > 3) return;
  for (const e of entries) {
    if (!/^includeif\..+\.path$/i.test(e.key) || !e.value) continue;
    const target = includeTarget(e.value, e.origin, dir);
    if (target === undefined || !(await fileExists(target))) continue;
    const r = await run(["config", "--file", target, "--list", "-z", "--includes", "--show-origin"], dir);
    if (r.exitCode !== 0) throw listingFailed(r, "included");
    const inner = parseConfigList(r.stdout.toString("utf8"), false);
    refusalFor(inner, "repository");
    await scanConditionalIncludes(run, dir, inner, depth + 1);
  }
}

function includeTarget(value: string, origin: string, dir: string): string | undefined {
  if (value.startsWith("~/")) return process.env.HOME ? join(process.env.HOME, value.slice(2)) : undefined;
  if (isAbsolute(value)) return value;
  if (!origin.startsWith("file:")) return undefined;
  const from = origin.slice("file:".length);
  return join(dirname(isAbsolute(from) ? from : join(dir, from)), value);
}

async function isDir(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    return false;
  }
}

/** Git directories of submodules: absorbed ones under `<common>/modules/**`, old-style ones at `.gitmodules` paths. */
async function submoduleGitDirs(run: RunGit, info: RepoInfo): Promise<string[]> {
  const found: string[] = [];
  const walk = async (modules: string, depth: number): Promise<void> => {
    if (depth > 6 || found.length > 500) return;
    let names: string[];
    try {
      names = await readdir(modules);
    } catch {
      return;
    }
    for (const n of names) {
      const d = join(modules, n);
      if (!(await isDir(d))) continue;
      if (await fileExists(join(d, "config"))) {
        found.push(d);
        await walk(join(d, "modules"), depth + 1);
      } else {
        await walk(d, depth + 1); // submodule names may contain slashes
      }
    }
  };
  await walk(join(info.commonDir, "modules"), 0);
  if (info.toplevel && (await fileExists(join(info.toplevel, ".gitmodules")))) {
    const r = await run(
      ["config", "--file", join(info.toplevel, ".gitmodules"), "-z", "--get-regexp", "^submodule\\..*\\.path$"],
      info.toplevel,
    );
    for (const rec of r.stdout.toString("utf8").split("\0")) {
      const nl = rec.indexOf("\n");
      if (nl === -1) continue;
      const p = rec.slice(nl + 1);
      if (p.length === 0 || isAbsolute(p)) continue;
      const d = join(info.toplevel, p, ".git");
      if ((await isDir(d)) && (await fileExists(join(d, "config")))) found.push(d);
    }
  }
  return found;
}

async function fileExists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch {
    return false;
  }
}

/** Object alternates (`objects/info/alternates`) let git read objects of another repository: they must lie in the workspace. */
export async function checkAlternates(info: RepoInfo, check: (abs: string) => Promise<void>): Promise<void> {
  const objects = join(info.commonDir, "objects");
  let text: string;
  try {
    text = await readFile(join(objects, "info", "alternates"), "utf8");
  } catch {
    return;
  }
  for (const line of text.split("\n")) {
    const t = line.trim();
    if (t.length === 0 || t.startsWith("#")) continue;
    await check(isAbsolute(t) ? t : join(objects, t));
  }
}

/**
 * An in-progress rebase or cherry-pick continues from a todo list in the git directory, which a
 * file tool can write: refuse to continue one that holds `exec` lines (ccb refuses `rebase --exec`,
 * so a legitimate todo never has them).
 */
export async function checkSequencerTodo(gitDir: string): Promise<void> {
  for (const f of [join(gitDir, "rebase-merge", "git-rebase-todo"), join(gitDir, "sequencer", "todo")]) {
    let text: string;
    try {
      text = await readFile(f, "utf8");
    } catch {
      continue;
    }
    if (/^\s*(x|exec)(\s|$)/m.test(text)) {
      throw new CcbError(
        "GIT_REFUSED",
        "The in-progress rebase/cherry-pick has `exec` lines in its todo list, which run shell commands.",
        {
          hint: 'Abort it with {{git}} ["rebase", "--abort"] (or cherry-pick --abort), or remove the exec lines.',
        },
      );
    }
  }
}
