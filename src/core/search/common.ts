import { CcbError } from "../errors.ts";

/** What an engine is asked to search: one start path inside one root. */
export interface EngineQuery {
  rootAbs: string;
  /** Start path relative to the root ("" for the root). */
  startRel: string;
  startIsFile: boolean;
  query: string;
  regex: boolean;
  ignoreCase: boolean;
  include: readonly string[];
  exclude: readonly string[];
  respectGitignore: boolean;
  includeHidden: boolean;
  contextLines: number;
  /** Stop after this many matching lines. */
  limit: number;
  signal?: AbortSignal;
  /** JS engine, regex queries: how long the worker may take for one batch of files (default 15 s). */
  regexDeadlineMs?: number;
}

/** One matching line, path relative to the root. */
export interface RawMatch {
  rel: string;
  line: number;
  /** 1-based column (UTF-16 code units) of the first match on the line. */
  column: number;
  text: string;
  before?: string[];
  after?: string[];
}

export interface EngineResult {
  matches: RawMatch[];
  /** True when the engine stopped at `limit`. */
  stopped: boolean;
  filesSearched?: number;
}

/** Files larger than this are skipped by both engines. */
export const MAX_SEARCH_FILE_BYTES = 64 * 1024 * 1024;
/** A NUL byte within this many leading bytes makes a file binary and skipped (ripgrep's first buffer). */
export const BINARY_PROBE_BYTES = 64 * 1024;

/**
 * Smart case, decided once for both engines: case-insensitive unless the query has an upper-case
 * letter (escape sequences such as `\S` or `\W` in a regex do not count).
 */
export function decideIgnoreCase(query: string, regex: boolean, caseSensitive: boolean | undefined): boolean {
  if (caseSensitive !== undefined) return !caseSensitive;
  const literal = regex ? query.replace(/\\./g, "") : query;
  return literal === literal.toLowerCase();
}

const SYNTAX = /[\\^$.*+?()[\]{}|/]/g;

/**
 * The JS regular expression of a query (literal queries escaped), for matching one line without
 * its "\n" (dotAll, so `.` matches "\r" as in ripgrep); `multiline` gives the whole-file variant
 * used as a quick pre-filter. INVALID_ARGUMENT for a bad regex.
 */
export function buildRegExp(query: string, regex: boolean, ignoreCase: boolean, multiline = false): RegExp {
  const source = regex ? query : query.replace(SYNTAX, "\\$&");
  try {
    return new RegExp(source, `${ignoreCase ? "i" : ""}${multiline ? "m" : ""}su`);
  } catch (err) {
    throw new CcbError("INVALID_ARGUMENT", (err as Error).message, {
      hint: "Fix the pattern, or pass regex: false to search for the text literally.",
    });
  }
}

/** Split `!glob` entries given as includes into excludes. */
export function normaliseGlobs(
  include: readonly string[] = [],
  exclude: readonly string[] = [],
): { include: string[]; exclude: string[] } {
  const inc: string[] = [];
  const exc: string[] = exclude.map((g) => g.replace(/^!/, "")).filter((g) => g.trim() !== "");
  for (const g of include) {
    if (g.trim() === "") continue;
    if (g.startsWith("!")) exc.push(g.slice(1));
    else inc.push(g);
  }
  return { include: inc, exclude: exc };
}

export const MAX_LINE_CHARS = 2000;

/** Cap very long lines (minified files) the same way for both engines. */
export function capLine(text: string): string {
  return text.length > MAX_LINE_CHARS
    ? `${text.slice(0, MAX_LINE_CHARS)}… [line cut at ${MAX_LINE_CHARS} chars]`
    : text;
}

/** Strip one trailing "\n" or "\r\n". */
export function chompLine(text: string): string {
  return text.endsWith("\r\n") ? text.slice(0, -2) : text.endsWith("\n") ? text.slice(0, -1) : text;
}
