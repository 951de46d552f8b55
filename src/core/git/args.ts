import { CcbError } from "../errors.ts";
import {
  isLocalUrl,
  isPathValuedKey,
  pathOfValue,
  sectionCouldHoldRefusedKey,
  urlOfKey,
  userKeyRefusal,
} from "./keys.ts";
import { collectPathTokens } from "./paths.ts";

/**
 * The argument policy of `git_run`: split the caller's argument array into git's global options and
 * the subcommand, refuse what can run programs or escape the workspace, and name the tokens that
 * must be confined as paths. Pure: no processes, no file system.
 */

export interface ParsedGitArgs {
  /** Global options as given (after checks), e.g. `-C sub`, `--no-pager`, `-c k=v`. */
  global: string[];
  /** The global options that choose the repository (`-C`, `--git-dir`, `--work-tree`, `--bare`), for the preflight. */
  repoSelect: string[];
  /** The subcommand, or null for `git --version` style calls. */
  sub: string | null;
  /** Arguments after the subcommand. */
  rest: string[];
  /** Tokens (or option values) that name files: each must resolve inside the workspace. */
  pathTokens: string[];
  /** Values of `-C` (they change the directory the following path arguments are relative to). */
  chdirs: string[];
}

function refuse(message: string, hint?: string): never {
  throw new CcbError("GIT_REFUSED", message, {
    hint:
      hint ??
      "Run this in a terminal ({{terminal}}) if you really need it; git here keeps hooks, external programs and paths outside the workspace out of reach.",
  });
}

/** Subcommands refused outright, with the reason. */
export const REFUSED_SUBCOMMANDS: Readonly<Record<string, string>> = {
  difftool: "runs an external diff program",
  mergetool: "runs an external merge program",
  "filter-branch": "runs shell filters by design",
  daemon: "starts a network server",
  instaweb: "starts a web server and a browser",
  "web--browse": "starts a browser",
  help: "opens manuals in a pager or browser",
  credential: "reads and stores credentials",
  "credential-cache": "reads and stores credentials",
  "credential-cache--daemon": "reads and stores credentials",
  "credential-store": "reads and stores credentials",
  "send-email": "runs a mailer",
  "imap-send": "can run a tunnel program",
  "upload-pack": "server side of a transport",
  "receive-pack": "server side of a transport; runs the target repository's hooks",
  "upload-archive": "server side of a transport",
  "upload-archive--writer": "server side of a transport",
  shell: "a login shell for git servers",
  "http-backend": "server side of a transport",
  "http-fetch": "transport internals",
  "http-push": "transport internals",
  "fsmonitor--daemon": "starts a background daemon",
  hook: "runs hooks, which ccb disables",
  "merge-index": "runs an arbitrary merge program",
  "merge-one-file": "helper of merge-index",
  "for-each-repo": "runs git in repositories listed in config, possibly outside the workspace",
  "sh-i18n--envsubst": "internal helper",
  "sh-setup": "internal helper",
  p4: "runs external tools",
  svn: "runs external tools",
  cvsimport: "runs external tools",
  cvsserver: "runs a server",
  cvsexportcommit: "runs external tools",
  archimport: "runs external tools",
};

const GLOBAL_FLAGS = new Set([
  "-p",
  "--paginate",
  "-P",
  "--no-pager",
  "--no-replace-objects",
  "--bare",
  "--literal-pathspecs",
  "--glob-pathspecs",
  "--noglob-pathspecs",
  "--icase-pathspecs",
  "--no-optional-locks",
  "--no-lazy-fetch",
  "--no-advice",
  "--html-path",
  "--man-path",
  "--info-path",
  "--version",
  "-v",
  "-h",
  "--exec-path",
]);
const GLOBAL_WITH_VALUE = new Set(["-C", "--git-dir", "--work-tree", "--namespace", "--list-cmds", "--attr-source"]);
const MERGE_STRATEGIES = new Set(["ort", "recursive", "resolve", "octopus", "ours", "subtree"]);
const PATH_VALUE_OPTIONS = new Set(["-C", "--git-dir", "--work-tree"]);

