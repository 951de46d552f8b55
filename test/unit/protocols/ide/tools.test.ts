import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type IdeClient, jsonOf, textsOf } from "../../../helpers/ide-client.ts";
import { startTestIde, type TestIde } from "../../../helpers/ide-fixture.ts";

describe("ide tools: exact output shapes", () => {
  let t: TestIde;
  let c: IdeClient;
  before(async () => {
    t = await startTestIde({
      files: { "src/main.ts": "const a = 1;\nfunction hello() {\n}\n", "dir with space/a%20b.ts": "x\n" },
    });
    c = await t.ready();
  });
  after(async () => t.close());

  it("openFile (frontmost): Opened file: <abs path>, relative paths against the first folder", async () => {
    const r = await c.call("openFile", { filePath: "src/main.ts", startText: "function hello", endText: "}" });
    assert.deepEqual(r.content, [{ type: "text", text: `Opened file: ${join(t.workspace, "src/main.ts")}` }]);
    assert.equal(r.isError, undefined);
    const req = t.editor.opened.at(-1)!;
    assert.equal(req.path, join(t.workspace, "src/main.ts"));
    assert.equal(req.preview, false);
    assert.equal(req.makeFrontmost, true);
    assert.equal(req.selectToEndOfLine, false);
    assert.equal(req.startText, "function hello");
  });

  it("openFile (not frontmost): JSON with languageId and lineCount; empty start/end texts mean none", async () => {
    const r = await c.call("openFile", {
      filePath: join(t.workspace, "src/main.ts"),
      makeFrontmost: false,
      startText: "",
      endText: "",
    });
    assert.deepEqual(jsonOf(r), {
      success: true,
      filePath: join(t.workspace, "src/main.ts"),
      languageId: "typescript",
      lineCount: 3,
    });
    assert.equal(t.editor.opened.at(-1)!.startText, undefined);
  });

  it("openFile: a missing file is an error saying File not found", async () => {
    const r = await c.call("openFile", { filePath: "nope.ts" });
    assert.equal(r.isError, true);
    assert.equal(textsOf(r)[0], "File not found: nope.ts");
  });

  it("openFile: a path outside the workspace is refused", async () => {
    const r = await c.call("openFile", { filePath: "/etc/passwd" });
    assert.equal(r.isError, true);
    assert.match(textsOf(r)[0]!, /PATH_OUTSIDE_WORKSPACE/);
  });

  it("getWorkspaceFolders: folders with name, uri, path, index; rootPath; workspaceFile", async () => {
    const r = await c.call("getWorkspaceFolders");
    assert.deepEqual(jsonOf(r), {
      success: true,
      folders: [{ name: "project", uri: `file://${t.workspace}`, path: t.workspace, index: 0 }],
      rootPath: t.workspace,
      workspaceFile: null,
    });
  });

  it("getDiagnostics: unencoded file:// URIs and Error|Warning|Info|Hint; one file by its (unencoded) URI", async () => {
    const a = join(t.workspace, "src/main.ts");
    const b = join(t.workspace, "dir with space/a%20b.ts");
    const range = { start: { line: 0, character: 6 }, end: { line: 0, character: 7 } };
    t.editor.diagnosticsByPath = [
      { path: a, diagnostics: [{ message: "unused", severity: "Warning", range, source: "ts", code: 6133 }] },
      {
        path: b,
        diagnostics: [
          { message: "bad", severity: "Error", range },
          { message: "note", severity: "Info", range },
          { message: "hint", severity: "Hint", range },
        ],
      },
    ];
    const all = jsonOf(await c.call("getDiagnostics"));
    assert.deepEqual(all, [
      {
        uri: `file://${a}`,
        diagnostics: [{ message: "unused", severity: "Warning", range, source: "ts", code: 6133 }],
      },
      {
        uri: `file://${b}`,
        diagnostics: [
          { message: "bad", severity: "Error", range },
          { message: "note", severity: "Info", range },
          { message: "hint", severity: "Hint", range },
        ],
      },
    ]);
    const one = jsonOf(await c.call("getDiagnostics", { uri: `file://${b}` }));
    assert.equal(one.length, 1);
    assert.equal(one[0].uri, `file://${b}`);
    assert.deepEqual(jsonOf(await c.call("getDiagnostics", { uri: `file://${join(t.workspace, "clean.ts")}` })), []);
  });

  it("getCurrentSelection: success with text, filePath and 0-based selection; no editor -> success false", async () => {
    const filePath = join(t.workspace, "src/main.ts");
    t.editor.selection = {
      filePath,
      text: "const",
      range: { start: { line: 0, character: 0 }, end: { line: 0, character: 5 } },
    };
    assert.deepEqual(jsonOf(await c.call("getCurrentSelection")), {
      success: true,
      text: "const",
      filePath,
      fileUrl: `file://${filePath}`,
      selection: { start: { line: 0, character: 0 }, end: { line: 0, character: 5 }, isEmpty: false },
    });
    t.editor.selection = null;
    assert.deepEqual(jsonOf(await c.call("getCurrentSelection")), {
      success: false,
      message: "No active editor found",
    });
  });

  it("getLatestSelection: the last non-empty selection the editor reported, else success false", async () => {
    t.editor.selection = null;
    assert.deepEqual(jsonOf(await c.call("getLatestSelection")), { success: false, message: "No selection available" });
    const filePath = join(t.workspace, "src/main.ts");
    const sel = {
      filePath,
      text: "hello",
      range: { start: { line: 1, character: 9 }, end: { line: 1, character: 14 } },
    };
    t.editor.emit({ type: "selection", selection: sel });
    await c.waitForNotification("selection_changed", (p) => p.text === "hello");
    t.editor.emit({
      type: "selection",
      selection: { filePath, text: "", range: { start: { line: 2, character: 0 }, end: { line: 2, character: 0 } } },
    });
    await c.waitForNotification("selection_changed", (p) => p.selection.isEmpty === true);
    const r = jsonOf(await c.call("getLatestSelection"));
    assert.equal(r.success, true);
    assert.equal(r.text, "hello");
    assert.deepEqual(r.selection, {
      start: { line: 1, character: 9 },
      end: { line: 1, character: 14 },
      isEmpty: false,
    });
  });

  it("getOpenEditors: tabs with uri, isActive, label, languageId, isDirty (+ VS Code extras)", async () => {
    const p = join(t.workspace, "src/main.ts");
    t.editor.tabs = [
      {
        path: p,
        label: "main.ts",
        languageId: "typescript",
        isActive: true,
        isDirty: true,
        isPinned: false,
        isPreview: false,
        groupIndex: 0,
        isGroupActive: true,
      },
      { uri: "untitled:Untitled-1", label: "Untitled-1", isActive: false, isDirty: false },
    ];
    assert.deepEqual(jsonOf(await c.call("getOpenEditors")), {
      tabs: [
        {
          uri: `file://${p}`,
          isActive: true,
          label: "main.ts",
          languageId: "typescript",
          isDirty: true,
          fileName: p,
          isPinned: false,
          isPreview: false,
          groupIndex: 0,
          viewColumn: 1,
          isGroupActive: true,
        },
        { uri: "untitled:Untitled-1", isActive: false, label: "Untitled-1", languageId: "plaintext", isDirty: false },
      ],
    });
  });

  it("checkDocumentDirty and saveDocument: open and not-open documents", async () => {
    const p = join(t.workspace, "src/main.ts");
    assert.deepEqual(jsonOf(await c.call("checkDocumentDirty", { filePath: p })), {
      success: false,
      message: `Document not open: ${p}`,
    });
    assert.deepEqual(jsonOf(await c.call("saveDocument", { filePath: p })), {
      success: false,
      message: `Document not open: ${p}`,
    });
    t.editor.documents.set(p, { open: true, isDirty: true, isUntitled: false });
    assert.deepEqual(jsonOf(await c.call("checkDocumentDirty", { filePath: p })), {
      success: true,
      filePath: p,
      isDirty: true,
      isUntitled: false,
    });
    assert.deepEqual(jsonOf(await c.call("saveDocument", { filePath: p })), {
      success: true,
      filePath: p,
      saved: true,
      message: "Document saved successfully",
    });
    assert.deepEqual(t.editor.saved, [p]);
    assert.deepEqual(jsonOf(await c.call("checkDocumentDirty", { filePath: p })), {
      success: true,
      filePath: p,
      isDirty: false,
      isUntitled: false,
    });
  });

  it("close_tab always answers TAB_CLOSED; closeAllDiffTabs with nothing open: CLOSED_0_DIFF_TABS", async () => {
    assert.deepEqual(await c.call("close_tab", { tab_name: "no such tab" }), {
      content: [{ type: "text", text: "TAB_CLOSED" }],
    });
    assert.deepEqual(await c.call("closeAllDiffTabs"), { content: [{ type: "text", text: "CLOSED_0_DIFF_TABS" }] });
  });

  it("executeCode: outputs as text and image items after confirmation; declined and no-kernel are clear errors", async () => {
    t.editor.confirmExecution = "yes";
    const r = await c.call("executeCode", { code: "print('Hello, World!')" });
    assert.deepEqual(r.content, [
      { type: "text", text: "Hello, World!" },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
    ]);
    assert.deepEqual(t.editor.executed, ["print('Hello, World!')"]);
    t.editor.confirmExecution = "no";
    const declined = await c.call("executeCode", { code: "1" });
    assert.equal(declined.isError, true);
    assert.match(textsOf(declined)[0]!, /declined/);
    t.editor.confirmExecution = "no-kernel";
    const none = await c.call("executeCode", { code: "1" });
    assert.equal(none.isError, true);
    assert.match(textsOf(none)[0]!, /No active Jupyter notebook/);
    assert.deepEqual(t.editor.executed, ["print('Hello, World!')"]);
  });

  it("invalid arguments are an error result naming the field, and the connection stays usable", async () => {
    const r = await c.call("checkDocumentDirty", { filePath: 42 });
    assert.equal(r.isError, true);
    assert.match(textsOf(r)[0]!, /filePath/);
    assert.equal((await c.request("tools/list")).tools.length, 12);
  });
});

