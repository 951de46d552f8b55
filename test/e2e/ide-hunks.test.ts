import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { submitPrompt, toolResultText } from "../helpers/claude-turns.ts";
import { e2e } from "../helpers/fixture.ts";
import { cursorInto, type Lens } from "../helpers/person-page.ts";

/**
 * Review per hunk, end to end: the real Claude Code CLI proposes two-hunk Edits through ccb's IDE
 * server (openDiff), the diff opens in a real workbench (code-server + the bridge extension) shown
 * in a real Chromium that is its person: they click the "Accept hunk" / "Reject hunk" code lenses
 * (CDP mouse events on the lens), run "Reject hunk at cursor" from the command palette (CDP keys),
 * or click the title bar's "Accept proposed changes". The file on disk and what claude reads hold
 * exactly the hunks kept; all rejected is DIFF_REJECTED; the whole-file accept is unchanged
 * (control). (A hunk number that is no hunk deciding nothing: test/unit/extension/hunks.test.ts; a
 * command cannot be given one from the workbench's UI.)
 */

const LINES = (a: number, b: number, c: number, d: number, e: number) =>
  `export const a = ${a};\nexport const b = ${b};\nexport const c = ${c};\nexport const d = ${d};\nexport const e = ${e};\n`;

describe("review per hunk: real claude CLI, real workbench, a real person's clicks", () => {
  const f = e2e({
    prefix: "ccb-ide-hunks-",
    files: { "main.ts": LINES(1, 2, 3, 4, 5) },
    workbench: "ide",
    claude: { allowedTools: ["Read"] },
    model: (n) => {
      const edit = (from: string, to: string) => ({
        toolUses: [{ name: "Edit", input: { file_path: file, old_string: from, new_string: to } }],
      });
      if (n === 0) return { toolUses: [{ name: "Read", input: { file_path: file } }] };
      // two hunks (a, e): the person keeps a's and rejects e's
      if (n === 1) return edit(LINES(1, 2, 3, 4, 5), LINES(10, 2, 3, 4, 50));
      // two hunks (b, e): the whole-file accept (control)
      if (n === 2) return edit(LINES(10, 2, 3, 4, 5), LINES(10, 20, 3, 4, 50));
      // two hunks (c, e): both rejected
      if (n === 3) return edit(LINES(10, 20, 3, 4, 50), LINES(10, 20, 30, 4, 500));
      return { text: "Done." };
    },
  });
  const file = f.path("main.ts");
  const main = f.main;
  /** What each openDiff answered claude (the IDE tool's result text), in order. */
  const answers = (): readonly string[] => f.diffs.answers;
  const nextDiff = () => f.diffs();
  /** The lenses' texts, top to bottom. */
  const lensTexts = (v: Lens[]) => v.map((l) => l.text);

  it("accept one hunk and reject the other with the code lenses: disk and claude hold only the kept hunk", async () => {
    const claude = await f.startClaude();
    const person = f.person;
    await claude.waitFor(/for shortcuts/);
    await submitPrompt(claude, "please change main.ts");
    await nextDiff();
    const lenses = await person.untilLenses("the hunk code lenses", (v) => v.length === 4);
    assert.deepEqual(lensTexts(lenses), ["Accept hunk", "Reject hunk", "Accept hunk", "Reject hunk"]);
    assert.ok(lenses[2]!.y > lenses[0]!.y, "one pair over each hunk");
    await person.clickLens(/^Accept hunk 1 of 2/);
    // hunk 0 decided, hunk 1 not yet: the review is still open and nothing was written
    const left = await person.untilLenses("hunk 0 shown as accepted", (v) => v.some((l) => l.text === "Accepted"));
    assert.deepEqual(lensTexts(left), ["Accepted", "Accept hunk", "Reject hunk"]);
    assert.equal(answers().length, 0, "no answer to claude while a hunk is undecided");
    assert.equal(readFileSync(file, "utf8"), LINES(1, 2, 3, 4, 5));
    await person.clickLens(/^Reject hunk 2 of 2/);
    const next = await main.wait(2);
    assert.equal(answers()[0], `FILE_SAVED\n${LINES(10, 2, 3, 4, 5)}`);
    assert.equal(readFileSync(file, "utf8"), LINES(10, 2, 3, 4, 5));
    const result = toolResultText(next);
    console.error(`claude's tool result after the per-hunk review: ${JSON.stringify(result)}`);
    assert.doesNotMatch(result, /= 50;/, "the rejected hunk is not in what the model reads");
    assert.match(result, /user modified your proposed changes/, "claude tells the model its proposal was changed");
    // the tab closed by itself. Claude proposes the next change as soon as it has read this answer,
    // and that tab has the same title (CI: the next one was open before this one's close was seen):
    // this review's tab is gone when no more than one proposal tab is open and no diff shows this
    // review's original (a = 1).
    await person.until<{ tabs: number; mine: boolean }>(
      "the diff tab closed",
      `({ tabs: [...document.querySelectorAll(".tabs-container .tab")].filter((t) => (t.getAttribute("aria-label") ?? t.textContent ?? "").includes("proposed by Claude")).length,
          mine: [...document.querySelectorAll(".monaco-diff-editor .editor.original .view-line")].some((e) => e.textContent.replace(/\u00a0/g, " ").trim() === "export const a = 1;") })`,
      (v) => v.tabs <= 1 && !v.mine,
    );
  });

  it("control: the whole-file accept keeps every hunk", async () => {
    const person = f.person;
    await nextDiff();
    await person.untilLenses("the hunk code lenses", (v) => v.length === 4);
    await person.clickTitleAction("Accept proposed changes", () => answers().length === 2);
    await main.wait(3);
    assert.equal(answers()[1], `FILE_SAVED\n${LINES(10, 20, 3, 4, 50)}`);
    assert.equal(readFileSync(file, "utf8"), LINES(10, 20, 3, 4, 50));
  });

  it("rejecting every hunk (the one at the cursor, from the palette, then hunk 0's lens) answers DIFF_REJECTED; the file is unchanged", async () => {
    const person = f.person;
    const claude = f.claude;
    await nextDiff();
    const undecided = lensTexts(await person.untilLenses("the hunk code lenses", (v) => v.length === 4));
    const from = claude!.output.length;
    const state = () => f.ide.bridgeCall("editor.state", {});
    // the cursor off every hunk decides nothing (the control is the same command on hunk 1, below)
    await cursorInto(person, String.raw`/const\sd\s=\s4/`, 3, state);
    await person.palette("Reject hunk at cursor");
    await new Promise((r) => setTimeout(r, 1500));
    assert.deepEqual(lensTexts(await person.lenses()), undecided, "no hunk decided");
    assert.equal(answers().length, 2);
    // the person clicks into hunk 1's proposed line and runs the command from the palette
    await cursorInto(person, String.raw`/const\se\s=\s500/`, 4, state);
    await person.palette("Reject hunk at cursor");
    await person.until<string[]>(
      "hunk 1's original line back in the proposal",
      `[...document.querySelectorAll(".monaco-diff-editor .editor.modified .view-line")].map((e) => e.textContent.replace(/\u00a0/g, " "))`,
      (v) => v.some((t) => t.includes("e = 50;")) && !v.some((t) => t.includes("e = 500")),
    );
    assert.equal(answers().length, 2, "one hunk is still undecided");
    await person.clickLens(/^Reject hunk 1 of 2/);
    await claude!.waitFor(/reject/i, from);
    assert.match(answers()[2] ?? "", /^DIFF_REJECTED/);
    assert.equal(readFileSync(file, "utf8"), LINES(10, 20, 3, 4, 50));
  });
});
