/**
 * Which git configuration keys ccb refuses, and why.
 *
 * Two lists, because a key can reach git in two ways:
 * - from the caller (`-c`, `--config-env`, `git config <key> <value>`, `clone -c`): every key that
 *   can make git run a program, read or write outside the workspace, or weaken ccb's own overrides
 *   is refused (USER_REFUSED_KEYS);
 * - from a config file a file tool may have planted (the repository's `.git/config`, its includes,
 *   `config.worktree`, submodule configs): keys that ccb neutralises on every invocation (hooks,
 *   fsmonitor, editor, pager, ... see `git/env.ts`) are harmless there; the rest of the dangerous
 *   keys cannot be neutralised by a command-line override (their names are open-ended, or an empty
 *   value would silently change results), so git is not run while they are present
 *   (REPO_REFUSED_KEYS) and the caller is told how to remove them.
 *
 * Deliberately allowed: `url.<base>.insteadOf` / `pushInsteadOf` and `http.proxy` / `remote.*.proxy`.
 * They name hosts, not programs; the protocols git may use are fixed by ccb's `protocol.*.allow`
 * overrides (git/env.ts), so a rewrite to `ext::` or `fd::` fails, and a planted remote
 * URL could already send traffic anywhere. Refusing them would break ordinary corporate setups.
 */

export interface KeyRule {
  /** Matches the lower-cased key (`section.subsection.name`). */
  re: RegExp;
  /** Shown to the caller. */
  why: string;
}

const RUNS = "runs a program";

/** Keys refused when they come from the caller, in any scope. */
export const USER_REFUSED_KEYS: readonly KeyRule[] = [
  { re: /^core\.hookspath$/, why: "would re-enable hooks, which ccb disables" },
  { re: /^core\.fsmonitor$/, why: `${RUNS} (fsmonitor hook) at every status` },
  { re: /^core\.sshcommand$/, why: RUNS },
  { re: /^core\.pager$/, why: RUNS },
  { re: /^core\.editor$/, why: RUNS },
  { re: /^core\.askpass$/, why: RUNS },
  { re: /^core\.gitproxy$/, why: RUNS },
  { re: /^core\.alternaterefscommand$/, why: RUNS },
  { re: /^core\.worktree$/, why: "can point the work tree outside the workspace" },
  { re: /^credential\.(.+\.)?helper$/, why: `${RUNS} (credential helper)` },
  { re: /^diff\.external$/, why: RUNS },
  { re: /^diff\..+\.(command|textconv)$/, why: RUNS },
  { re: /^diff\.(guitool|tool)$/, why: "selects a difftool program" },
  { re: /^difftool\..+\.(cmd|path)$/, why: RUNS },
  { re: /^merge\.(guitool|tool)$/, why: "selects a mergetool program" },
  { re: /^mergetool\..+\.(cmd|path)$/, why: RUNS },
  { re: /^merge\..+\.driver$/, why: `${RUNS} (merge driver)` },
  { re: /^filter\..+\.(clean|smudge|process)$/, why: `${RUNS} (filter driver)` },
  { re: /^gpg\.program$/, why: RUNS },
  { re: /^gpg\..+\.program$/, why: RUNS },
  { re: /^gpg\.ssh\.defaultkeycommand$/, why: RUNS },
  { re: /^sequence\.editor$/, why: RUNS },
  { re: /^alias\./, why: "aliases can run shell commands" },
  { re: /^include\.path$/, why: "includes a config file that may set any of these keys" },
  { re: /^includeif\..+\.path$/, why: "includes a config file that may set any of these keys" },
  { re: /^protocol\.(.+\.)?allow$/, why: "would allow transports such as ext:: that run programs" },
  { re: /^remote\..+\.(uploadpack|receivepack)$/, why: `${RUNS} for local remotes` },
  { re: /^remote\..+\.vcs$/, why: "selects a remote-helper program" },
  { re: /^uploadpack\.packobjectshook$/, why: RUNS },
  { re: /^pager\./, why: RUNS },
  { re: /^web\.browser$/, why: RUNS },
  { re: /^browser\..+\.(cmd|path)$/, why: RUNS },
  { re: /^man\.(viewer|.+\.(cmd|path))$/, why: RUNS },
  { re: /^interactive\.difffilter$/, why: RUNS },
  { re: /^submodule\..+\.update$/, why: "`!command` update modes run a program" },
  { re: /^init\.templatedir$/, why: "copies hooks and config from a template directory" },
  { re: /^safe\.directory$/, why: "would disable git's repository-ownership protection" },
  { re: /^trace2\./, why: "writes trace files outside the workspace" },
  { re: /^sendemail\./, why: "configures programs for send-email" },
  { re: /^imap\.tunnel$/, why: RUNS },
  { re: /^tar\..+\.command$/, why: `${RUNS} (archive compressor)` },
  { re: /^hook\./, why: "defines hooks in config (newer git), which ccb disables" },
  { re: /^guitool\./, why: RUNS },
  { re: /^http\.(.+\.)?cookiefile$/, why: "makes git read and write a cookie file anywhere" },
  { re: /^format\.outputdirectory$/, why: "makes format-patch write outside the workspace" },
  {
    re: /^submodule\.(recurse|.+\.ignore|.+\.fetchrecursesubmodules)$/,
    why: "would make git start git inside submodules, whose own config ccb keeps out of play",
  },
  {
    re: /^(diff\.ignoresubmodules|diff\.submodule|status\.submodulesummary|fetch\.recursesubmodules|push\.recursesubmodules)$/,
    why: "would make git start git inside submodules, whose own config ccb keeps out of play",
  },
];

