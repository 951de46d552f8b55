import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { scopeMarker } from "../child-env.ts";

/**
 * The fixed environment and the configuration overrides every ccb git process runs with.
 *
 * - Nothing `GIT_*` comes from the user's environment (GIT_DIR, GIT_SSH_COMMAND, GIT_EXTERNAL_DIFF,
 *   GIT_CONFIG_PARAMETERS, ... would all change what runs); only a short allowlist of ordinary
 *   variables (PATH, HOME, locale, proxies, SSH agent) passes.
 * - No system config; the global config is a ccb-owned file holding only a few harmless keys of the
 *   user's own global config (identity, default branch, line endings, pull/push defaults): lower
 *   precedence than the repository, so a repository's own `user.name` still wins.
 * - Programs git could start are fixed: editor and sequence editor `true`, pager `cat`, askpass and
 *   the git:// proxy off, no terminal prompts.
 * - Transports: https, http, ssh and git always; `file` only when the caller asked for it (git's
 *   `user` mode: not for submodules a cloned `.gitmodules` names), never for push and archive;
 *   everything else (ext::, fd::, remote helpers) never. A repository config that sets
 *   `protocol.<name>.allow` is refused (git/keys.ts), since that would beat `protocol.allow`.
 * - git never starts git inside a submodule (where it would read the submodule's own config and
 *   attributes, whose filter/diff/merge drivers have names no override can list in advance):
 *   recursion is off for every command, dirty-submodule checks stop at the submodule's HEAD
 *   (`diff.ignoreSubmodules=dirty`), submodule diffs are one-line summaries, and the status summary
 *   is off. The caller cannot turn these back on (git/args.ts refuses the options and keys);
 *   `.gitmodules` can (`submodule.<name>.ignore`), so ccb also passes `--ignore-submodules=dirty`
 *   to status and diff and vets the config of every populated gitlink (git/preflight.ts).
 * - The attributes file of the user (core.attributesFile) is not read; the system one is off.
 * - Command-line `-c` overrides, placed after the caller's own global options and right before the
 *   subcommand (git: the last `-c` wins, and command-line config beats the repository's
 *   `.git/config`, where a file tool may have planted `core.hooksPath` or `core.fsmonitor`).
 *   They also reach git processes started for submodules.
 */

export const NULL_DEVICE = process.platform === "win32" ? "NUL" : "/dev/null";

/** Network protocols git may always use. */
export const NETWORK_PROTOCOLS = ["git", "http", "https", "ssh"] as const;

const PASS_ENV = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "LANG",
  "LANGUAGE",
  "TZ",
  "TMPDIR",
  "TEMP",
  "TMP",
  "SSH_AUTH_SOCK",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "ALL_PROXY",
  "all_proxy",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  // Windows
  "SYSTEMROOT",
  "SystemRoot",
  "COMSPEC",
  "ComSpec",
  "PATHEXT",
  "WINDIR",
  "windir",
  "USERPROFILE",
  "APPDATA",
  "LOCALAPPDATA",
  "HOMEDRIVE",
  "HOMEPATH",
];

/** Keys of the user's global config that ccb carries over (none of them can run anything). */
export const GLOBAL_KEYS_KEPT = new Set([
  "user.name",
  "user.email",
  "init.defaultbranch",
  "core.autocrlf",
  "core.eol",
  "core.safecrlf",
  "pull.rebase",
  "pull.ff",
  "push.default",
  "push.autosetupremote",
  "fetch.prune",
  "merge.conflictstyle",
  "diff.algorithm",
  "rerere.enabled",
  "core.quotepath",
]);

/**
 * The `-c` overrides, as `key=value` strings. `noFileProtocol` for push and archive: a local push
 * runs the target repository's hooks, `archive --remote` its tar filters, in a process that does
 * not inherit these overrides.
 */
export function configOverrides(options: { noFileProtocol?: boolean } = {}): string[] {
  return [
    "protocol.allow=never",
    ...NETWORK_PROTOCOLS.map((p) => `protocol.${p}.allow=always`),
    `protocol.file.allow=${options.noFileProtocol ? "never" : "user"}`,
    `core.hooksPath=${NULL_DEVICE}`,
    "core.fsmonitor=false",
    "core.sshCommand=ssh -o BatchMode=yes",
    "core.pager=cat",
    "core.editor=true",
    "core.askPass=",
    "credential.helper=",
    "sequence.editor=true",
    "gpg.program=gpg",
    "gpg.openpgp.program=gpg",
    "gpg.x509.program=gpgsm",
    "gpg.ssh.program=ssh-keygen",
    "color.ui=false",
    `core.attributesFile=${NULL_DEVICE}`,
    "submodule.recurse=false",
    "diff.ignoreSubmodules=dirty",
    "diff.submodule=short",
    "status.submoduleSummary=false",
    "fetch.recurseSubmodules=false",
    "push.recurseSubmodules=no",
  ];
}

