import { computeHunks, type Hunk, type LineEdit, type LineRange, shiftRange } from "./hunks.mts";

export type HunkState = "undecided" | "accepted" | "rejected";

interface Tracked {
  hunk: Hunk;
  /** Where the hunk is in the proposed document now (it moves and grows with the person's edits). */
  range: LineRange;
  state: HunkState;
}

/**
 * The per-hunk decisions of one diff under review. Hunks are numbered (0-based) over original →
 * proposed when the diff opens and keep their numbers. Accepting a hunk keeps the proposed
 * document's current text of its lines (the person's edits in it included); rejecting it restores
 * the original's lines there (the caller applies `revertOf` to the document). Edits outside every
 * hunk are the person's own and are kept, so the kept text is always the proposed document's text
 * once every hunk is decided. No editor API here: diff.ts feeds the document's changes in.
 */
export class HunkReview {
  readonly #hunks: Tracked[];

  constructor(original: string, proposed: string) {
    this.#hunks = computeHunks(original, proposed).map((hunk) => ({
      hunk,
      range: { ...hunk.proposed },
      state: "undecided",
    }));
  }

  get size(): number {
    return this.#hunks.length;
  }

  /** Every hunk decided (and there was at least one). */
  get complete(): boolean {
    return this.#hunks.length > 0 && this.#hunks.every((h) => h.state !== "undecided");
  }

  /** Hunk `n`'s state and current proposed range, or undefined for a number that is not a hunk. */
  get(n: number): { state: HunkState; range: LineRange } | undefined {
    const h = this.#hunks[n];
    return h ? { state: h.state, range: { ...h.range } } : undefined;
  }

  /** Every hunk, in order, with its state and current range in the proposed document. */
  list(): { n: number; state: HunkState; range: LineRange }[] {
    return this.#hunks.map((h, n) => ({ n, state: h.state, range: { ...h.range } }));
  }

  /** The hunk at a line of the proposed document (an empty hunk is at the line it sits before). */
  atProposedLine(line: number): number | undefined {
    const i = this.#hunks.findIndex((h) =>
      h.range.start === h.range.end ? line === h.range.start : line >= h.range.start && line < h.range.end,
    );
    return i < 0 ? undefined : i;
  }

  /** The hunk at a line of the original (which never changes). */
  atOriginalLine(line: number): number | undefined {
    const i = this.#hunks.findIndex((h) => {
      const r = h.hunk.original;
      return r.start === r.end ? line === r.start : line >= r.start && line < r.end;
    });
    return i < 0 ? undefined : i;
  }

  /** The document changed: edits of one change event, positions as before the event. */
  onEdits(edits: readonly LineEdit[]): void {
    const lastFirst = [...edits].sort((x, y) => y.start.line - x.start.line || y.start.character - x.start.character);
    for (const e of lastFirst) for (const h of this.#hunks) h.range = shiftRange(h.range, e);
  }

  /** Marks hunk `n` accepted; false when it is not an undecided hunk. */
  accept(n: number): boolean {
    const h = this.#hunks[n];
    if (h?.state !== "undecided") return false;
    h.state = "accepted";
    return true;
  }

  /** A rejection whose edit did not apply: hunk `n` is undecided again (false when it was not rejected). */
  undecide(n: number): boolean {
    const h = this.#hunks[n];
    if (h?.state !== "rejected") return false;
    h.state = "undecided";
    return true;
  }

  /**
   * Marks hunk `n` rejected and returns the edit that restores its original lines in the proposed
   * document (lines `range`, replaced by `text`); undefined when it is not an undecided hunk.
   */
  reject(n: number): { range: LineRange; text: string } | undefined {
    const h = this.#hunks[n];
    if (h?.state !== "undecided") return undefined;
    h.state = "rejected";
    return { range: { ...h.range }, text: h.hunk.originalText };
  }
}