/**
 * Keys whose value is the path of a file git reads (or writes). A value from the caller, or from a
 * repository config file, must resolve inside the workspace to a file that is not hard-linked;
 * relative values resolve against the directory git runs in, `~/` against HOME (outside).
 */
export const PATH_VALUED_KEYS: readonly RegExp[] = [
  /^commit\.template$/,
  /^blame\.ignorerevsfile$/,
  /^core\.(excludesfile|attributesfile)$/,
  /^mailmap\.file$/,
  /^diff\.orderfile$/,
  /^format\.signaturefile$/,
  /^gpg\.ssh\.(allowedsignersfile|revocationfile)$/,
  /^user\.signingkey$/,
  /^http\.(.+\.)?ssl(cert|key|cainfo|capath)$/,
  /^(fsck|fetch\.fsck|receive\.fsck)\.skiplist$/,
];

/** Whether `key`'s value names a file (see PATH_VALUED_KEYS). */
export function isPathValuedKey(key: string): boolean {
  const k = key.trim().toLowerCase();
  return PATH_VALUED_KEYS.some((re) => re.test(k));
}

/**
 * The file a path-valued key names, or undefined when the value is not a file name (an inline
 * `user.signingKey` such as `key::ssh-ed25519 ...` or a GPG key id).
 */
export function pathOfValue(key: string, value: string | null): string | undefined {
  if (value === null || value.trim() === "") return undefined;
  if (/^user\.signingkey$/i.test(key.trim()) && !/[/\\~]/.test(value)) return undefined;
  if (/^key::/.test(value)) return undefined;
  return value;
}

/**
 * Keys that make ccb refuse to run git while they are present in a config file of the repository
 * (or of one of its submodules). Everything else of USER_REFUSED_KEYS is either overridden on every
 * invocation or only used by subcommands ccb refuses anyway.
 */
