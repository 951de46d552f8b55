import { CcbError, throwIfAborted } from "../errors.ts";
import { confirmMatches } from "../files/safe/confirm.ts";
import type { Workspace } from "../workspace.ts";
import { buildRegExp, decideIgnoreCase, type EngineQuery, type EngineResult, normaliseGlobs } from "./common.ts";
import { searchJs } from "./js.ts";
import { findRgOnPath, rgVersion, searchRg } from "./rg.ts";

export interface SearchOptions {
  query: string;
  /** Treat query as a regular expression (default false: literal). */
  regex?: boolean;
  /** Default: smart case (insensitive unless the query has an upper-case letter). */
  caseSensitive?: boolean;
  /** Folder or file to search (default: all roots). */
  path?: string;
  include?: string[];
  exclude?: string[];
  /** Default true. */
  respectGitignore?: boolean;
  /** Default false. */
  includeHidden?: boolean;
  contextLines?: number;
  /** Default 200. */
  maxResults?: number;
  /** Force an engine (tests, benchmarks); default: ripgrep when available, else JS. */
  engine?: "auto" | "ripgrep" | "js";
  signal?: AbortSignal;
}
export interface SearchMatch {
  path: string;
  line: number;
  column: number;
  text: string;
  before?: string[];
  after?: string[];
}
export interface SearchResult {
  matches: SearchMatch[];
  /** True when maxResults (or another cap) cut the result: callers must say so. */
  truncated: boolean;
  filesSearched?: number;
  engine: "ripgrep" | "js";
}

export interface EngineInfo {
  engine: "ripgrep" | "js";
  rgPath?: string;
  rgVersion?: string;
  /** Why ripgrep is not used, when it is not. */
  reason?: string;
}

export const DEFAULT_MAX_RESULTS = 200;
export const MAX_MAX_RESULTS = 10_000;
const MAX_CONTEXT_LINES = 20;

/**
 * Text search over the workspace: ripgrep (`rg --json`) when one is available, otherwise a JS
 * engine with the same semantics (same filter rules, smart case decided here, same line
 * shaping, hard-linked files skipped). The start path is resolved through directory handles and
 * every match is confirmed against a copy read through handles (files/safe/confirm.ts). Results
 * are sorted by path and line; when the cap cuts them `truncated` is true.
 */
export class SearchService {
  #info: Promise<EngineInfo> | undefined;

  constructor(
    readonly workspace: Workspace,
    readonly options: { rgPath?: string | null } = {},
  ) {}

  /** Which engine `search` uses (looked up once). */
  engineInfo(): Promise<EngineInfo> {
    this.#info ??= this.#detect();
    return this.#info;
  }

  async #detect(): Promise<EngineInfo> {
    if (this.options.rgPath === null) return { engine: "js", reason: "ripgrep disabled by configuration" };
    const rgPath = this.options.rgPath ?? (await findRgOnPath());
    if (!rgPath) return { engine: "js", reason: "no rg on PATH" };
    const version = await rgVersion(rgPath);
    if (!version) return { engine: "js", reason: `${rgPath} does not run` };
    return { engine: "ripgrep", rgPath, rgVersion: version };
  }

  async search(options: SearchOptions): Promise<SearchResult> {
    if (typeof options.query !== "string" || options.query === "") {
      throw new CcbError("INVALID_ARGUMENT", "The search query is empty.", {
        hint: "Pass the text (or regex: true and a pattern) to look for.",
      });
    }
    if (options.query.includes("\n")) {
      throw new CcbError("INVALID_ARGUMENT", "The query contains a newline; search matches within one line.", {
        hint: "Search for one line at a time.",
      });
    }
    const regex = options.regex ?? false;
    const ignoreCase = decideIgnoreCase(options.query, regex, options.caseSensitive);
    if (regex) buildRegExp(options.query, true, ignoreCase); // fail early with a clear message
    const maxResults = Math.max(1, Math.min(options.maxResults ?? DEFAULT_MAX_RESULTS, MAX_MAX_RESULTS));
    const contextLines = Math.max(0, Math.min(options.contextLines ?? 0, MAX_CONTEXT_LINES));
    const globs = normaliseGlobs(options.include, options.exclude);
    const engine = await this.#pickEngine(options.engine ?? "auto");

    const targets: Array<{ root: string; rel: string; isFile: boolean }> = [];
    if (options.path !== undefined) {
      const r = this.workspace.locate(options.path);
      const st = r.self?.st ?? r.st;
      r.close();
      if (!st)
        throw new CcbError("NOT_FOUND", `No such file or directory: ${options.path}`, {
          hint: "Check the path; {{list}} shows what exists.",
        });
      if (!st.isFile() && !st.isDirectory()) {
        throw new CcbError("INVALID_ARGUMENT", `Not a file or directory: ${options.path}`, {
          hint: "Search a directory or a regular file (not a FIFO, socket or device).",
        });
      }
      targets.push({ root: r.root, rel: r.rel, isFile: st.isFile() });
    } else {
      // A root nested inside another root is searched as part of the outer one (not twice).
      const roots = this.workspace.roots;
      for (const root of roots) {
        if (!roots.some((o) => o !== root && root.startsWith(o.endsWith("/") ? o : `${o}/`)))
          targets.push({ root, rel: "", isFile: false });
      }
    }

    const out: SearchMatch[] = [];
    let truncated = false;
    let filesSearched: number | undefined;
    for (const t of targets) {
      throwIfAborted(options.signal);
      const q: EngineQuery = {
        rootAbs: t.root,
        startRel: t.rel,
        startIsFile: t.isFile,
        query: options.query,
        regex,
        ignoreCase,
        include: globs.include,
        exclude: globs.exclude,
        respectGitignore: options.respectGitignore ?? true,
        includeHidden: options.includeHidden ?? false,
        contextLines,
        limit: maxResults + 1 - out.length,
        signal: options.signal,
      };
      let r: EngineResult;
      if (engine.engine === "ripgrep" && engine.rgPath) {
        r = await searchRg(engine.rgPath, q);
      } else {
        r = await searchJs(q);
      }
      if (r.filesSearched !== undefined) filesSearched = (filesSearched ?? 0) + r.filesSearched;
      for (const m of confirmMatches(t.root, r.matches)) {
        const sm: SearchMatch = {
          path: this.workspace.displayRel(t.root, m.rel),
          line: m.line,
          column: m.column,
          text: m.text,
        };
        if (m.before) sm.before = m.before;
        if (m.after) sm.after = m.after;
        out.push(sm);
      }
      if (r.stopped || out.length > maxResults) {
        truncated = true;
        break;
      }
    }
    out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line));
    const result: SearchResult = {
      matches: truncated ? out.slice(0, maxResults) : out,
      truncated,
      engine: engine.engine,
    };
    if (filesSearched !== undefined) result.filesSearched = filesSearched;
    return result;
  }

  async #pickEngine(want: "auto" | "ripgrep" | "js"): Promise<EngineInfo> {
    if (want === "js") return { engine: "js" };
    const info = await this.engineInfo();
    if (want === "ripgrep" && info.engine !== "ripgrep") {
      throw new CcbError("UNSUPPORTED", `ripgrep is not available: ${info.reason}.`, {
        hint: "Install ripgrep (Debian: apt-get install ripgrep) or use the default engine.",
      });
    }
    return info;
  }
}
