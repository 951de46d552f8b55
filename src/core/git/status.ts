/** Parser of `git status --porcelain=v2 --branch -z` (pure). */

export type GitEntryKind = "changed" | "renamed" | "copied" | "unmerged" | "untracked" | "ignored";

export interface ParsedEntry {
  /** Path relative to the repository root, `/`-separated. */
  path: string;
  /** Index (staged) status letter: `.` unchanged, M, T, A, D, R, C, U; `?` untracked, `!` ignored. */
  index: string;
  /** Work-tree (unstaged) status letter, same alphabet. */
  worktree: string;
  /** For renames and copies: the path before. */
  origPath?: string;
  kind: GitEntryKind;
  /** Rename/copy similarity score (0-100). */
  score?: number;
  /** True for a submodule. */
  submodule?: boolean;
}

export interface ParsedStatus {
  oid: string | null;
  branch: string | null;
  detached: boolean;
  upstream: string | null;
  ahead: number;
  behind: number;
  entries: ParsedEntry[];
}

/** Split "a b c rest" into the first `n` space-separated fields and the remainder (a path may contain spaces). */
function fields(line: string, n: number): { f: string[]; rest: string } {
  const f: string[] = [];
  let pos = 0;
  for (let k = 0; k < n; k++) {
    const sp = line.indexOf(" ", pos);
    if (sp === -1) {
      f.push(line.slice(pos));
      return { f, rest: "" };
    }
    f.push(line.slice(pos, sp));
    pos = sp + 1;
  }
  return { f, rest: line.slice(pos) };
}

export function parsePorcelainV2(output: string): ParsedStatus {
  const st: ParsedStatus = {
    oid: null,
    branch: null,
    detached: false,
    upstream: null,
    ahead: 0,
    behind: 0,
    entries: [],
  };
  const recs = output.split("\0");
  for (let i = 0; i < recs.length; i++) {
    const rec = recs[i] as string;
    if (rec.length === 0) continue;
    const type = rec[0];
    if (type === "#") {
      const { f, rest } = fields(rec, 2);
      const header = f[1];
      if (header === "branch.oid") st.oid = rest === "(initial)" ? null : rest;
      else if (header === "branch.head") {
        st.detached = rest === "(detached)";
        st.branch = st.detached ? null : rest;
      } else if (header === "branch.upstream") st.upstream = rest;
      else if (header === "branch.ab") {
        const m = /^\+(\d+) -(\d+)$/.exec(rest);
        if (m) {
          st.ahead = Number(m[1]);
          st.behind = Number(m[2]);
        }
      }
      continue;
    }
    if (type === "1") {
      // 1 XY sub mH mI mW hH hI path
      const { f, rest } = fields(rec, 8);
      st.entries.push(changed(f[1] ?? "..", rest, "changed", f[2]));
    } else if (type === "2") {
      // 2 XY sub mH mI mW hH hI Xscore path \0 origPath
      const { f, rest } = fields(rec, 9);
      const xscore = f[8] ?? "R100";
      const e = changed(f[1] ?? "..", rest, xscore.startsWith("C") ? "copied" : "renamed", f[2]);
      e.origPath = recs[++i] ?? "";
      e.score = Number(xscore.slice(1)) || 0;
      st.entries.push(e);
    } else if (type === "u") {
      // u XY sub m1 m2 m3 mW h1 h2 h3 path
      const { f, rest } = fields(rec, 10);
      st.entries.push(changed(f[1] ?? "UU", rest, "unmerged", f[2]));
    } else if (type === "?") {
      st.entries.push({ path: rec.slice(2), index: "?", worktree: "?", kind: "untracked" });
    } else if (type === "!") {
      st.entries.push({ path: rec.slice(2), index: "!", worktree: "!", kind: "ignored" });
    }
  }
  return st;
}

function changed(xy: string, path: string, kind: GitEntryKind, sub: string | undefined): ParsedEntry {
  const e: ParsedEntry = { path, index: xy[0] ?? ".", worktree: xy[1] ?? ".", kind };
  if (sub?.startsWith("S")) e.submodule = true;
  return e;
}
