import { capLine, MAX_SEARCH_FILE_BYTES, type RawMatch } from "../../search/common.ts";
import { type Dir, openDirBeneath, readSmallAt } from "./dir.ts";

const shape = (line: string) => capLine(line.endsWith("\r") ? line.slice(0, -1) : line);

/**
 * The search engines (ripgrep, or the JS walker) read files by path, so a directory swapped for
 * a symlink while they run could let them read outside. Their matches are therefore only
 * candidates: each file is read again through directory handles (no symlink followed, one link
 * only, files/safe/dir.ts), a match is kept only when that copy has the same text on that line,
 * and context lines are taken from that copy. Nothing an engine read elsewhere reaches the caller.
 */
export function confirmMatches(rootAbs: string, matches: readonly RawMatch[]): RawMatch[] {
  const byFile = new Map<string, RawMatch[]>();
  for (const m of matches) {
    const list = byFile.get(m.rel);
    if (list) list.push(m);
    else byFile.set(m.rel, [m]);
  }
  const out: RawMatch[] = [];
  for (const [rel, ms] of byFile) {
    const lines = safeLines(rootAbs, rel);
    if (!lines) continue;
    for (const m of ms) {
      const line = lines[m.line - 1];
      if (line === undefined || shape(line) !== m.text) continue;
      const c: RawMatch = { ...m };
      if (m.before) c.before = lines.slice(Math.max(0, m.line - 1 - m.before.length), m.line - 1).map(shape);
      if (m.after) c.after = lines.slice(m.line, m.line + m.after.length).map(shape);
      out.push(c);
    }
  }
  return out;
}

function safeLines(rootAbs: string, rel: string): string[] | undefined {
  const cut = rel.lastIndexOf("/");
  let dir: Dir;
  try {
    dir = openDirBeneath(rootAbs, cut < 0 ? "" : rel.slice(0, cut));
  } catch {
    return undefined;
  }
  try {
    const buf = readSmallAt(dir, rel.slice(cut + 1), MAX_SEARCH_FILE_BYTES);
    return buf?.toString("utf8").split("\n");
  } catch {
    return undefined;
  } finally {
    dir.close();
  }
}