/**
 * Refuse a dangerous key; a local-path URL value (or url.<base> base) and the value of a
 * path-valued key (commit.template, blame.ignoreRevsFile, ...) become path tokens to confine.
 */
function checkConfigAssignment(assignment: string, via: string, pathTokens: string[]): void {
  const eq = assignment.indexOf("=");
  const key = eq === -1 ? assignment : assignment.slice(0, eq);
  const value = eq === -1 ? null : assignment.slice(eq + 1);
  const why = userKeyRefusal(key);
  if (why) refuse(`Refused ${via} ${key}: it ${why}.`);
  const url = urlOfKey(key, value);
  if (url !== undefined && isLocalUrl(url)) pathTokens.push(url);
  if (isPathValuedKey(key)) {
    const p = pathOfValue(key, value);
    if (p !== undefined) pathTokens.push(p.startsWith("~") ? `${process.env.HOME ?? "/"}${p.slice(1)}` : p);
  }
}

/** Split the caller's arguments and apply the policy. Throws GIT_REFUSED. */
export function parseGitArgs(args: readonly string[]): ParsedGitArgs {
  for (const a of args) {
    if (typeof a !== "string") refuse("Every git argument must be a string.");
    if (a.includes("\0")) throw new CcbError("INVALID_ARGUMENT", "A git argument contains a NUL byte.");
  }
  const global: string[] = [];
  const repoSelect: string[] = [];
  const pathTokens: string[] = [];
  const chdirs: string[] = [];
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i] as string;
    if (!a.startsWith("-")) break;
    if (a === "--help")
      refuse(
        "Refused --help: it opens a manual in a pager or browser.",
        "Use `-h` after the subcommand for a usage summary.",
      );
    if (a === "-c" || a.startsWith("-c")) {
      const value = a === "-c" ? args[++i] : a.slice(2);
      if (value === undefined) refuse("-c needs a key=value argument.");
      checkConfigAssignment(value, "-c", pathTokens);
      global.push("-c", value);
      continue;
    }
    if (a === "--config-env" || a.startsWith("--config-env=")) {
      const value = a === "--config-env" ? args[++i] : a.slice("--config-env=".length);
      if (value !== undefined) checkConfigAssignment(value, "--config-env", pathTokens);
      refuse(
        "Refused --config-env: ccb runs git with a fixed environment, so there is nothing to read from it.",
        "Pass the value directly with -c key=value (keys that run programs are refused either way).",
      );
    }
    if (a.startsWith("--exec-path=")) refuse("Refused --exec-path=<dir>: it changes where git finds its own programs.");
    if (a.startsWith("--super-prefix")) refuse("Refused --super-prefix: internal option.");
    if (GLOBAL_FLAGS.has(a)) {
      global.push(a);
      if (a === "--bare") repoSelect.push(a);
      continue;
    }
    const eq = a.indexOf("=");
    const name = eq === -1 ? a : a.slice(0, eq);
    if (GLOBAL_WITH_VALUE.has(name) && (eq === -1 || name.startsWith("--"))) {
      const value = eq === -1 ? args[++i] : a.slice(eq + 1);
      if (value === undefined) refuse(`${name} needs a value.`);
      if (PATH_VALUE_OPTIONS.has(name)) {
        pathTokens.push(value);
        repoSelect.push(name, value);
        if (name === "-C") chdirs.push(value);
      }
      global.push(name, value);
      continue;
    }
    refuse(`Unknown or refused global option ${a}.`, 'Put options after the subcommand, e.g. ["log", "--oneline"].');
  }
  const sub = i < args.length ? (args[i] as string) : null;
  const rest = args.slice(i + 1) as string[];
  if (sub !== null) checkSubcommand(sub, rest, pathTokens);
  return { global, repoSelect, sub, rest, pathTokens, chdirs };
}

