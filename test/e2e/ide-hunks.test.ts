import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createLogging } from "../../cli/logging.ts";
import { type Core, createCore } from "../../src/core/core.ts";
import type { EditorMethod, EditorMethods } from "../../src/core/editor/bridge.ts";
import type { CdpSession } from "../../src/platform/cdp-pipe.ts";
import { type Chromium, launchChromium } from "../../src/platform/chromium.ts";
import { type IdeServer, startIde } from "../../src/protocols/ide/ide.ts";
import { bounded } from "../helpers/bounded.ts";
import { type PtyProcess, startClaude, stopClaude, writeClaudeHome } from "../helpers/claude-session.ts";
import { type FakeAnthropic, isSideRequest, startFakeAnthropic } from "../helpers/fake-anthropic.ts";
import { type IdeWorkbenchFixture, startIdeWorkbench } from "../helpers/ide-workbench.ts";
import { codeServerRoot, node24 } from "../helpers/peers.ts";
import { cursorInto, type Lens, type PersonPage, personPage } from "../helpers/person-page.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

/**
 * Review per hunk, end to end: the real Claude Code CLI proposes two-hunk Edits through ccb's IDE
 * server (openDiff), the diff opens in a real workbench (code-server + the bridge extension) shown
 * in a real Chromium that is its person: they click the "Accept hunk" / "Reject hunk" code lenses
 * (CDP mouse events on the lens), run "Reject hunk at cursor" from the command palette (CDP keys),
 * or click the title bar's "Accept proposed changes". The file on disk and what claude reads hold
 * exactly the hunks kept; all rejected is DIFF_REJECTED; the whole-file accept is unchanged
 * (control). (A hunk number that is no hunk deciding nothing: test/unit/workbench/hunks.test.ts; a
 * command cannot be given one from the workbench's UI.)
 */

const LINES = (a: number, b: number, c: number, d: number, e: number) =>
  `export const a = ${a};\nexport const b = ${b};\nexport const c = ${c};\nexport const d = ${d};\nexport const e = ${e};\n`;

function mainRequests() {
  const list: any[] = [];
  const waiters: { n: number; resolve: (b: any) => void }[] = [];
  return {
    list,
    push(body: any) {
      list.push(body);
      for (const w of [...waiters]) {
        if (!list[w.n]) continue;
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(list[w.n]);
      }
    },
    wait(n: number): Promise<any> {
      if (list[n]) return Promise.resolve(list[n]);
      return bounded(
        new Promise((resolve) => waiters.push({ n, resolve })),
        180_000,
        () => `model request #${n} (${list.length} arrived)`,
      );
    },
  };
}

const toolResultText = (body: any): string => {
  const r = (body.messages.at(-1)?.content ?? []).find((c: any) => c.type === "tool_result");
  return r ? (typeof r.content === "string" ? r.content : r.content.map((c: any) => c.text ?? "").join("")) : "";
};

