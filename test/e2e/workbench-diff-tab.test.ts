import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { silentLogger } from "../../src/core/log.ts";
import { diffTitle } from "../../src/protocols/ide/diffs.ts";
import { keepArtifacts } from "../helpers/artifacts.ts";
import { repoRoot } from "../helpers/cli.ts";
import { startWorkbenchIde, type WorkbenchIde } from "../helpers/ide-workbench.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

keepArtifacts(import.meta.url);

/**
 * What a person sees in the real workbench (code-server + the bridge extension, shown in a real
 * Chromium that is also its only client): the first screen has the workspace's files and no
 * runtime-bundled chat panel; a Claude diff (IDE openDiff, with Claude's own tab name) opens as a
 * tab titled after the file in plain ASCII, whose breadcrumb is the file's workspace path.
 * Screenshots go to test-artifacts/.
 */
const ARTIFACTS = join(repoRoot, "test-artifacts");
const CLAUDE_TAB_NAME = "✻ [Claude Code] hello.ts ⧉";

describe("the workbench's first screen and a Claude diff tab (real code-server, real Chromium)", () => {
  const tmp = tmpdirFixture({ prefix: "ccb-diff-tab-" });
  const ws = join(tmp.path, "proj");
  const file = join(ws, "src", "hello.ts");
  let w: WorkbenchIde;

  const evaluate = <T>(expression: string) => w.window.person.evaluate<T>(expression);
  /** Poll the page until `ok` holds (3 minutes unless told). */
  const until = <T>(what: string, expression: string, ok: (v: T) => boolean, timeoutMs = 180_000) =>
    w.window.person.until<T>(what, expression, ok, timeoutMs);
  const screenshot = async (name: string) => {
    const shot = (await w.window.cdp.send("Page.captureScreenshot", { format: "png" })) as { data: string };
    writeFileSync(join(ARTIFACTS, name), Buffer.from(shot.data, "base64"));
  };

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    mkdirSync(join(ws, "src"), { recursive: true });
    writeFileSync(file, 'export const greeting = "hello";\n');
    w = await startWorkbenchIde({
      workspace: ws,
      stateDir: join(tmp.path, "state"),
      lockDir: join(tmp.path, "ide"),
      log: silentLogger,
    });
  });

  after(async () => {
    await w?.close();
    tmp.cleanup();
  });

  it("opens on a clean layout: the workspace's files, no chat panel", async () => {
    await until<boolean>(
      "the explorer shows the workspace",
      `!!document.querySelector('.explorer-folders-view .monaco-list-row[aria-label="src"], .explorer-folders-view .monaco-list-row')`,
      (v) => v,
    );
    const layout = await evaluate<{ auxVisible: boolean; chatText: boolean; overflowX: boolean }>(`(() => {
      const aux = document.querySelector(".part.auxiliarybar");
      const visible = (el) => !!el && el.offsetWidth > 0 && el.offsetHeight > 0 && getComputedStyle(el).display !== "none" && getComputedStyle(el).visibility !== "hidden";
      const se = document.scrollingElement;
      return { auxVisible: visible(aux), chatText: /Build with Agent/i.test(document.body.innerText), overflowX: se.scrollWidth > se.clientWidth };
    })()`);
    await screenshot("workbench-first-screen.png");
    assert.deepEqual(layout, { auxVisible: false, chatText: false, overflowX: false });
  });

  it("a Claude diff opens as the file itself: ASCII title, workspace path in the breadcrumb, no temp folder", async () => {
    const outcome = w.ide.diffs.open(
      {
        path: file,
        newContents: 'export const greeting = "hello, world";\n',
        tabName: CLAUDE_TAB_NAME,
        connectionId: 1,
      },
      new AbortController().signal,
    );
    const title = diffTitle(file);
    assert.equal(title, "hello.ts (proposed by Claude)");
    assert.match(title, /^[\x20-\x7e]+$/, "plain ASCII: every font has the glyphs");
    const tab = await until<string>(
      "the diff tab is active",
      `document.querySelector(".tabs-container .tab.active .label-name")?.textContent ?? ""`,
      (v) => v === title,
    );
    assert.equal(tab, title);
    const crumbs = await until<string[]>(
      "the breadcrumb of the diff",
      `[...document.querySelectorAll(".breadcrumbs-control .monaco-breadcrumb-item")].map((e) => e.textContent.trim()).filter(Boolean)`,
      (v) => v.includes("hello.ts"),
      30_000,
    );
    assert.deepEqual(crumbs.slice(0, 2), ["src", "hello.ts"]);
    assert.ok(!crumbs.some((c) => /ccb-diff|tmp|ccb-/.test(c)), `no temporary folder: ${JSON.stringify(crumbs)}`);
    const bothSides = await until<string[]>(
      "both sides rendered",
      `[...document.querySelectorAll(".monaco-diff-editor .view-lines")].map((e) => e.textContent.replace(/\\u00a0/g, " "))`,
      (v) => v.length === 2 && v.some((t) => t.includes("hello, world")),
    );
    assert.ok(
      bothSides.some((t) => t.includes('"hello"') && !t.includes("world")),
      "the original on one side",
    );
    await screenshot("workbench-diff-tab.png");
    await w.ide.diffs.closeAll();
    assert.match(JSON.stringify(await outcome), /DIFF_REJECTED/);
  });
});