describe("ide tools: no workbench", () => {
  let t: TestIde;
  let c: IdeClient;
  before(async () => {
    t = await startTestIde({ files: { "a.ts": "x\n" } });
    t.editor.connected = false;
    c = await t.ready();
  });
  after(async () => t.close());

  for (const [name, args] of [
    ["openDiff", { old_file_path: "A", new_file_path: "A", new_file_contents: "y\n", tab_name: "t" }],
    ["getDiagnostics", {}],
    ["openFile", { filePath: "a.ts" }],
    ["getCurrentSelection", {}],
    ["getOpenEditors", {}],
    ["executeCode", { code: "1" }],
  ] as const) {
    it(`${name} fails clearly with BRIDGE_UNAVAILABLE`, async () => {
      const a =
        name === "openDiff"
          ? { ...args, old_file_path: join(t.workspace, "a.ts"), new_file_path: join(t.workspace, "a.ts") }
          : args;
      const r = await c.call(name, a);
      assert.equal(r.isError, true);
      assert.match(textsOf(r)[0]!, /BRIDGE_UNAVAILABLE/);
    });
  }

  it("editor-free tools still work", async () => {
    assert.equal(jsonOf(await c.call("getWorkspaceFolders")).folders[0].path, t.workspace);
    assert.deepEqual(textsOf(await c.call("close_tab", { tab_name: "x" })), ["TAB_CLOSED"]);
    assert.deepEqual(textsOf(await c.call("closeAllDiffTabs")), ["CLOSED_0_DIFF_TABS"]);
    assert.equal(t.ide.diffs.size, 0, "the failed openDiff left nothing behind");
  });
});
