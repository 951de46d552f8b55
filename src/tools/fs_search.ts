import { z } from "zod";
import type { SearchMatch, SearchResult } from "../core/search/search.ts";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { Globs, PathInput, plural } from "./shared/fs.ts";

/** ripgrep-like lines: `path:line:text` for matches, `path-line-text` for context, `--` between separate blocks. */
export function formatMatches(matches: readonly SearchMatch[]): string[] {
  const out: string[] = [];
  let lastPath = "";
  let lastLine = 0;
  const hasContext = matches.some((m) => (m.before?.length ?? 0) + (m.after?.length ?? 0) > 0);
  const emit = (path: string, line: number, sep: string, text: string) => {
    if (path === lastPath && line <= lastLine) return;
    if (hasContext && out.length > 0 && (path !== lastPath || line > lastLine + 1)) out.push("--");
    out.push(`${path}${sep}${line}${sep}${text}`);
    lastPath = path;
    lastLine = line;
  };
  for (const m of matches) {
    const before = m.before ?? [];
    for (const [i, t] of before.entries()) emit(m.path, m.line - before.length + i, "-", t);
    emit(m.path, m.line, ":", m.text);
    for (const [i, t] of (m.after ?? []).entries()) emit(m.path, m.line + 1 + i, "-", t);
  }
  return out;
}

function summary(r: SearchResult, query: string, where: string): string {
  const files = new Set(r.matches.map((m) => m.path)).size;
  if (r.matches.length === 0) {
    return `No matches for ${JSON.stringify(query)} in ${where} (${r.engine}). Files ignored by .gitignore and hidden files were skipped unless asked for (respectGitignore: false, includeHidden: true).`;
  }
  const head = `${plural(r.matches.length, "match", "matches")} in ${plural(files, "file")} for ${JSON.stringify(query)} in ${where} (${r.engine})`;
  return r.truncated
    ? `${head}; truncated: ${r.matches.length} shown, there are more. Narrow the query, path or include globs, or raise maxResults.`
    : head;
}

export default defineTool({
  name: "fs_search",
  title: "Search file contents",
  description:
    "Search the text of workspace files (ripgrep when available, else an equivalent JS engine): literal text by default or a " +
    "regular expression (regex: true; the syntax common to JavaScript and Rust: no look-around or back-references). Smart case " +
    "unless caseSensitive is set. Honours .gitignore and skips hidden and binary files unless asked. Returns `path:line:text` lines " +
    "(context lines as `path-line-text`), sorted by path; when maxResults cuts the result, the text says it is truncated.",
  input: z.object({
    query: z.string().min(1).describe("Text to find (one line), or a regular expression with regex: true."),
    regex: z.boolean().optional().describe("Treat query as a regular expression (default false: literal text)."),
    caseSensitive: z
      .boolean()
      .optional()
      .describe(
        "Match case exactly (true) or ignore it (false). Default: smart case (case-insensitive unless the query has an upper-case letter).",
      ),
    path: PathInput.optional().describe("Directory or file to search (default: the whole workspace, every root)."),
    include: Globs.optional().describe(
      'Only search files matching one of these globs, e.g. ["*.ts", "src/**"]. As in ripgrep, a matching include also admits .gitignored or hidden files.',
    ),
    exclude: Globs.optional().describe(
      'Skip files and directories matching these globs, e.g. ["*.min.js", "vendor/"].',
    ),
    respectGitignore: z
      .boolean()
      .optional()
      .describe("Skip files ignored by .gitignore files and the .git directory (default true)."),
    includeHidden: z
      .boolean()
      .optional()
      .describe("Also search files and directories whose name starts with '.' (default false)."),
    contextLines: z
      .number()
      .int()
      .min(0)
      .max(20)
      .optional()
      .describe("Lines of context before and after each match (default 0)."),
    maxResults: z
      .number()
      .int()
      .min(1)
      .max(10_000)
      .optional()
      .describe("Maximum matching lines to return (default 200); the result says when it was cut."),
  }),
  annotations: READ_ONLY,
  async execute(args, ctx) {
    const r = await ctx.core.search.search({ ...args, signal: ctx.signal });
    const where = args.path ?? "the workspace";
    const text = [summary(r, args.query, where), ...formatMatches(r.matches)].join("\n");
    return {
      text,
      structured: {
        matches: r.matches,
        truncated: r.truncated,
        engine: r.engine,
        ...(r.filesSearched !== undefined ? { filesSearched: r.filesSearched } : {}),
      },
    };
  },
});
