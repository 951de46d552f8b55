import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { HunkReview } from "../../../extension/src/review/hunk-review.mts";
import { computeHunks, type LineEdit, shiftRange, splitLines } from "../../../extension/src/review/hunks.mts";

/** original with hunk i's proposed lines taken where keep[i], its original lines elsewhere. */
function mix(original: string, proposed: string, keep: (i: number) => boolean): string {
  const a = splitLines(original);
  const b = splitLines(proposed);
  const out: string[] = [];
  let at = 0;
  computeHunks(original, proposed).forEach((h, i) => {
    out.push(...a.slice(at, h.original.start));
    out.push(...(keep(i) ? b.slice(h.proposed.start, h.proposed.end) : a.slice(h.original.start, h.original.end)));
    at = h.original.end;
  });
  out.push(...a.slice(at));
  return out.join("");
}

/** A document as the editor holds it: text, edited by line/character ranges. */
class Doc {
  constructor(public text: string) {}
  offset(p: { line: number; character: number }): number {
    const lines = this.text.split("\n");
    let o = 0;
    for (let l = 0; l < p.line && l < lines.length; l++) o += (lines[l] as string).length + 1;
    return Math.min(this.text.length, o + p.character);
  }
  /** The editor's validateRange((start, 0), (end, 0)) over whole lines. */
  lines(start: number, end: number): LineEdit["start"][] {
    const count = this.text.split("\n").length;
    const clamp = (l: number) =>
      l >= count
        ? { line: count - 1, character: (this.text.split("\n")[count - 1] as string).length }
        : { line: l, character: 0 };
    return [clamp(start), clamp(end)];
  }
  apply(e: LineEdit): void {
    this.text = this.text.slice(0, this.offset(e.start)) + e.text + this.text.slice(this.offset(e.end));
  }
}

/** Reject the hunks in `rejected` (others accepted) through a HunkReview on a live Doc, as diff.ts does. */
function review(original: string, proposed: string, rejected: Set<number>, personEdits: LineEdit[] = []) {
  const r = new HunkReview(original, proposed);
  const doc = new Doc(proposed);
  for (const e of personEdits) {
    r.onEdits([e]);
    doc.apply(e);
  }
  for (let n = 0; n < r.size; n++) {
    if (!rejected.has(n)) {
      assert.equal(r.accept(n), true);
      continue;
    }
    const revert = r.reject(n);
    assert.ok(revert);
    const [start, end] = doc.lines(revert.range.start, revert.range.end) as [LineEdit["start"], LineEdit["start"]];
    const edit = { start, end, text: revert.text };
    r.onEdits([edit]);
    doc.apply(edit);
  }
  assert.equal(r.complete, r.size > 0);
  return doc.text;
}

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe("hunks of a proposed change (line diff)", () => {
  it("equal texts have no hunk", () => {
    assert.deepEqual(computeHunks("a\nb\n", "a\nb\n"), []);
    assert.deepEqual(computeHunks("", ""), []);
  });

  it("two separated changes are two hunks, numbered in order", () => {
    const original = "a\nb\nc\nd\ne\n";
    const proposed = "a\nB\nc\nd\nE\n";
    assert.deepEqual(computeHunks(original, proposed), [
      { original: { start: 1, end: 2 }, proposed: { start: 1, end: 2 }, originalText: "b\n" },
      { original: { start: 4, end: 5 }, proposed: { start: 4, end: 5 }, originalText: "e\n" },
    ]);
  });

  it("pure insertions and deletions have an empty range on one side", () => {
    assert.deepEqual(computeHunks("a\nc\n", "a\nb\nc\n"), [
      { original: { start: 1, end: 1 }, proposed: { start: 1, end: 2 }, originalText: "" },
    ]);
    assert.deepEqual(computeHunks("a\nb\nc\n", "a\nc\n"), [
      { original: { start: 1, end: 2 }, proposed: { start: 1, end: 1 }, originalText: "b\n" },
    ]);
    assert.deepEqual(computeHunks("", "x\n"), [
      { original: { start: 0, end: 0 }, proposed: { start: 0, end: 1 }, originalText: "" },
    ]);
  });

  it("a missing final line break is a change of the last line", () => {
    assert.deepEqual(computeHunks("a\nb", "a\nb\n"), [
      { original: { start: 1, end: 2 }, proposed: { start: 1, end: 2 }, originalText: "b" },
    ]);
  });

  it("taking every hunk gives the proposal, taking none the original, any subset a mix (random texts)", () => {
    const rand = rng(7);
    const words = ["x\n", "y\n", "z\n", "w\n", "\n", "q"];
    const text = () =>
      Array.from({ length: Math.floor(rand() * 12) }, () => words[Math.floor(rand() * words.length)]).join("");
    for (let round = 0; round < 400; round++) {
      const original = text();
      const proposed = text();
      const hunks = computeHunks(original, proposed);
      assert.equal(
        mix(original, proposed, () => true),
        proposed,
        JSON.stringify({ original, proposed }),
      );
      assert.equal(
        mix(original, proposed, () => false),
        original,
      );
      for (let i = 1; i < hunks.length; i++) {
        const prev = hunks[i - 1]!;
        const h = hunks[i]!;
        assert.ok(h.original.start > prev.original.end && h.proposed.start > prev.proposed.end, "hunks apart");
      }
      const keep = new Set(hunks.map((_, i) => i).filter(() => rand() < 0.5));
      assert.equal(
        review(original, proposed, new Set(hunks.map((_, i) => i).filter((i) => !keep.has(i)))),
        mix(original, proposed, (i) => keep.has(i)),
        JSON.stringify({ original, proposed, keep: [...keep] }),
      );
    }
  });

  it("a change too large to diff line by line is one hunk (bounded work), still exact", () => {
    const a = Array.from({ length: 6000 }, (_, i) => `a${i}\n`).join("");
    const b = Array.from({ length: 6000 }, (_, i) => `b${i}\n`).join("");
    const hunks = computeHunks(`head\n${a}tail\n`, `head\n${b}tail\n`);
    assert.equal(hunks.length, 1);
    assert.deepEqual(hunks[0]!.original, { start: 1, end: 6001 });
  });
});