/** Short-option letters of a cluster like `-abc`, stopping at the first letter that takes a value. */
function shortLetters(token: string, valueLetters: string): string[] {
  if (!token.startsWith("-") || token.startsWith("--") || token.length < 2) return [];
  const out: string[] = [];
  for (const ch of token.slice(1)) {
    out.push(ch);
    if (valueLetters.includes(ch)) break;
  }
  return out;
}

/**
 * The first token before `--` that names one of `names` (long options; git's parse-options accepts
 * any unambiguous prefix, so `--upload-p=x` counts as `--upload-pack=x`).
 */
function hasLongOption(rest: readonly string[], names: readonly string[]): string | undefined {
  for (const t of beforeDashDash(rest)) {
    const n = longName(t);
    if (n === undefined) continue;
    const hit = names.find((name) => name === n || (n.length >= 3 && name.startsWith(n)));
    if (hit) return hit;
  }
  return undefined;
}

function longName(t: string): string | undefined {
  if (!t.startsWith("--") || t === "--") return undefined;
  const eq = t.indexOf("=");
  return eq === -1 ? t : t.slice(0, eq);
}

function beforeDashDash(rest: readonly string[]): readonly string[] {
  const k = rest.indexOf("--");
  return k === -1 ? rest : rest.slice(0, k);
}

/** Positional arguments before `--` (a rough cut: options taking a separate value are not skipped). */
function positionals(rest: readonly string[]): string[] {
  const out: string[] = [];
  for (const t of rest) {
    if (t === "--") break;
    if (!t.startsWith("-")) out.push(t);
  }
  return out;
}

