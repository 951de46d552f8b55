/**
 * Which arguments of a git subcommand may name files (pure). Every token they return is later
 * resolved inside the workspace (git.ts), so an over-broad answer costs a false refusal at worst;
 * an under-broad one would be an escape, hence the per-subcommand list of free-text options.
 */

/**
 * `--opt=value` values and positional tokens that may name files, plus everything after `--`.
 * Free-text values (messages, patterns, dates) are not paths: their options are known per
 * subcommand, so `-m` skips its value for `commit` but not for `am` (where `-m` is a flag and the
 * next token is a mailbox file).
 */
export function collectPathTokens(sub: string, rest: readonly string[], out: string[]): void {
  const textNext = TEXT_VALUE_OPTIONS[sub] ?? new Set<string>();
  let afterDashDash = false;
  for (let k = 0; k < rest.length; k++) {
    const t = rest[k] as string;
    if (afterDashDash) {
      out.push(t);
      continue;
    }
    if (t === "--") {
      afterDashDash = true;
      continue;
    }
    if (t.startsWith("--")) {
      const eq = t.indexOf("=");
      const name = eq === -1 ? t : t.slice(0, eq);
      if (eq === -1) {
        if (textNext.has(name)) k++; // its separate value is text
        continue;
      }
      if (!textNext.has(name) && !TEXT_ATTACHED_OPTIONS.has(name)) out.push(t.slice(eq + 1));
      continue;
    }
    if (t.startsWith("-") && t.length > 1) {
      if (/^-[a-zA-Z]+$/.test(t) && textNext.has(`-${t.at(-1)}`)) {
        k++; // `-m msg`, `-am msg`
        continue;
      }
      const tail = t.slice(2);
      if (textNext.has(t.slice(0, 2))) continue; // `-mmessage`
      if (tail.includes("/") || tail.includes("\\") || tail.startsWith("..")) out.push(tail);
      continue;
    }
    out.push(t);
  }
}

const LOG_TEXT = [
  "-S",
  "-G",
  "--grep",
  "--author",
  "--committer",
  "--since",
  "--until",
  "--after",
  "--before",
  "--since-as-filter",
];
/** Per subcommand: options whose (separate or attached) value is free text, never a path. */
const TEXT_VALUE_OPTIONS: Readonly<Record<string, ReadonlySet<string>>> = {
  commit: new Set(["-m", "--message", "--author", "--date", "--trailer"]),
  tag: new Set(["-m", "--message"]),
  merge: new Set(["-m", "--message"]),
  stash: new Set(["-m", "--message"]),
  notes: new Set(["-m", "--message"]),
  "commit-tree": new Set(["-m"]),
  "interpret-trailers": new Set(["--trailer"]),
  grep: new Set(["-e"]),
  "format-patch": new Set(["--subject-prefix", ...LOG_TEXT]),
  log: new Set(LOG_TEXT),
  show: new Set(LOG_TEXT),
  whatchanged: new Set(LOG_TEXT),
  shortlog: new Set(LOG_TEXT),
  "rev-list": new Set(LOG_TEXT),
  diff: new Set(["-S", "-G"]),
  "diff-tree": new Set(["-S", "-G"]),
  "diff-index": new Set(["-S", "-G"]),
  "diff-files": new Set(["-S", "-G"]),
};
/** Options whose attached `=value` is free text for every subcommand (formats, patterns). */
const TEXT_ATTACHED_OPTIONS = new Set([
  "--format",
  "--pretty",
  "--grep",
  "--author",
  "--committer",
  "--date",
  "--since",
  "--until",
  "--after",
  "--before",
  "--branches",
  "--tags",
  "--remotes",
  "--glob",
  "--exclude",
  "--ignore-matching-lines",
  "--word-diff-regex",
  "--color-words",
  "--notes",
  "--trailer",
  "--subject-prefix",
  "--message",
]);
