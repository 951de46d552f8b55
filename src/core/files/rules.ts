import ignore, { type Ignore } from "ignore";
import picomatch from "picomatch";
import { openDirBeneath, readSmallAt } from "./safe/dir.ts";

/**
 * Filter rules shared by fs_list, the JS search engine and the ripgrep runner, with ripgrep's
 * semantics so both search engines give the same results:
 * - globs (include/exclude) are gitignore-style and relative to the workspace root: a glob
 *   without `/` matches the base name at any depth, one with `/` is anchored at the root, a
 *   trailing `/` matches directories only; an exclude matching a directory prunes it;
 *   include globs filter files (directories are still walked) and, as in ripgrep, a matching
 *   include wins over `.gitignore` and the hidden-file rule;
 * - `.gitignore` files at the walked directories (and at the ancestors between the root and the
 *   start of the walk) apply, deeper files first; files above the workspace root, global
 *   excludes and `.git/info/exclude` do not;
 * - hidden entries (name starting with `.`) are skipped unless asked for or re-included by a
 *   `.gitignore` negation; `.git` directories are skipped whenever `.gitignore` is honoured.
 */

interface CompiledGlob {
  test: (s: string) => boolean;
  anchored: boolean;
  dirOnly: boolean;
}

function compileGlob(glob: string): CompiledGlob {
  let g = glob.trim();
  const dirOnly = g.endsWith("/");
  if (dirOnly) g = g.replace(/\/+$/, "");
  const anchored = g.includes("/");
  g = g.replace(/^\/+/, "");
  return { test: picomatch(g, { dot: true }), anchored, dirOnly };
}

function globMatches(g: CompiledGlob, rel: string, name: string, isDir: boolean): boolean {
  if (g.dirOnly && !isDir) return false;
  return g.test(g.anchored ? rel : name);
}

export type GlobDecision = "include" | "exclude" | "none";

export class GlobRules {
  readonly #include: CompiledGlob[];
  readonly #exclude: CompiledGlob[];

  constructor(include: readonly string[] = [], exclude: readonly string[] = []) {
    this.#include = include.filter((g) => g.trim() !== "").map(compileGlob);
    this.#exclude = exclude.filter((g) => g.trim() !== "").map(compileGlob);
  }

  get hasIncludes(): boolean {
    return this.#include.length > 0;
  }

  /** `rel` is relative to the workspace root, `name` its last segment. */
  decide(rel: string, name: string, isDir: boolean): GlobDecision {
    for (const g of this.#exclude) if (globMatches(g, rel, name, isDir)) return "exclude";
    for (const g of this.#include) if (globMatches(g, rel, name, isDir)) return "include";
    if (this.#include.length > 0 && !isDir) return "exclude";
    return "none";
  }
}

/** The `.gitignore` of one directory (`dir` relative to the root, "" for the root), linked to its parent's. */
export interface IgnoreNode {
  readonly dir: string;
  readonly ig: Ignore;
  readonly lines: readonly string[];
  readonly parent: IgnoreNode | undefined;
}

export type IgnoreDecision = "ignored" | "unignored" | "none";

/** Deepest `.gitignore` first, as git does: the first one with an opinion decides. */
export function checkIgnore(node: IgnoreNode | undefined, rel: string, isDir: boolean): IgnoreDecision {
  for (let n = node; n; n = n.parent) {
    const sub = n.dir === "" ? rel : rel.slice(n.dir.length + 1);
    if (sub === "") continue;
    const r = n.ig.test(isDir ? `${sub}/` : sub);
    if (r.ignored) return "ignored";
    if (r.unignored) return "unignored";
  }
  return "none";
}

/** Meaningful lines of a `.gitignore` (no blanks, no comments). */
export function gitignoreLines(text: string): string[] {
  return text.split(/\r?\n/).filter((l) => l.trim() !== "" && !l.startsWith("#"));
}

/** Load `<rootAbs>/<dir>/.gitignore` (read through directory handles, no symlink followed) as a child of `parent`, or return `parent` when there is none. */
export async function loadIgnoreNode(
  rootAbs: string,
  dir: string,
  parent: IgnoreNode | undefined,
): Promise<IgnoreNode | undefined> {
  let text: string;
  try {
    const d = openDirBeneath(rootAbs, dir);
    try {
      const buf = readSmallAt(d, ".gitignore");
      if (!buf) return parent;
      text = buf.toString("utf8");
    } finally {
      d.close();
    }
  } catch {
    return parent;
  }
  const lines = gitignoreLines(text);
  if (lines.length === 0) return parent;
  return { dir, ig: ignore({ allowRelativePaths: true }).add(lines), lines, parent };
}

/**
 * Ignore nodes of the ancestors of `startRel` (the root up to its parent), or undefined when the
 * start itself is ignored by them: a path the caller names explicitly is walked in full, only
 * `.gitignore` files at and below it apply then.
 */
export async function ancestorIgnores(rootAbs: string, startRel: string): Promise<IgnoreNode | undefined> {
  if (startRel === "") return undefined;
  const parts = startRel.split("/");
  let node: IgnoreNode | undefined;
  for (let i = 0; i < parts.length; i++) {
    const dir = parts.slice(0, i).join("/");
    node = await loadIgnoreNode(rootAbs, dir, node);
    const prefix = parts.slice(0, i + 1).join("/");
    if (checkIgnore(node, prefix, true) === "ignored") return undefined;
  }
  return node;
}

/**
 * The rules of a chain of ignore nodes rewritten as one gitignore anchored at the root (shallow
 * first, so deeper rules win), for ripgrep's `--ignore-file` (ripgrep reads ancestors' files
 * with the wrong anchoring, so it runs with `--no-ignore-parent` and gets these instead).
 */
export function rewriteAnchoredAtRoot(node: IgnoreNode | undefined): string[] {
  const chain: IgnoreNode[] = [];
  for (let n = node; n; n = n.parent) chain.unshift(n);
  const out: string[] = [];
  for (const n of chain) {
    for (const line of n.lines) {
      if (n.dir === "") {
        out.push(line);
        continue;
      }
      const neg = line.startsWith("!");
      const body = neg ? line.slice(1) : line;
      const anchored = body.replace(/\/+$/, "").includes("/");
      const rewritten = anchored ? `${n.dir}/${body.replace(/^\/+/, "")}` : `${n.dir}/**/${body}`;
      out.push(neg ? `!${rewritten}` : rewritten);
    }
  }
  return out;
}