export interface EnvOptions {
  /** The ccb-owned global config file. */
  globalConfig: string;
  /** Directories git must not search above (the parent of the workspace root). */
  ceiling?: string;
  source?: NodeJS.ProcessEnv;
}

export function gitEnv(options: EnvOptions): Record<string, string> {
  const source = options.source ?? process.env;
  const env: Record<string, string> = {};
  for (const k of PASS_ENV) {
    const v = source[k];
    if (v !== undefined) env[k] = v;
  }
  for (const [k, v] of Object.entries(source)) if (k.startsWith("LC_") && v !== undefined) env[k] = v;
  // ccb's containment marker (src/platform/supervisor.ts): whatever git starts is found at exit.
  const scope = scopeMarker();
  if (scope) env[scope[0]] = scope[1];
  Object.assign(env, {
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: options.globalConfig,
    GIT_ATTR_NOSYSTEM: "1",
    GIT_TERMINAL_PROMPT: "0",
    GIT_EDITOR: "true",
    GIT_SEQUENCE_EDITOR: "true",
    GIT_PAGER: "cat",
    PAGER: "cat",
    GIT_ASKPASS: "",
    GIT_PROXY_COMMAND: "",
    TERM: "dumb",
  });
  if (options.ceiling) env.GIT_CEILING_DIRECTORIES = options.ceiling;
  return env;
}

/** The parent of a workspace root, for GIT_CEILING_DIRECTORIES (none for a filesystem root). */
export function ceilingFor(root: string): string | undefined {
  const parent = dirname(root);
  return parent === root ? undefined : parent;
}

let globalConfigPromise: Promise<string> | undefined;
let globalConfigDir: string | undefined;

/**
 * Create (once per process) the ccb-owned global config file with the kept keys of the user's own
 * global config. Removed when the process exits.
 */
export function ccbGlobalConfig(gitPath: string): Promise<string> {
  globalConfigPromise ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), "ccb-git-"));
    globalConfigDir = dir;
    process.once("exit", () => {
      if (globalConfigDir) rmSync(globalConfigDir, { recursive: true, force: true });
    });
    const file = join(dir, "gitconfig");
    writeFileSync(file, "", { mode: 0o600 });
    const kept = await readUserGlobal(gitPath);
    for (const [key, value] of kept) {
      await new Promise<void>((resolve) => {
        execFile(
          gitPath,
          ["config", "--file", file, "--add", key, value],
          { env: gitEnv({ globalConfig: NULL_DEVICE }) },
          () => resolve(),
        );
      });
    }
    return file;
  })();
  return globalConfigPromise;
}

/** The kept keys of the user's own global config (read, never executed; errors mean none). */
function readUserGlobal(gitPath: string): Promise<[string, string][]> {
  const env = gitEnv({ globalConfig: NULL_DEVICE });
  delete env.GIT_CONFIG_GLOBAL;
  if (process.env.GIT_CONFIG_GLOBAL) env.GIT_CONFIG_GLOBAL = process.env.GIT_CONFIG_GLOBAL;
  if (process.env.XDG_CONFIG_HOME) env.XDG_CONFIG_HOME = process.env.XDG_CONFIG_HOME;
  return new Promise((resolve) => {
    execFile(
      gitPath,
      ["config", "--global", "--includes", "-z", "--list"],
      { env, cwd: tmpdir(), maxBuffer: 1 << 20 },
      (err, stdout) => {
        if (err) return resolve([]);
        const out: [string, string][] = [];
        for (const rec of stdout.split("\0")) {
          const nl = rec.indexOf("\n");
          if (nl === -1) continue;
          const key = rec.slice(0, nl);
          if (GLOBAL_KEYS_KEPT.has(key.toLowerCase())) out.push([key, rec.slice(nl + 1)]);
        }
        resolve(out);
      },
    );
  });
}
