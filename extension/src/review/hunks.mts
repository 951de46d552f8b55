/**
 * Hunks of a proposed change, for reviewing it hunk by hunk: a line diff of original → proposed
 * (Myers' algorithm over whole lines, each with its line break), where every run of changed lines
 * is one hunk. Line ranges are 0-based and end-exclusive; an empty range is a point before that
 * line (a pure insertion has an empty original range, a pure deletion an empty proposed range).
 * No editor API here: the review (diff.ts) keeps the proposed ranges in step with the person's edits
 * through `shiftRange`.
 */

export interface LineRange {
  start: number;
  end: number;
}

export interface Hunk {
  /** Lines of the original this hunk replaces. */
  original: LineRange;
  /** Lines of the proposal that replace them. */
  proposed: LineRange;
  /** The original's text of those lines (what rejecting the hunk restores). */
  originalText: string;
}

/** Beyond this many changed lines (edit distance) the changed middle is one hunk: bounded time and memory. */
const MAX_EDIT_DISTANCE = 4_000;

/** The text's lines, each with its line break ("a\nb" → ["a\n", "b"]). */
export function splitLines(text: string): string[] {
  const lines = text.match(/[^\n]*\n|[^\n]+$/g);
  return lines ?? [];
}

/** The hunks of original → proposed, in order. Equal texts have none. */
export function computeHunks(original: string, proposed: string): Hunk[] {
  const a = splitLines(original);
  const b = splitLines(proposed);
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const midA = a.slice(pre, a.length - suf);
  const midB = b.slice(pre, b.length - suf);
  const same = myersEqualPairs(midA, midB);
  const hunks: Hunk[] = [];
  let i = 0;
  let j = 0;
  const flush = (ei: number, ej: number) => {
    if (ei > i || ej > j)
      hunks.push({
        original: { start: pre + i, end: pre + ei },
        proposed: { start: pre + j, end: pre + ej },
        originalText: midA.slice(i, ei).join(""),
      });
  };
  for (const [x, y] of [...same, [midA.length, midB.length] as const]) {
    flush(x, y);
    i = x + 1;
    j = y + 1;
  }
  return hunks;
}

/**
 * The pairs (i, j) with a[i] === b[j] of a shortest edit script (Myers, O((N+M)·D)), in order;
 * none when the distance exceeds MAX_EDIT_DISTANCE (everything then differs).
 */
function myersEqualPairs(a: readonly string[], b: readonly string[]): [number, number][] {
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0) return [];
  const max = Math.min(n + m, MAX_EDIT_DISTANCE);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= max && found < 0; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && (v[offset + k - 1] ?? 0) < (v[offset + k + 1] ?? 0))
          ? (v[offset + k + 1] ?? 0)
          : (v[offset + k - 1] ?? 0) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
  }
  if (found < 0) return [];
  // Walk back through the saved frontiers.
  const pairs: [number, number][] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const vd = trace[d] as Int32Array;
    const k = x - y;
    const down = k === -d || (k !== d && (vd[offset + k - 1] ?? 0) < (vd[offset + k + 1] ?? 0));
    const prevK = down ? k + 1 : k - 1;
    const prevX = vd[offset + prevK] ?? 0;
    const prevY = prevX - prevK;
    const startX = down ? prevX : prevX + 1;
    const startY = startX - k;
    while (x > startX && y > startY) pairs.push([--x, --y]);
    x = prevX;
    y = prevY;
  }
  while (x > 0 && y > 0) pairs.push([--x, --y]);
  return pairs.reverse();
}

/** One change of a document: the replaced range (0-based line/character) and the new text. */
export interface LineEdit {
  start: { line: number; character: number };
  end: { line: number; character: number };
  text: string;
}

/**
 * Where `range` (lines of a document) is after `edit`. An edit that touches the range's lines
 * belongs to it (the range grows or shrinks over it); an edit before it moves it; one after leaves
 * it. Edits of one change event are applied last first (their positions refer to the text before).
 */
export function shiftRange(range: LineRange, edit: LineEdit): LineRange {
  const breaks = edit.text.split("\n").length - 1;
  const delta = breaks - (edit.end.line - edit.start.line);
  // Whole lines replaced (from a line's start to another line's start, with whole lines or nothing)
  // touch only the lines before edit.end; any other edit touches edit.end's line too.
  const wholeLines =
    edit.start.character === 0 &&
    edit.end.character === 0 &&
    edit.end.line > edit.start.line &&
    (edit.text === "" || edit.text.endsWith("\n"));
  const touchedEnd = wholeLines ? edit.end.line : edit.end.line + 1;
  if (touchedEnd <= range.start) return { start: range.start + delta, end: range.end + delta };
  // An empty range is a point before its line: an edit from that line on is after it.
  if (edit.start.line >= range.end) return range;
  const start = Math.min(range.start, edit.start.line);
  return { start, end: Math.max(start, Math.max(range.end, touchedEnd) + delta) };
}