describe("per-hunk review (HunkReview): the kept text", () => {
  const original = "one\ntwo\nthree\nfour\nfive\n";
  const proposed = "one\nTWO\nthree\nfour\nFIVE\nsix\n";

  it("accept the first hunk, reject the second: only the first is kept", () => {
    assert.equal(review(original, proposed, new Set([1])), "one\nTWO\nthree\nfour\nfive\n");
    assert.equal(review(original, proposed, new Set([0])), "one\ntwo\nthree\nfour\nFIVE\nsix\n");
  });

  it("reject all: the original (the caller answers DIFF_REJECTED); accept all: the proposal", () => {
    assert.equal(review(original, proposed, new Set([0, 1])), original);
    assert.equal(review(original, proposed, new Set()), proposed);
  });

  it("the person's edit inside an accepted hunk is kept; outside every hunk too; inside a rejected one it goes", () => {
    // "TWO" -> "TWO!" (hunk 0), "three" -> "3" (no hunk), then reject hunk 1
    const inHunk: LineEdit = { start: { line: 1, character: 3 }, end: { line: 1, character: 3 }, text: "!" };
    const outside: LineEdit = { start: { line: 2, character: 0 }, end: { line: 2, character: 5 }, text: "3" };
    assert.equal(review(original, proposed, new Set([1]), [inHunk, outside]), "one\nTWO!\n3\nfour\nfive\n");
    // lines the person adds inside hunk 1 go with it when it is rejected
    const grow: LineEdit = { start: { line: 5, character: 3 }, end: { line: 5, character: 3 }, text: "\nseven" };
    assert.equal(review(original, proposed, new Set([1]), [grow]), "one\nTWO\nthree\nfour\nfive\n");
    assert.equal(review(original, proposed, new Set([0]), [grow]), "one\ntwo\nthree\nfour\nFIVE\nsix\nseven\n");
  });

  it("lines the person adds above a hunk move it down", () => {
    const r = new HunkReview(original, proposed);
    r.onEdits([{ start: { line: 0, character: 0 }, end: { line: 0, character: 0 }, text: "zero\nhalf\n" }]);
    assert.deepEqual(r.get(0)?.range, { start: 3, end: 4 });
    assert.deepEqual(r.get(1)?.range, { start: 6, end: 8 });
    assert.equal(r.atProposedLine(3), 0);
    assert.equal(r.atProposedLine(1), undefined);
    assert.equal(r.atOriginalLine(4), 1);
  });

  it("a hunk is decided once; unknown numbers decide nothing (control: an undecided one does)", () => {
    const r = new HunkReview(original, proposed);
    assert.equal(r.accept(5), false);
    assert.equal(r.reject(-1), undefined);
    assert.equal(r.accept(0), true);
    assert.equal(r.accept(0), false);
    assert.equal(r.reject(0), undefined);
    assert.equal(r.complete, false);
    assert.ok(r.reject(1));
    assert.equal(r.complete, true);
  });

  it("a rejection whose edit did not apply is undone: the hunk is undecided again (control: an accepted one stays)", () => {
    const r = new HunkReview(original, proposed);
    assert.ok(r.reject(1));
    assert.equal(r.undecide(1), true);
    assert.equal(r.get(1)?.state, "undecided");
    assert.equal(r.complete, false);
    assert.ok(r.reject(1), "rejected again, as the person's next click does");
    assert.equal(r.accept(0), true);
    assert.equal(r.undecide(0), false);
    assert.equal(r.get(0)?.state, "accepted");
    assert.equal(r.undecide(7), false);
  });
});

describe("shiftRange", () => {
  const at = (line: number, character = 0) => ({ line, character });
  it("moves a range below an edit, leaves one above it, grows one that the edit touches", () => {
    const r = { start: 3, end: 5 };
    assert.deepEqual(shiftRange(r, { start: at(0), end: at(0), text: "x\n" }), { start: 4, end: 6 });
    assert.deepEqual(shiftRange(r, { start: at(6), end: at(6), text: "x\n" }), r);
    assert.deepEqual(shiftRange(r, { start: at(4, 1), end: at(4, 1), text: "\n\n" }), { start: 3, end: 7 });
    // deleting its whole lines empties it where it was
    assert.deepEqual(shiftRange(r, { start: at(3), end: at(5), text: "" }), { start: 3, end: 3 });
    // deleting two whole lines above it
    assert.deepEqual(shiftRange(r, { start: at(0), end: at(2), text: "" }), { start: 1, end: 3 });
  });
});
