import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { BridgeSlot, type EditorBridge } from "../../../../src/core/editor/bridge.ts";
import { isCcbError } from "../../../../src/core/errors.ts";
import { silentLogger } from "../../../../src/core/log.ts";
import { BridgeEditor } from "../../../../src/protocols/ide/bridge-editor.ts";
import type { EditorEvent } from "../../../../src/protocols/ide/editor.ts";
import { tmpdirFixture } from "../../../helpers/tmp.ts";

/**
 * The production IdeEditor's mapping between the bridge contract (src/editor-wire/contract.ts) and
 * the IDE tools, over a scripted EditorBridge (the e2e tests run it against the real extension).
 */
class ScriptedBridge implements EditorBridge {
  calls: { method: string; params: any }[] = [];
  answers: Record<string, (params: any) => unknown> = {};
  readonly #listeners = new Set<(e: { type: string; [k: string]: unknown }) => void>();
  async call(method: string, params: unknown): Promise<unknown> {
    this.calls.push({ method, params });
    const a = this.answers[method];
    if (!a) throw new Error(`unexpected ${method}`);
    return a(params);
  }
  onEvent(listener: (e: { type: string; [k: string]: unknown }) => void) {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
  emit(e: { type: string; [k: string]: unknown }) {
    for (const l of this.#listeners) l(e);
  }
}

const signal = new AbortController().signal;

describe("BridgeEditor (bridge contract -> IDE editor)", () => {
  it("without a bridge every editor operation is BRIDGE_UNAVAILABLE with the slot's reason", async () => {
    const slot = new BridgeSlot();
    slot.claim("test").clear("ccb ide was started with --no-workbench.");
    const ed = new BridgeEditor(slot, silentLogger);
    await assert.rejects(
      ed.diagnostics(undefined, signal),
      (e) => isCcbError(e, "BRIDGE_UNAVAILABLE") && /--no-workbench/.test(e.message),
    );
    await assert.rejects(ed.showDiff({ diffId: "d", path: "/x", newContents: "", tabName: "t" }, signal), (e) =>
      isCcbError(e, "BRIDGE_UNAVAILABLE"),
    );
    await ed.closeDiff("d", signal);
    ed.dispose();
  });

  it("maps diffs, diagnostics, documents, notebooks and events", async () => {
    const tmp = tmpdirFixture();
    try {
      const file = join(tmp.path, "a.ts");
      writeFileSync(file, "line one\nline two\n");
      const slot = new BridgeSlot();
      const writer = slot.claim("test");
      const b = new ScriptedBridge();
      writer.set(b);
      const ed = new BridgeEditor(slot, silentLogger);
      const events: EditorEvent[] = [];
      ed.onEvent((e) => events.push(e));

      b.answers["diff.open"] = () => ({ outcome: "accepted", finalText: "edited\n" });
      assert.deepEqual(
        await ed.showDiff({ diffId: "d1", path: file, newContents: "new\n", tabName: "✻ [Claude Code] tab ⧉" }, signal),
        { kind: "accepted", contents: "edited\n" },
      );
      // The editor's title is the file's name in plain ASCII, not the client's tab name.
      const title = `${file.split("/").pop()} (proposed by Claude)`;
      assert.deepEqual(b.calls.at(-1), {
        method: "diff.open",
        params: { id: "d1", path: file, originalText: "line one\nline two\n", proposedText: "new\n", title },
      });
      b.answers["diff.open"] = () => ({ outcome: "closed" });
      assert.deepEqual(
        await ed.showDiff({ diffId: "d2", path: join(tmp.path, "new.ts"), newContents: "n", tabName: "t2" }, signal),
        { kind: "rejected" },
      );
      assert.equal(b.calls.at(-1)!.params.originalText, "", "a new file diffs against nothing");

      b.answers["diagnostics.get"] = () => ({
        files: [
          {
            path: file,
            diagnostics: [
              {
                range: { start: { line: 0, character: 0 }, end: { line: 0, character: 4 } },
                severity: "information",
                message: "m",
                source: "s",
              },
            ],
          },
        ],
      });
      const d = await ed.diagnostics(file, signal);
      assert.equal(d[0]!.diagnostics[0]!.severity, "Info");
      assert.deepEqual(b.calls.at(-1)!.params, { path: file });

      b.answers["editor.state"] = () => ({
        active: {
          path: file,
          uri: `file://${file}`,
          languageId: "typescript",
          version: 1,
          isDirty: false,
          isUntitled: false,
          lineCount: 3,
          selections: [{ anchor: { line: 1, character: 4 }, active: { line: 0, character: 5 } }],
          visibleRanges: [],
        },
        visible: [],
        overlays: [],
        workspaceFolders: [tmp.path],
        focused: true,
      });
      b.answers["document.read"] = () => null;
      assert.deepEqual(await ed.currentSelection(signal), {
        filePath: file,
        text: "one\nline",
        range: { start: { line: 0, character: 5 }, end: { line: 1, character: 4 } },
      });

      b.answers["document.isDirty"] = () => ({ isOpen: true, isDirty: true });
      assert.deepEqual(await ed.documentState(file, signal), { open: true, isDirty: true, isUntitled: false });
      b.answers["document.save"] = () => ({ saved: true, isOpen: true });
      assert.deepEqual(await ed.saveDocument(file, signal), { open: true, saved: true });

      b.answers["editor.open"] = () => ({
        path: file,
        uri: "",
        languageId: "typescript",
        version: 1,
        isDirty: false,
        isUntitled: false,
        lineCount: 3,
        selections: [],
        visibleRanges: [],
      });
      assert.deepEqual(
        await ed.openFile(
          { path: file, preview: false, startText: "two", selectToEndOfLine: false, makeFrontmost: false },
          signal,
        ),
        { languageId: "typescript", lineCount: 3 },
      );
      assert.deepEqual(b.calls.at(-1)!.params, {
        path: file,
        preview: false,
        preserveFocus: true,
        selection: { start: { line: 1, character: 5 }, end: { line: 1, character: 8 } },
      });

      b.answers["notebook.executeCode"] = () => ({
        status: "executed",
        outputs: [
          { mime: "text/plain", text: "2" },
          { mime: "image/png", text: "iVBOR" },
        ],
      });
      assert.deepEqual(await ed.executeCode("1+1", signal), [
        { type: "text", text: "2" },
        { type: "image", data: "iVBOR", mimeType: "image/png" },
      ]);
      b.answers["notebook.executeCode"] = () => ({ status: "declined", outputs: [] });
      await assert.rejects(ed.executeCode("1", signal), (e) => isCcbError(e, "PERMISSION_DENIED"));
      b.answers["notebook.executeCode"] = () => ({ status: "no-notebook", outputs: [] });
      await assert.rejects(
        ed.executeCode("1", signal),
        (e) => isCcbError(e, "UNSUPPORTED") && /No active Jupyter notebook/.test(e.message),
      );

      b.answers["diagnostics.get"] = () => ({ files: "nope" });
      await assert.rejects(ed.diagnostics(undefined, signal), (e) => isCcbError(e, "BRIDGE_ERROR"));

      b.emit({
        type: "selectionChanged",
        path: file,
        text: "one",
        selection: { start: { line: 0, character: 5 }, end: { line: 0, character: 8 } },
        isEmpty: false,
      });
      b.emit({ type: "atMentioned", path: file, lineStart: 0, lineEnd: 1 });
      b.emit({ type: "selectionChanged", path: 42 });
      assert.deepEqual(events, [
        {
          type: "selection",
          selection: {
            filePath: file,
            text: "one",
            range: { start: { line: 0, character: 5 }, end: { line: 0, character: 8 } },
          },
        },
        { type: "atMention", filePath: file, lineStart: 0, lineEnd: 1 },
      ]);

      writer.clear("gone");
      b.emit({ type: "atMentioned", path: file, lineStart: 3, lineEnd: 3 });
      assert.equal(events.length, 2, "no events from a bridge that left");
      const b2 = new ScriptedBridge();
      writer.set(b2);
      b2.emit({ type: "atMentioned", path: file, lineStart: 4, lineEnd: 4 });
      assert.equal(events.length, 3, "a new bridge is subscribed automatically");
      ed.dispose();
    } finally {
      tmp.cleanup();
    }
  });
});