function checkSubcommand(sub: string, rest: string[], pathTokens: string[]): void {
  const why = REFUSED_SUBCOMMANDS[sub];
  if (why) refuse(`Refused git ${sub}: it ${why}.`);
  if (sub.startsWith("remote-")) refuse(`Refused git ${sub}: remote helpers are transport internals.`);
  if (sub.includes("--")) refuse(`Refused git ${sub}: internal helper.`);
  if (!/^[a-z][a-z0-9-]*$/.test(sub)) refuse(`Not a git subcommand: ${sub}.`);
  if (rest[0] === "--help")
    refuse("Refused --help: it opens a manual in a pager or browser.", "Use `-h` for a usage summary.");

  const transport = hasLongOption(rest, ["--upload-pack", "--receive-pack", "--exec"]);
  if (transport) refuse(`Refused ${transport}: it names a program to run.`);
  checkSubmoduleRecursion(sub, rest);

  // Tokens after `--` are pathspecs; before it, any token may be a path (checked leniently by the caller).
  collectPathTokens(sub, rest, pathTokens);

  switch (sub) {
    case "config":
      checkConfigCommand(rest, pathTokens);
      break;
    case "clone":
    case "init":
    case "init-db": {
      if (hasLongOption(rest, ["--template"]))
        refuse("Refused --template: a template directory plants hooks and config.");
      if (sub === "clone") {
        if (beforeDashDash(rest).some((t) => shortLetters(t, "obucj").includes("u")))
          refuse("Refused clone -u: it names a program to run.");
        const pre = beforeDashDash(rest);
        for (let k = 0; k < pre.length; k++) {
          const t = pre[k] as string;
          const n = longName(t);
          if (n !== undefined && n.length >= 3 && "--config".startsWith(n)) {
            const eq = t.indexOf("=");
            checkConfigAssignment(eq === -1 ? (pre[k + 1] ?? "") : t.slice(eq + 1), "clone --config", pathTokens);
          } else if (shortLetters(t, "obucj").at(-1) === "c") {
            const attached = t.slice(t.indexOf("c") + 1);
            checkConfigAssignment(attached.length > 0 ? attached : (pre[k + 1] ?? ""), "clone -c", pathTokens);
          }
        }
      }
      break;
    }
    case "ls-remote":
      if (beforeDashDash(rest).some((t) => shortLetters(t, "u").includes("u")))
        refuse("Refused ls-remote -u: it names a program to run.");
      break;
    case "rebase":
      if (beforeDashDash(rest).some((t) => shortLetters(t, "xsXC").includes("x"))) {
        refuse("Refused rebase --exec/-x: it runs a shell command for every commit.");
      }
      checkStrategies(rest, "sXCx");
      break;
    case "merge":
    case "pull":
    case "cherry-pick":
    case "revert":
      checkStrategies(rest, sub === "merge" || sub === "pull" ? "sXmFo" : "sXm");
      break;
    case "bisect":
      if (positionals(rest)[0] === "run") refuse("Refused bisect run: it runs a command for every step.");
      break;
    case "submodule":
      if (positionals(rest).includes("foreach"))
        refuse("Refused submodule foreach: it runs a shell command in every submodule.");
      break;
    case "grep":
      if (
        hasLongOption(rest, ["--open-files-in-pager"]) ||
        beforeDashDash(rest).some((t) => shortLetters(t, "efABCmO").includes("O"))
      ) {
        refuse("Refused grep -O/--open-files-in-pager: it runs a pager program.");
      }
      break;
    case "maintenance":
      if (["start", "stop", "register", "unregister"].includes(positionals(rest)[0] ?? "")) {
        refuse(
          "Refused git maintenance start/stop/register/unregister: they change the user's scheduler and global config.",
        );
      }
      break;
    case "add":
    case "stage":
    case "checkout":
    case "restore":
    case "reset":
    case "stash":
    case "clean":
    case "commit": {
      const interactive = sub === "commit" ? ["--patch", "--interactive"] : ["--patch", "--interactive", "--edit"];
      const letters = sub === "commit" ? "p" : sub === "clean" ? "i" : sub === "add" || sub === "stage" ? "pie" : "p";
      const valueLetters =
        sub === "commit" ? "mFCctSu" : sub === "clean" ? "e" : sub === "checkout" ? "bB" : sub === "stash" ? "m" : "s";
      const shortHit = beforeDashDash(rest).some((t) => shortLetters(t, valueLetters).some((c) => letters.includes(c)));
      if (hasLongOption(rest, interactive) || shortHit) {
        refuse(
          `Refused interactive git ${sub}: it needs a terminal.`,
          "Name the paths instead, or run it in a terminal ({{terminal}}).",
        );
      }
      break;
    }
    default:
      break;
  }
}

/**
 * Options that make git start git inside submodules (which reads the submodule's own config and
 * attributes, hence drivers ccb cannot neutralise by name): recursion, inline submodule diffs,
 * dirty checks. `clone --recurse-submodules` stays allowed: the submodules it clones are new
 * repositories whose config git itself writes.
 */
function checkSubmoduleRecursion(sub: string, rest: readonly string[]): void {
  for (const t of beforeDashDash(rest)) {
    const n = longName(t);
    if (n === undefined) continue;
    const value = t.includes("=") ? t.slice(t.indexOf("=") + 1).toLowerCase() : undefined;
    if (
      n.length >= 5 &&
      "--recurse-submodules".startsWith(n) &&
      sub !== "clone" &&
      !["no", "false", "off"].includes(value ?? "")
    ) {
      refuse(
        "Refused --recurse-submodules: git would run inside each submodule with that submodule's own config and drivers.",
        'Run the command inside the submodule instead (cwd: "<submodule path>"), where ccb checks that repository first.',
      );
    }
    if (n === "--submodule" && value === "diff") {
      refuse(
        "Refused --submodule=diff: it runs git diff inside each submodule, with that submodule's own config and drivers.",
        "Use --submodule=log, or run {{gitDiff}} with path set to the submodule.",
      );
    }
    if (n.length >= 10 && "--ignore-submodules".startsWith(n) && (value === "none" || value === "untracked")) {
      refuse(
        `Refused --ignore-submodules=${value}: the dirty check runs git status inside each submodule, with that submodule's own config and drivers.`,
        "Run {{gitStatus}} with path set to the submodule.",
      );
    }
  }
}

