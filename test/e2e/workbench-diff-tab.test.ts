import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type Core, createCore } from "../../src/core/core.ts";
import { silentLogger } from "../../src/core/log.ts";
import type { CdpSession } from "../../src/platform/cdp-pipe.ts";
import { type Chromium, launchChromium } from "../../src/platform/chromium.ts";
import { diffTitle } from "../../src/protocols/ide/diffs.ts";
import { type IdeServer, startIde } from "../../src/protocols/ide/ide.ts";
import { repoRoot } from "../helpers/cli.ts";
import { type IdeWorkbenchFixture, startIdeWorkbench } from "../helpers/ide-workbench.ts";
import { codeServerRoot, node24 } from "../helpers/peers.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

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
  let core: Core;
  let wb: IdeWorkbenchFixture;
  let ide: IdeServer;
  let chromium: Chromium;
  let cdp: CdpSession;

  const evaluate = async <T>(expression: string): Promise<T> => {
    const r = (await cdp.send("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true })) as {
      result: { value?: unknown };
      exceptionDetails?: { text: string };
    };
    if (r.exceptionDetails) throw new Error(`page: ${r.exceptionDetails.text}`);
    return r.result.value as T;
  };
  const until = async <T>(what: string, expression: string, ok: (v: T) => boolean, timeoutMs = 180_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    let last: T | undefined;
    for (;;) {
      last = await evaluate<T>(expression).catch(() => undefined);
      if (last !== undefined && ok(last)) return last;
      if (Date.now() > deadline) throw new Error(`${what}: last ${JSON.stringify(last)}`);
      await new Promise((r) => setTimeout(r, 300));
    }
  };
  const screenshot = async (name: string) => {
    const shot = (await cdp.send("Page.captureScreenshot", { format: "png" })) as { data: string };
    writeFileSync(join(ARTIFACTS, name), Buffer.from(shot.data, "base64"));
  };

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    mkdirSync(join(ws, "src"), { recursive: true });
    writeFileSync(file, 'export const greeting = "hello";\n');
    const state = join(tmp.path, "state");
    core = createCore({ roots: [ws], log: silentLogger });
    wb = await startIdeWorkbench(core, silentLogger, {
      runtime: "code-server",
      runtimeRoot: codeServerRoot(),
      runtimeNode: node24(),
      headlessClient: false,
      env: { ...process.env, XDG_STATE_HOME: state },
    });
    ide = await startIde({ core, log: silentLogger, lockDir: join(tmp.path, "ide") });
    chromium = await launchChromium({ url: "about:blank", log: silentLogger, width: 1280, height: 800 });
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
    await wb.workbench.bridgeConnected;
  });

  after(async () => {
    await chromium?.close();
    await ide?.close();
    await wb?.close();
    await core?.dispose();
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
    const outcome = ide.diffs.open(
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
    await ide.diffs.closeAll();
    assert.match(JSON.stringify(await outcome), /DIFF_REJECTED/);
  });
});
