import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { unifiedDiff } from "../../../src/util/unified-diff.ts";

/** Apply a unified diff produced by unifiedDiff to `before` (a minimal patcher: hunks in order). */
function patch(before: string, diff: string): string {
  const a = before === "" ? [] : before.replace(/\n$/, "").split("\n");
  const out: string[] = [];
  let i = 0;
  for (const line of diff.split("\n").slice(2)) {
    const h = /^@@ -(\d+),(\d+) /.exec(line);
    if (h) {
      const start = Number(h[2]) === 0 ? Number(h[1]) : Number(h[1]) - 1;
      while (i < start) out.push(a[i++] as string);
    } else if (line.startsWith(" ")) {
      assert.equal(a[i], line.slice(1));
      out.push(a[i++] as string);
    } else if (line.startsWith("-")) {
      assert.equal(a[i++], line.slice(1));
    } else if (line.startsWith("+")) out.push(line.slice(1));
  }
  while (i < a.length) out.push(a[i++] as string);
  return out.length ? `${out.join("\n")}\n` : "";
}

describe("unifiedDiff", () => {
  test("equal texts: no diff", () => assert.equal(unifiedDiff("a.ts", "x\n", "x\n"), ""));

  test("two far-apart changes make two hunks with three lines of context", () => {
    const before = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n";
    const after = "a\nB\nc\nd\ne\nf\ng\nh\ni\nJ\nk\n";
    assert.equal(
      unifiedDiff("f.ts", before, after),
      "--- a/f.ts\n+++ b/f.ts\n@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n d\n e\n@@ -7,5 +7,5 @@\n g\n h\n i\n-j\n+J\n k\n",
    );
  });

  test("random edits round-trip through a patcher", () => {
    let seed = 7;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed;
    };
    const text = (n: number) => `${Array.from({ length: n }, () => `l${rnd() % 6}`).join("\n")}\n`;
    for (let t = 0; t < 100; t++) {
      const before = text(rnd() % 40);
      const after = text(rnd() % 40);
      const fixedBefore = before === "\n" ? "" : before;
      const fixedAfter = after === "\n" ? "" : after;
      assert.equal(patch(fixedBefore, unifiedDiff("x", fixedBefore, fixedAfter)), fixedAfter, `case ${t}`);
    }
  });
});
