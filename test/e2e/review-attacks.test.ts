import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, afterEach, before, describe, it } from "node:test";
import { createLogging } from "../../cli/logging.ts";
import { isCcbError } from "../../src/core/errors.ts";
import type { IdeServer } from "../../src/protocols/ide/ide.ts";
import { workspaceTools } from "../../src/tools/catalog.ts";
import { runTool } from "../../src/tools/kernel.ts";
import { keepArtifacts } from "../helpers/artifacts.ts";
import { startWorkbenchIde, type WorkbenchIde } from "../helpers/ide-workbench.ts";
import { cursorInto, type PersonPage } from "../helpers/person-page.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { eventually } from "../helpers/workbench.ts";

keepArtifacts(import.meta.url);

/**
 * A diff review's decisions are the person's: the model cannot approve its own change through the
 * workbench's commands. Real workbench (code-server + the bridge extension) shown in a real Chromium
 * that is its person; the review is the IDE front end's openDiff (what claude's proposals open);
 * the model acts through the tool it has, vscode_execute_command (run through the tool kernel, as
 * every front end runs it), or, to test the extension's own guard without the tool's refusal in
 * front of it, the bridge method that tool calls. Attacks: the decision commands by name, through
 * runCommands, through the code lenses' quick pick (codelens.showLensesInCurrentLine, then
 * workbench.action.acceptSelectedQuickOpenItem), through a command palette opened by the model
 * (closed before the person's next Enter), and saving the proposal after typing into it; and a model
 * command that waits on the person (Save As, up to 110 s) locking them out of their review (its input
 * is closed and it stops blocking after a few seconds); and a person's own typing in the proposal,
 * which the web workbench's default auto save would have saved (accepted) a second later. Controls:
 * the person's clicks, palette and Ctrl+S decide; a harmless command runs.
 */

const LINES = (a: number, e: number) =>
  `export const a = ${a};\nexport const b = 2;\nexport const c = 3;\nexport const d = 4;\nexport const e = ${e};\n`;
const PROPOSED = LINES(10, 50);
const QUICK_INPUT_OPEN = `!!document.querySelector(".quick-input-widget") && getComputedStyle(document.querySelector(".quick-input-widget")).display !== "none"`;