export const REPO_REFUSED_KEYS: readonly KeyRule[] = [
  { re: /^core\.alternaterefscommand$/, why: RUNS },
  { re: /^credential\..+\.helper$/, why: `${RUNS} (URL-specific credential helper)` },
  { re: /^diff\.external$/, why: RUNS },
  { re: /^diff\..+\.(command|textconv)$/, why: RUNS },
  { re: /^merge\..+\.driver$/, why: `${RUNS} (merge driver)` },
  { re: /^filter\..+\.(clean|smudge|process)$/, why: `${RUNS} (filter driver)` },
  { re: /^gpg\.ssh\.defaultkeycommand$/, why: RUNS },
  { re: /^remote\..+\.(uploadpack|receivepack)$/, why: `${RUNS} for local remotes` },
  { re: /^remote\..+\.vcs$/, why: "selects a remote-helper program" },
  {
    re: /^protocol\..+\.allow$/,
    why: "allows a transport (such as ext::, which runs programs) over ccb's protocol policy",
  },
  { re: /^interactive\.difffilter$/, why: RUNS },
  { re: /^tar\..+\.command$/, why: `${RUNS} (archive compressor)` },
  { re: /^hook\..+\.(command|event)$/, why: "defines hooks in config (newer git), which ccb disables" },
  { re: /^http\.(.+\.)?cookiefile$/, why: "makes git read and write a cookie file anywhere" },
  { re: /^format\.outputdirectory$/, why: "makes format-patch write outside the workspace" },
];

/** Config keys whose value (or, for url.<base>.insteadOf, whose base) is a URL that may name a local path. */
export function urlOfKey(key: string, value: string | null): string | undefined {
  const k = key.toLowerCase();
  if (/^(remote\..+\.(url|pushurl)|submodule\..+\.url)$/.test(k)) return value ?? undefined;
  const m = /^url\.(.+)\.(insteadof|pushinsteadof)$/i.exec(key);
  return m ? m[1] : undefined;
}

/**
 * Whether a URL names the local file system (git's own rule: `file://`, or no `:` before the
 * first `/`, so `host:path` and `scheme://` are remote).
 */
export function isLocalUrl(url: string): boolean {
  if (/^file:\/\//i.test(url)) return true;
  if (/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(url)) return false;
  if (/^[a-zA-Z][a-zA-Z0-9+.-]*::/.test(url)) return false; // transport::address (remote helpers)
  if (/^[a-zA-Z]:[\\/]/.test(url)) return true; // DOS drive
  const colon = url.indexOf(":");
  const slash = url.indexOf("/");
  return colon === -1 || (slash !== -1 && slash < colon);
}

/** Reason a caller-supplied key is refused key is refused, or undefined when it is allowed. */
export function userKeyRefusal(key: string): string | undefined {
  const k = key.trim().toLowerCase();
  return USER_REFUSED_KEYS.find((r) => r.re.test(k))?.why;
}

/** Reason a key found in a repository config file blocks git, or undefined. */
export function repoKeyRefusal(key: string, value: string | null): string | undefined {
  const k = key.toLowerCase();
  if (/^submodule\..+\.update$/.test(k)) {
    return value?.trimStart().startsWith("!") ? "`!command` update mode runs a program" : undefined;
  }
  return REPO_REFUSED_KEYS.find((r) => r.re.test(k))?.why;
}

/**
 * Sections under which a renamed section could hold a refused key (`git config --rename-section`).
 */
export function sectionCouldHoldRefusedKey(section: string): boolean {
  const s = section.trim().toLowerCase();
  const probes = [
    "x",
    "x.command",
    "x.textconv",
    "x.driver",
    "x.clean",
    "x.smudge",
    "x.process",
    "x.helper",
    "x.program",
    "x.cmd",
    "x.path",
    "x.update",
    "x.uploadpack",
    "x.receivepack",
    "x.vcs",
    "hookspath",
    "fsmonitor",
    "sshcommand",
    "pager",
    "editor",
    "askpass",
    "gitproxy",
    "worktree",
    "alternaterefscommand",
    "helper",
    "external",
    "program",
    "path",
    "allow",
    "browser",
    "viewer",
    "templatedir",
    "directory",
    "difffilter",
    "packobjectshook",
    "tunnel",
    "defaultkeycommand",
  ];
  return probes.some((p) => userKeyRefusal(`${s}.${p}`) !== undefined);
}