function checkStrategies(rest: readonly string[], valueLetters: string): void {
  for (let k = 0; k < rest.length; k++) {
    const t = rest[k] as string;
    if (t === "--") break;
    let value: string | undefined;
    const n = longName(t);
    if (t === "-s") value = rest[k + 1];
    else if (n !== undefined && n.length >= 6 && "--strategy".startsWith(n)) {
      const eq = t.indexOf("=");
      value = eq === -1 ? rest[k + 1] : t.slice(eq + 1);
    } else if (shortLetters(t, valueLetters).at(-1) === "s") {
      const attached = t.slice(t.indexOf("s") + 1);
      value = attached.length > 0 ? attached : rest[k + 1];
    }
    if (value !== undefined && !MERGE_STRATEGIES.has(value)) {
      refuse(
        `Refused merge strategy ${value}: only the built-in strategies (${[...MERGE_STRATEGIES].join(", ")}) are allowed.`,
      );
    }
  }
}

/** Long options of `git config` that take a separate value (git accepts unambiguous prefixes). */
const CONFIG_VALUE_OPTIONS = ["--file", "--blob", "--type", "--default", "--comment", "--value"];

function checkConfigCommand(rest: readonly string[], pathTokens: string[]): void {
  const set = new Set(rest);
  const positional: string[] = [];
  for (let k = 0; k < rest.length; k++) {
    const t = rest[k] as string;
    if (t === "-f") {
      k++;
      continue;
    }
    if (t.startsWith("--") && !t.includes("=") && t.length >= 3 && CONFIG_VALUE_OPTIONS.some((o) => o.startsWith(t))) {
      k++;
      continue;
    }
    if (!t.startsWith("-")) positional.push(t);
  }
  const newStyle = ["set", "get", "unset", "list", "edit", "rename-section", "remove-section"].includes(
    positional[0] ?? "",
  );
  const action = newStyle ? (positional[0] as string) : undefined;
  const args = newStyle ? positional.slice(1) : positional;
  const writesGlobal = set.has("--global") || set.has("--system");
  const isRead =
    action === "get" ||
    action === "list" ||
    ["--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "-l", "--list"].some(
      (f) => set.has(f),
    );
  const isRemove =
    action === "unset" ||
    action === "remove-section" ||
    ["--unset", "--unset-all", "--remove-section"].some((f) => set.has(f));
  if (action === "edit" || set.has("--edit") || set.has("-e"))
    refuse("Refused git config --edit: it needs an editor.", 'Set single keys with ["config", "key", "value"].');
  if (isRead) return;
  if (writesGlobal)
    refuse(
      "Refused writing --global/--system git config: ccb only changes repository config.",
      "Change your global config in a terminal.",
    );
  if (isRemove) return;
  if (action === "rename-section" || set.has("--rename-section")) {
    for (const s of args)
      if (sectionCouldHoldRefusedKey(s))
        refuse(`Refused renaming a config section to or from ${s}: it could hold keys that run programs.`);
    return;
  }
  // A write: `config key value`, `--add key value`, `--replace-all key value`, `set key value`.
  // Any positional that names a refused key refuses the write, whatever option parsing put it there.
  for (const p of positional) {
    const why = userKeyRefusal(p);
    if (why) refuse(`Refused git config ${p}: it ${why}.`);
  }
  const key = args[0];
  if (key !== undefined && args.length >= 2) checkConfigAssignment(`${key}=${args[1]}`, "git config", pathTokens);
}
