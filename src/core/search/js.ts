import { lstatSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { throwIfAborted } from "../errors.ts";
import { walk } from "../files/walk.ts";
import {
  BINARY_PROBE_BYTES,
  buildRegExp,
  capLine,
  type EngineQuery,
  type EngineResult,
  MAX_LINE_CHARS,
  MAX_SEARCH_FILE_BYTES,
  type RawMatch,
} from "./common.ts";
import { type RegexFile, RegexMatcher } from "./regex-worker.ts";

/**
 * The JS search engine: the shared walker (files/walk.ts, ripgrep's filter semantics) and a
 * line-by-line match, giving the same results as the ripgrep runner. Used when no `rg` is there.
 * Literal queries (escaped, so matching is linear) are matched here; regular expressions only in a
 * worker thread with a deadline (search/regex-worker.ts), since a backtracking pattern could
 * otherwise hold the main thread, and with it every client, for hours.
 */
export async function searchJs(q: EngineQuery): Promise<EngineResult> {
  if (q.regex) {
    buildRegExp(q.query, true, q.ignoreCase); // INVALID_ARGUMENT before a thread starts
    const matcher = new RegexMatcher(
      { source: q.query, ignoreCase: q.ignoreCase, contextLines: q.contextLines, maxLineChars: MAX_LINE_CHARS },
      q.regexDeadlineMs !== undefined ? { deadlineMs: q.regexDeadlineMs } : {},
    );
    try {
      return await searchWith(q, matcher);
    } finally {
      await matcher.close();
    }
  }
  return searchWith(q, undefined);
}

async function searchWith(q: EngineQuery, matcher: RegexMatcher | undefined): Promise<EngineResult> {
  const re = buildRegExp(q.query, false, q.ignoreCase);
  const fileRe = buildRegExp(q.query, false, q.ignoreCase, true);
  const literal = !q.ignoreCase ? q.query : undefined;
  const matches: RawMatch[] = [];
  let filesSearched = 0;
  let stopped = false;
  /** Files read for the worker, matched at the next flush. */
  let pendingRegex: RegexFile[] = [];
  const matchPending = async (): Promise<void> => {
    if (!matcher || pendingRegex.length === 0 || stopped) return;
    const files = pendingRegex;
    pendingRegex = [];
    const found = await matcher.match(files, q.limit - matches.length, q.signal);
    matches.push(...found);
    if (matches.length >= q.limit) stopped = true;
  };

  // Synchronous reads of (page-cached, mostly small) files are several times faster than the
  // thread-pool round trips of fs/promises; the caller yields to the event loop between batches.
  const searchFile = (rel: string): void => {
    const abs = join(q.rootAbs, rel);
    const st = lstatSync(abs, { throwIfNoEntry: false });
    if (!st?.isFile() || st.nlink > 1 || st.size > MAX_SEARCH_FILE_BYTES) return;
    let buf: Buffer;
    try {
      buf = readFileSync(abs);
    } catch {
      return;
    }
    filesSearched++;
    const nul = buf.indexOf(0);
    if (nul !== -1) {
      if (nul < BINARY_PROBE_BYTES) return;
      buf = buf.subarray(0, buf.lastIndexOf(10, nul) + 1);
    }
    if (matcher) {
      pendingRegex.push({ rel, buf });
      return;
    }
    const text = buf.toString("utf8");
    if (literal !== undefined ? !text.includes(literal) : !fileRe.test(text)) return;
    const lines = text.split("\n");
    if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
    const n = q.contextLines;
    for (let i = 0; i < lines.length; i++) {
      if (stopped) return;
      const line = lines[i] as string;
      const m = re.exec(line);
      if (!m) continue;
      const match: RawMatch = { rel, line: i + 1, column: m.index + 1, text: capLine(stripCr(line)) };
      if (n > 0) {
        match.before = lines.slice(Math.max(0, i - n), i).map((l) => capLine(stripCr(l)));
        match.after = lines.slice(i + 1, i + 1 + n).map((l) => capLine(stripCr(l)));
      }
      matches.push(match);
      if (matches.length >= q.limit) stopped = true;
    }
  };

  if (q.startIsFile) {
    searchFile(q.startRel);
    await matchPending();
  } else {
    let batch: string[] = [];
    const flush = async () => {
      const files = batch;
      batch = [];
      for (const f of files) {
        if (stopped) break;
        searchFile(f);
      }
      await matchPending();
      await new Promise<void>((r) => setImmediate(r));
    };
    for await (const e of walk(q.rootAbs, q.startRel, {
      include: q.include,
      exclude: q.exclude,
      respectGitignore: q.respectGitignore,
      includeHidden: q.includeHidden,
      signal: q.signal,
    })) {
      if (e.kind !== "file") continue;
      batch.push(e.rel);
      if (batch.length >= 64) {
        await flush();
        throwIfAborted(q.signal);
        if (stopped) break;
      }
    }
    if (!stopped) await flush();
  }
  throwIfAborted(q.signal);
  return { matches: stopped ? matches.slice(0, q.limit) : matches, stopped, filesSearched };
}

function stripCr(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}
