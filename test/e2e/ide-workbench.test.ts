import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { diffTitle } from "../../src/protocols/ide/diffs.ts";
import { bounded } from "../helpers/bounded.ts";
import { submitPrompt, toolResultText } from "../helpers/claude-turns.ts";
import { e2e } from "../helpers/fixture.ts";
import { jsonOf, textsOf } from "../helpers/ide-client.ts";

/**
 * The real Claude Code CLI against the IDE server with a REAL workbench (code-server + the ccb
 * bridge extension, shown in a real Chromium that is its person). The person accepts or rejects a
 * diff with clicks on the diff's title-bar buttons (CDP mouse events); selecting text is driven
 * through the bridge (editor.setSelection).
 */

const lastUserText = (body: any): string => JSON.stringify(body.messages.at(-1)?.content ?? "");

describe("real claude CLI + real workbench through ccb's IDE server", () => {
  const f = e2e({
    prefix: "ccb-ide-wb-",
    files: { "main.ts": "export const x = 1;\nexport const y = 5;\n", "bad.json": '{ "name": "ccb", , }\n' },
    workbench: "ide",
    claude: { allowedTools: ["mcp__ide__getDiagnostics", "Read"] },
    model: (n) => {
      if (n === 0) return { toolUses: [{ name: "mcp__ide__getDiagnostics", input: { uri: `file://${bad}` } }] };
      if (n === 1) return { toolUses: [{ name: "Read", input: { file_path: file } }] };
      if (n === 2)
        return { toolUses: [{ name: "Edit", input: { file_path: file, old_string: "x = 1", new_string: "x = 2" } }] };
      if (n === 3)
        return { toolUses: [{ name: "Edit", input: { file_path: file, old_string: "y = 5", new_string: "y = 6" } }] };
      return { text: "Done." };
    },
  });
  const ws = f.ws;
  const file = f.path("main.ts");
  const bad = f.path("bad.json");
  const main = f.main;
  const nextDiff = () => f.diffs();

  /** Wait (polling the editor's tabs) until a diff tab titled `title` is visible in the workbench. */
  async function diffVisible(title: string): Promise<void> {
    const deadline = Date.now() + 120_000;
    let labels: string[] = [];
    while (Date.now() < deadline) {
      const r = (await f.ide.bridgeCall("editor.openEditors", {})) as { tabs: { label: string }[] };
      labels = r.tabs.map((t) => t.label);
      if (labels.includes(title)) return;
      await new Promise((res) => setTimeout(res, 200));
    }
    throw new Error(`no tab titled ${title} within 120 s (tabs: ${JSON.stringify(labels)})`);
  }

  it("the workbench has real diagnostics for the broken JSON file", async () => {
    const seen = new Promise<void>((resolve) => {
      const off = f.ide.core.bridge.require().onEvent((e) => {
        if (e.type === "diagnosticsChanged" && (e.paths as string[]).includes(bad)) {
          off();
          resolve();
        }
      });
    });
    await f.ide.bridgeCall("editor.open", { path: bad });
    await bounded(seen, 120_000, "diagnostics for bad.json from the workbench");
  });

  it("claude connects and a getDiagnostics turn carries the workbench's diagnostics into the next request", async () => {
    const claude = await f.startClaude();
    await claude.waitFor(/for shortcuts/);
    await submitPrompt(claude, "please fix main.ts");
    const second = await main.wait(1);
    const text = toolResultText(second);
    const diags = JSON.parse(text);
    assert.equal(diags[0].uri, `file://${bad}`);
    assert.ok(diags[0].diagnostics.length > 0);
    assert.ok(["Error", "Warning"].includes(diags[0].diagnostics[0].severity));
    assert.equal(typeof diags[0].diagnostics[0].message, "string");
  });

  it("an Edit opens a real diff in the workbench; accepting it there makes claude write the file", async () => {
    await nextDiff();
    await diffVisible(diffTitle(file));
    assert.equal(
      readFileSync(file, "utf8"),
      "export const x = 1;\nexport const y = 5;\n",
      "the IDE never writes the file",
    );
    await f.person.clickTitleAction("Accept proposed changes", () => f.diffs.answers.length === 1);
    const afterEdit = await main.wait(3);
    assert.match(toolResultText(afterEdit), /updated successfully/);
    assert.equal(readFileSync(file, "utf8"), "export const x = 2;\nexport const y = 5;\n");
  });

  it("rejecting the next diff in the workbench leaves the file unchanged", async () => {
    await nextDiff();
    await diffVisible(diffTitle(file));
    const from = f.claude!.output.length;
    await f.person.clickTitleAction("Reject proposed changes", () => f.diffs.answers.length === 2);
    await f.claude!.waitFor(/reject/i, from);
    assert.equal(readFileSync(file, "utf8"), "export const x = 2;\nexport const y = 5;\n");
  });

  it("a selection made in the workbench reaches the model's next request", async () => {
    await f.ide.bridgeCall("editor.open", { path: file });
    const from = f.claude!.output.length;
    await f.ide.bridgeCall("editor.setSelection", {
      path: file,
      selections: [{ anchor: { line: 0, character: 7 }, active: { line: 1, character: 12 } }],
    });
    await f.claude!.waitFor(/2 lines selected/i, from);
    const typed = await submitPrompt(f.claude!, "explain this");
    const req = await main.wait(4);
    await f.claude!.waitFor(/Done\./, typed);
    const text = lastUserText(req);
    assert.match(text, /const x = 2;\\nexport const/);
    assert.match(text, /main\.ts/);
  });
  it("'Send selection to Claude' in the workbench puts an @-mention into claude's prompt box", async () => {
    const from = f.claude!.output.length;
    await f.ide.bridgeCall("commands.execute", { command: "ccb.sendSelection", args: [] });
    await f.claude!.waitFor(/@main\.ts#L1-2/, from);
  });

  it("the other IDE tools answer from the real workbench (protocol client)", async () => {
    const c = await f.ideClient();
    const sel = jsonOf(await c.call("getCurrentSelection"));
    assert.equal(sel.success, true);
    assert.equal(sel.filePath, file);
    assert.equal(sel.text, "const x = 2;\nexport const");
    assert.deepEqual(sel.selection, {
      start: { line: 0, character: 7 },
      end: { line: 1, character: 12 },
      isEmpty: false,
    });
    assert.equal(jsonOf(await c.call("getLatestSelection")).text, "const x = 2;\nexport const");

    assert.deepEqual(textsOf(await c.call("openFile", { filePath: "bad.json", makeFrontmost: false })), [
      JSON.stringify({ success: true, filePath: bad, languageId: "json", lineCount: 2 }),
    ]);
    const tabs = jsonOf(await c.call("getOpenEditors")).tabs;
    const mainTab = tabs.find((t: any) => t.uri === `file://${file}`);
    assert.ok(mainTab, "main.ts is open");
    assert.equal(mainTab.label, "main.ts");
    assert.equal(mainTab.languageId, "typescript");
    assert.equal(typeof mainTab.isActive, "boolean");

    assert.deepEqual(jsonOf(await c.call("checkDocumentDirty", { filePath: file })), {
      success: true,
      filePath: file,
      isDirty: false,
      isUntitled: false,
    });
    const notOpen = join(ws, "never-opened.ts");
    writeFileSync(notOpen, "x\n");
    assert.deepEqual(jsonOf(await c.call("checkDocumentDirty", { filePath: notOpen })), {
      success: false,
      message: `Document not open: ${notOpen}`,
    });
    assert.equal(jsonOf(await c.call("saveDocument", { filePath: file })).success, true);

    const all = jsonOf(await c.call("getDiagnostics"));
    assert.ok(all.some((d: any) => d.uri === `file://${bad}` && d.diagnostics.length > 0));

    const code = await c.call("executeCode", { code: "print(1)" });
    assert.equal(code.isError, true);
    assert.match(textsOf(code)[0]!, /No active Jupyter notebook/);

    assert.deepEqual(textsOf(await c.call("closeAllDiffTabs")), ["CLOSED_0_DIFF_TABS"]);
  });
});