describe("review per hunk: real claude CLI, real workbench, a real person's clicks", () => {
  const tmp = tmpdirFixture({ prefix: "ccb-ide-hunks-" });
  const ws = join(tmp.path, "proj");
  const home = join(tmp.path, "home");
  const ctmp = join(tmp.path, "tmp");
  const file = join(ws, "main.ts");
  const main = mainRequests();
  const { log } = createLogging({ level: process.env.CCB_TEST_LOG ?? "warn" });
  let api: FakeAnthropic;
  let core: Core;
  let wb: IdeWorkbenchFixture;
  let ide: IdeServer;
  let chromium: Chromium;
  let cdp: CdpSession;
  let claude: PtyProcess | undefined;
  let claudePid: number | undefined;
  const opened: string[] = [];
  const diffWaiters: ((id: string) => void)[] = [];
  /** What each openDiff answered claude (the IDE tool's result text), in order. */
  const answers: string[] = [];

  const bridgeCall = <M extends EditorMethod>(method: M, params: EditorMethods[M]["params"]) =>
    core.bridge.require().call(method, params, { signal: AbortSignal.timeout(60_000) });

  let person: PersonPage;
  /** The lenses' texts, top to bottom. */
  const lensTexts = (v: Lens[]) => v.map((l) => l.text);

  function nextDiff(): Promise<string> {
    if (opened.length > 0) return Promise.resolve(opened.shift()!);
    return bounded(
      new Promise((resolve) => diffWaiters.push(resolve)),
      180_000,
      () => `an openDiff from claude (its screen: ${JSON.stringify(claude?.output.slice(-1200) ?? "")})`,
    );
  }

  before(async () => {
    for (const d of [ws, home, ctmp]) mkdirSync(d);
    writeFileSync(file, LINES(1, 2, 3, 4, 5));
    writeClaudeHome(home, ws);
    const edit = (from: string, to: string) => ({
      toolUses: [{ name: "Edit", input: { file_path: file, old_string: from, new_string: to } }],
    });
    api = await startFakeAnthropic({
      script: ({ body }) => {
        if (isSideRequest(body)) return { text: "Fake title" };
        const n = main.list.length;
        main.push(body);
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
    core = createCore({ roots: [ws], log });
    wb = await startIdeWorkbench(core, log, {
      runtime: "code-server",
      runtimeRoot: codeServerRoot(),
      runtimeNode: node24(),
      headlessClient: false,
      env: { ...process.env, XDG_STATE_HOME: join(tmp.path, "state") },
    });
    chromium = await launchChromium({ url: "about:blank", log, width: 1280, height: 800 });
    cdp = chromium.page;
    await cdp.send("Page.enable");
    await cdp.send("Runtime.enable");
    await cdp.send("Emulation.setDeviceMetricsOverride", {
      width: 1280,
      height: 800,
      deviceScaleFactor: 1,
      mobile: false,
    });
    await cdp.send("Page.navigate", { url: wb.url });
    person = personPage(cdp);
    await bounded(wb.workbench.bridgeConnected, 180_000, "the workbench bridge connecting");
    ide = await startIde({ core, log, lockDir: join(home, ".claude", "ide") });
    ide.diffs.onOpen((e) => {
      const w = diffWaiters.shift();
      if (w) w(e.diffId);
      else opened.push(e.diffId);
    });
    const open = ide.diffs.open.bind(ide.diffs);
    ide.diffs.open = async (args, signal) => {
      const r = await open(args, signal);
      answers.push(r.content.map((c) => ("text" in c ? c.text : "")).join("\n"));
      return r;
    };
  });

  after(async () => {
    if (claude) await stopClaude(claude, claudePid);
    await chromium?.close();
    await ide?.close();
    await wb?.close();
    await core?.dispose();
    await api?.close();
    tmp.cleanup();
  });

  it("accept one hunk and reject the other with the code lenses: disk and claude hold only the kept hunk", async () => {
    const connected = new Promise<number>((resolve) =>
      ide.onClient((e) => e.type === "connected" && e.pid && resolve(e.pid)),
    );
    claude = startClaude({ cwd: ws, home, tmp: ctmp, idePort: ide.port, apiUrl: api.url, allowedTools: ["Read"] });
    claudePid = await bounded(connected, 120_000, "claude connecting to the IDE server");
    await claude.waitFor(/for shortcuts/);
    const from = claude.output.length;
    claude.type("please change main.ts");
    await claude.waitFor(/please\s*change\s*main\.ts/, from);
    claude.type("\r");
    await nextDiff();
    const lenses = await person.untilLenses("the hunk code lenses", (v) => v.length === 4);
    assert.deepEqual(lensTexts(lenses), ["Accept hunk", "Reject hunk", "Accept hunk", "Reject hunk"]);
    assert.ok(lenses[2]!.y > lenses[0]!.y, "one pair over each hunk");
    await person.click(lenses[0]!.x, lenses[0]!.y);
    // hunk 0 decided, hunk 1 not yet: the review is still open and nothing was written
    const left = await person.untilLenses("hunk 0 shown as accepted", (v) => v.some((l) => l.text === "Accepted"));
    assert.deepEqual(lensTexts(left), ["Accepted", "Accept hunk", "Reject hunk"]);
    assert.equal(answers.length, 0, "no answer to claude while a hunk is undecided");
    assert.equal(readFileSync(file, "utf8"), LINES(1, 2, 3, 4, 5));
    const reject = left.find((l) => l.text === "Reject hunk")!;
    await person.click(reject.x, reject.y);
    const next = await main.wait(2);
    assert.equal(answers[0], `FILE_SAVED\n${LINES(10, 2, 3, 4, 5)}`);
    assert.equal(readFileSync(file, "utf8"), LINES(10, 2, 3, 4, 5));
    const result = toolResultText(next);
    console.error(`claude's tool result after the per-hunk review: ${JSON.stringify(result)}`);
    assert.doesNotMatch(result, /= 50;/, "the rejected hunk is not in what the model reads");
    assert.match(result, /user modified your proposed changes/, "claude tells the model its proposal was changed");
    // the tab closed by itself
    await person.until<number>(
      "the diff tab closed",
      `document.querySelectorAll(".monaco-diff-editor").length`,
      (v) => v === 0,
    );
  });

  it("control: the whole-file accept keeps every hunk", async () => {
    await nextDiff();
    await person.untilLenses("the hunk code lenses", (v) => v.length === 4);
    await person.clickTitleAction("Accept proposed changes");
    await main.wait(3);
    assert.equal(answers[1], `FILE_SAVED\n${LINES(10, 20, 3, 4, 50)}`);
    assert.equal(readFileSync(file, "utf8"), LINES(10, 20, 3, 4, 50));
  });

  it("rejecting every hunk (the one at the cursor, from the palette, then hunk 0's lens) answers DIFF_REJECTED; the file is unchanged", async () => {
    await nextDiff();
    const undecided = lensTexts(await person.untilLenses("the hunk code lenses", (v) => v.length === 4));
    const from = claude!.output.length;
    const state = () => bridgeCall("editor.state", {});
    // the cursor off every hunk decides nothing (the control is the same command on hunk 1, below)
    await cursorInto(person, String.raw`/const\sd\s=\s4/`, 3, state);
    await person.palette("Reject hunk at cursor");
    await new Promise((r) => setTimeout(r, 1500));
    assert.deepEqual(lensTexts(await person.lenses()), undecided, "no hunk decided");
    assert.equal(answers.length, 2);
    // the person clicks into hunk 1's proposed line and runs the command from the palette
    await cursorInto(person, String.raw`/const\se\s=\s500/`, 4, state);
    await person.palette("Reject hunk at cursor");
    await person.until<string[]>(
      "hunk 1's original line back in the proposal",
      `[...document.querySelectorAll(".monaco-diff-editor .editor.modified .view-line")].map((e) => e.textContent.replace(/\u00a0/g, " "))`,
      (v) => v.some((t) => t.includes("e = 50;")) && !v.some((t) => t.includes("e = 500")),
    );
    assert.equal(answers.length, 2, "one hunk is still undecided");
    await person.clickLens(/^Reject hunk 1 of 2/);
    await claude!.waitFor(/reject/i, from);
    assert.match(answers[2] ?? "", /^DIFF_REJECTED/);
    assert.equal(readFileSync(file, "utf8"), LINES(10, 20, 3, 4, 50));
  });
});