describe("review decisions are the person's: the model's commands cannot decide (real workbench, real Chromium)", () => {
  const tmp = tmpdirFixture({ prefix: "ccb-review-attacks-" });
  const ws = join(tmp.path, "proj");
  const file = join(ws, "app.ts");
  const { log } = createLogging({ level: process.env.CCB_TEST_LOG ?? "warn" });
  let w: WorkbenchIde;
  let ide: IdeServer;
  let person: PersonPage;
  let tabs = 0;

  const executeTool = workspaceTools.find((t) => t.name === "vscode_execute_command")!;
  /** The model runs a workbench command with its tool. */
  const model = (args: { command: string; args?: unknown[]; waitSeconds?: number }) =>
    runTool(executeTool, executeTool.input.parse(args), {
      core: w.core,
      signal: AbortSignal.timeout(120_000),
      log: w.core.log,
    }) as Promise<{ text: string; structured: { result: unknown } }>;

  /** Open a two-hunk review (a, e) as claude's openDiff does; `outcome` is what claude would be answered. */
  const openReview = async () => {
    writeFileSync(file, LINES(1, 5));
    const tabName = `review-${++tabs}`;
    const review = { outcome: undefined as string | undefined };
    void ide.diffs
      .open({ path: file, newContents: PROPOSED, tabName, connectionId: 1 }, new AbortController().signal)
      .then((r) => {
        review.outcome = r.content.map((c) => ("text" in c ? c.text : "")).join("\n");
      });
    const lenses = await person.untilLenses("the hunk code lenses", (v) => v.length === 4);
    assert.deepEqual(
      lenses.map((l) => l.tooltip.replace(/:.*/, "")),
      ["Accept hunk 1 of 2", "Reject hunk 1 of 2", "Accept hunk 2 of 2", "Reject hunk 2 of 2"],
    );
    return review;
  };
  /** After the settle window: nothing was decided, the lenses still offer every hunk, nothing written. */
  const stillPending = async (review: { outcome?: string }, what: string) => {
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal(review.outcome, undefined, `${what}: the review is still open`);
    assert.deepEqual(
      (await person.lenses()).map((l) => l.text),
      ["Accept hunk", "Reject hunk", "Accept hunk", "Reject hunk"],
      `${what}: no hunk decided`,
    );
    assert.equal(readFileSync(file, "utf8"), LINES(1, 5), `${what}: the file is unchanged`);
  };
  /** From now on the page records the text of every quick input (picker, palette, input box) shown, in window.__ccbQuickInputs. */
  const recordQuickInputs = () =>
    person.evaluate<boolean>(`(() => {
      window.__ccbQuickInputs = [];
      const seen = () => { const q = document.querySelector(".quick-input-widget"); if (!q || getComputedStyle(q).display === "none") return;
        const t = [q.querySelector(".quick-input-title")?.textContent ?? "", q.querySelector(".quick-input-box input")?.value ?? "", ...[...q.querySelectorAll(".quick-input-list .monaco-list-row")].map((r) => r.textContent)].join(" | ");
        if (t.trim() && window.__ccbQuickInputs.at(-1) !== t) window.__ccbQuickInputs.push(t); };
      window.__ccbQuickObserver?.disconnect();
      window.__ccbQuickObserver = new MutationObserver(seen);
      window.__ccbQuickObserver.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
      return true; })()`);
  /** The person clicks into a proposed line: the diff's proposed side has focus, the cursor on that line. */
  const cursorTo = (re: string, line: number) => cursorInto(person, re, line, () => w.bridgeCall("editor.state", {}));
  const answered = (review: { outcome?: string }) => eventually("the review answered", () => review.outcome, 60_000);
  const denied = async (p: Promise<unknown>, what: string) =>
    assert.rejects(p, (err: unknown) => {
      assert.ok(isCcbError(err, "PERMISSION_DENIED"), `${what}: ${String(err)}`);
      assert.match((err as Error).message, /person/);
      return true;
    });

  before(async () => {
    mkdirSync(ws, { recursive: true });
    writeFileSync(file, LINES(1, 5));
    w = await startWorkbenchIde({
      workspace: ws,
      stateDir: join(tmp.path, "state"),
      lockDir: join(tmp.path, "ide"),
      log,
    });
    ide = w.ide;
    person = w.window.person;
  });

  afterEach(async () => {
    await ide?.diffs.closeAll();
    await person?.until<number>(
      "no diff open",
      `document.querySelectorAll(".monaco-diff-editor").length`,
      (v) => v === 0,
    );
  });

  after(async () => {
    await w?.close();
    tmp.cleanup();
  });

  it("the tool refuses the decision commands and runCommands; control: a harmless command runs, the person's clicks decide", async () => {
    const review = await openReview();
    await denied(model({ command: "ccb.diff.accept" }), "ccb.diff.accept");
    await denied(model({ command: "ccb.diff.acceptHunk", args: [{ hunk: 0 }] }), "ccb.diff.acceptHunk");
    await denied(
      model({ command: "runCommands", args: [{ commands: [{ command: "ccb.diff.accept" }] }] }),
      "runCommands",
    );
    await stillPending(review, "the tool");
    // control: a harmless command through the same tool (the shared panel's terminals, an empty list)
    const listed = await model({ command: "ccb.terminals.list" });
    assert.ok(Array.isArray(listed.structured.result), listed.text);
    await new Promise((r) => setTimeout(r, 1500));
    // control: the person decides with the lenses
    await person.clickLens(/^Accept hunk 1 of 2/);
    await person.untilLenses("hunk 1 shown as accepted", (v) => v.some((l) => l.text === "Accepted"));
    await person.clickLens(/^Reject hunk 2 of 2/);
    await answered(review);
    assert.equal(review.outcome, `FILE_SAVED\n${LINES(10, 5)}`);
  });

  it("the extension refuses the decision commands while a model command runs: by name and through runCommands", async () => {
    const review = await openReview();
    await w.bridgeCall("commands.execute", {
      command: "runCommands",
      args: [{ commands: [{ command: "ccb.diff.acceptHunk", args: { hunk: 1 } }, "ccb.diff.accept"] }],
    });
    await stillPending(review, "runCommands");
    for (const command of ["ccb.diff.acceptHunk", "ccb.diff.rejectHunk"])
      assert.deepEqual(await w.bridgeCall("commands.execute", { command, args: [{ hunk: 0 }] }), { result: false });
    assert.deepEqual(await w.bridgeCall("commands.execute", { command: "ccb.diff.accept", args: [] }), {
      result: false,
    });
    await stillPending(review, "the commands by name");
    // control: the person's palette decides the hunk at the cursor, then the title button the rest
    await cursorTo(String.raw`/const\se\s=\s50/`, 4);
    await person.palette("Reject hunk at cursor");
    await person.untilLenses("hunk 2 rejected", (v) => v.length === 2);
    await person.clickTitleAction("Accept proposed changes", () => review.outcome !== undefined);
    await answered(review);
    assert.equal(review.outcome, `FILE_SAVED\n${LINES(10, 5)}`);
  });

  it("the code lenses' quick pick accepted by the model decides nothing; control: the person's click on the same lens does", async () => {
    const review = await openReview();
    await cursorTo(String.raw`/const\sa\s=\s10/`, 0);
    await recordQuickInputs();
    // the model shows the lenses of the cursor's line in a quick pick and accepts its first item
    const shown = model({ command: "codelens.showLensesInCurrentLine", waitSeconds: 30 });
    shown.catch(() => undefined);
    await person.until<string[]>(
      "the lenses' quick pick shown",
      "window.__ccbQuickInputs",
      (v) => v.some((t) => t.includes("Accept hunk")),
      30_000,
    );
    await model({ command: "workbench.action.acceptSelectedQuickOpenItem" });
    await shown.catch(() => undefined);
    await stillPending(review, "the lenses' quick pick");
    assert.equal(await person.evaluate<boolean>(QUICK_INPUT_OPEN), false, "no pick is left open");
    // control: the person clicks the same lens
    await person.clickLens(/^Accept hunk 1 of 2/);
    await person.untilLenses("hunk 1 shown as accepted", (v) => v.some((l) => l.text === "Accepted"));
    assert.equal(review.outcome, undefined, "hunk 2 is still undecided");
  });

  it("a command palette the model opened on the decision is closed before the person's next Enter", async () => {
    const review = await openReview();
    await cursorTo(String.raw`/const\sa\s=\s10/`, 0);
    await recordQuickInputs();
    await model({ command: "workbench.action.quickOpen", args: [">Accept hunk at cursor"] });
    // it was open on the accept command, and it is closed now that the model's call has answered
    assert.ok(
      (await person.evaluate<string[]>("window.__ccbQuickInputs")).some((t) => t.includes("Accept hunk at cursor")),
      "the model's palette showed the accept command",
    );
    // closed within the guard's quiet window (SETTLE_MS), while the person's decisions are still refused
    await person.until<boolean>("the model's palette closed", QUICK_INPUT_OPEN, (v) => !v, 10_000);
    // the person's next Enter (the picker would have run the accept) and the model's own accept decide nothing
    await person.key("Enter", "Enter", 13, { text: "\r" });
    await model({ command: "workbench.action.acceptSelectedQuickOpenItem" });
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal(review.outcome, undefined, "the review is still open");
    assert.ok(!(await person.lenses()).some((l) => l.text === "Accepted"), "no hunk accepted");
    assert.equal(readFileSync(file, "utf8"), LINES(1, 5), "the file is unchanged");
    // control: the person runs the same palette item
    await person.palette("Accept hunk at cursor");
    await person.untilLenses("hunk 1 shown as accepted", (v) => v.some((l) => l.text === "Accepted"));
    assert.equal(review.outcome, undefined, "hunk 2 is still undecided");
  });

  it("a model command waiting on the person (Save As) does not lock the person out of their review", async () => {
    const review = await openReview();
    await cursorTo(String.raw`/const\sa\s=\s10/`, 0);
    await recordQuickInputs();
    // the model asks for Save As and would wait for an answer up to 110 s
    const saving = model({ command: "workbench.action.files.saveAs", waitSeconds: 110 });
    saving.catch(() => undefined);
    await person.until<string[]>("Save As asks the person", "window.__ccbQuickInputs", (v) => v.length > 0, 30_000);
    // nobody answers it: ccb closes it after a few seconds (long before the model's 110 s), and the
    // model's command settles without a TIMEOUT
    await person.until<boolean>("the Save As input closed by ccb", QUICK_INPUT_OPEN, (v) => !v, 30_000);
    await saving;
    // the person accepts the review with the title button
    await person.clickTitleAction("Accept proposed changes", () => review.outcome !== undefined);
    await answered(review);
    assert.equal(review.outcome, `FILE_SAVED\n${PROPOSED}`);
  });

  it("the person's own typing in the proposal decides nothing until they save it (no auto save of a proposal)", async () => {
    // A web workbench auto-saves after 1 s by default, and a save of the proposal accepts it: ccb's
    // settings keep auto save to the workspace's files. Three auto-save delays pass, then the person saves.
    const review = await openReview();
    await cursorTo(String.raw`/const\sc\s=\s3/`, 2);
    for (const ch of "// mine ") await person.key(ch === " " ? " " : ch, "", 0, { text: ch });
    await person.until<boolean>(
      "the person's text in the proposal",
      `[...document.querySelectorAll(".monaco-diff-editor .editor.modified .view-line")].some((e) => e.textContent.replace(/\\u00a0/g, " ").includes("// mine"))`,
      (v) => v,
      30_000,
    );
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(review.outcome, undefined, "the review is still open");
    assert.equal(readFileSync(file, "utf8"), LINES(1, 5), "the file is unchanged");
    // control: the person saves (Ctrl+S): that accepts, with their text
    await person.key("s", "KeyS", 83, { modifiers: 2 });
    await answered(review);
    assert.match(review.outcome ?? "", /^FILE_SAVED\n[\s\S]*\/\/ mine /);
  });

  it("saving the proposal after the model typed into it accepts nothing", async () => {
    const review = await openReview();
    await cursorTo(String.raw`/const\sa\s=\s10/`, 0);
    await model({ command: "type", args: [{ text: "// typed by the model\n" }] });
    await person.until<boolean>(
      "the model's line in the proposal",
      `[...document.querySelectorAll(".monaco-diff-editor .editor.modified .view-line")].some((e) => e.textContent.replace(/\\u00a0/g, " ").includes("typed by the model"))`,
      (v) => v,
      30_000,
    );
    await model({ command: "workbench.action.files.save" });
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal(review.outcome, undefined, "the review is still open");
    assert.equal(readFileSync(file, "utf8"), LINES(1, 5), "the file is unchanged");
    // control: the person saves (Ctrl+S in the proposal): that accepts, with the text as it stands
    await cursorTo(String.raw`/const\sb\s=\s2/`, 2);
    await person.key("s", "KeyS", 83, { modifiers: 2 });
    await answered(review);
    assert.match(review.outcome ?? "", /^FILE_SAVED\n.*typed by the model/);
  });
});
