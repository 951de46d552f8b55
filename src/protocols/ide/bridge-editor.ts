import { readFile } from "node:fs/promises";
import {
  type BridgeSlot,
  callEditor,
  type EditorBridge,
  type EditorMethod,
  type EditorMethods,
} from "../../core/editor/bridge.ts";
import { CcbError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import { BridgeEvent } from "../../editor-wire/contract.ts";
import { findTextRange, severityName, textInRange } from "./converters.ts";
import { diffTitle } from "./diffs.ts";
import type { DiffOutcome, EditorEvent, ExecuteOutput, IdeEditor } from "./editor.ts";

/** BRIDGE_UNAVAILABLE for the IDE tools, with what to do about it. */
export function noEditor(reason: string): CcbError {
  return new CcbError("BRIDGE_UNAVAILABLE", `No workbench is attached to this IDE server: ${reason}`, {
    hint: "Editor tools need the workbench: run `ccb ide` without --no-workbench and keep the workbench open in a browser.",
  });
}

/**
 * The production IdeEditor: every operation is a typed call through the workbench bridge
 * (src/editor-wire/contract.ts). Without a connected bridge each call fails with BRIDGE_UNAVAILABLE
 * and the reason.
 */
export class BridgeEditor implements IdeEditor {
  readonly #slot: BridgeSlot;
  readonly #log: Logger;
  readonly #listeners = new Set<(e: EditorEvent) => void>();
  #unsubscribe: (() => void) | undefined;
  readonly #offSlot: () => void;

  constructor(slot: BridgeSlot, log: Logger) {
    this.#slot = slot;
    this.#log = log;
    this.#offSlot = slot.onChange(() => this.#resubscribe());
    this.#resubscribe();
  }

  dispose(): void {
    this.#offSlot();
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }

  status(): { connected: boolean; reason: string } {
    return this.#slot.status();
  }

  #resubscribe(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    if (!this.#slot.status().connected) return;
    let bridge: EditorBridge;
    try {
      bridge = this.#bridge();
    } catch {
      return;
    }
    this.#unsubscribe = bridge.onEvent((raw) => {
      const parsed = BridgeEvent.safeParse(raw);
      if (!parsed.success) return;
      const ev = parsed.data;
      if (ev.type === "selectionChanged") {
        this.#emit({ type: "selection", selection: { filePath: ev.path, text: ev.text, range: ev.selection } });
      } else if (ev.type === "atMentioned") {
        this.#emit({ type: "atMention", filePath: ev.path, lineStart: ev.lineStart, lineEnd: ev.lineEnd });
      }
    });
  }

  #emit(e: EditorEvent): void {
    for (const l of this.#listeners) {
      try {
        l(e);
      } catch (err) {
        this.#log.debug(`editor event listener failed: ${(err as Error).message}`);
      }
    }
  }

  onEvent(listener: (event: EditorEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #bridge(): EditorBridge {
    const st = this.#slot.status();
    if (!st.connected) throw noEditor(st.reason);
    return this.#slot.require();
  }

  #call<M extends EditorMethod>(
    method: M,
    params: EditorMethods[M]["params"],
    signal: AbortSignal,
  ): Promise<EditorMethods[M]["result"]> {
    return callEditor(this.#bridge(), method, params, { signal });
  }

  async #documentText(path: string, signal: AbortSignal): Promise<string | undefined> {
    const doc = await this.#call("document.read", { path }, signal);
    if (doc) return doc.text;
    try {
      return await readFile(path, "utf8");
    } catch {
      return undefined;
    }
  }

  async openFile(req: Parameters<IdeEditor["openFile"]>[0], signal: AbortSignal) {
    this.#bridge();
    let selection: ReturnType<typeof findTextRange>;
    if (req.startText) {
      const text = await this.#documentText(req.path, signal);
      if (text !== undefined) selection = findTextRange(text, req.startText, req.endText, req.selectToEndOfLine);
    }
    const info = await this.#call(
      "editor.open",
      { path: req.path, preview: req.preview, preserveFocus: !req.makeFrontmost, ...(selection ? { selection } : {}) },
      signal,
    );
    return { languageId: info.languageId, lineCount: info.lineCount };
  }

  async showDiff(req: Parameters<IdeEditor["showDiff"]>[0], signal: AbortSignal): Promise<DiffOutcome> {
    this.#bridge();
    let originalText = "";
    try {
      originalText = await readFile(req.path, "utf8");
    } catch {
      // a new file: the diff is against nothing
    }
    const r = await this.#call(
      "diff.open",
      { id: req.diffId, path: req.path, originalText, proposedText: req.newContents, title: diffTitle(req.path) },
      signal,
    );
    if (r.outcome === "accepted") return { kind: "accepted", contents: r.finalText ?? req.newContents };
    return { kind: "rejected" };
  }

  async closeDiff(diffId: string, signal: AbortSignal): Promise<void> {
    if (!this.#slot.status().connected) return;
    await this.#call("diff.close", { id: diffId }, signal);
  }

  async currentSelection(signal: AbortSignal) {
    const st = await this.#call("editor.state", {}, signal);
    const active = st.active;
    const sel = active?.selections[0];
    if (!active || !sel) return null;
    const before =
      sel.anchor.line < sel.active.line ||
      (sel.anchor.line === sel.active.line && sel.anchor.character <= sel.active.character);
    const range = before ? { start: sel.anchor, end: sel.active } : { start: sel.active, end: sel.anchor };
    const text = (await this.#documentText(active.path, signal)) ?? "";
    return { filePath: active.path, text: textInRange(text, range), range };
  }

  async openEditors(signal: AbortSignal) {
    const r = await this.#call("editor.openEditors", {}, signal);
    return r.tabs;
  }

  async diagnostics(path: string | undefined, signal: AbortSignal) {
    const r = await this.#call("diagnostics.get", path === undefined ? {} : { path }, signal);
    return r.files.map((f) => ({
      path: f.path,
      diagnostics: f.diagnostics.map((d) => ({
        message: d.message,
        severity: severityName(d.severity),
        range: d.range,
        source: d.source,
        code: d.code,
      })),
    }));
  }

  async documentState(path: string, signal: AbortSignal) {
    const r = await this.#call("document.isDirty", { path }, signal);
    return { open: r.isOpen, isDirty: r.isDirty, isUntitled: false };
  }

  async saveDocument(path: string, signal: AbortSignal) {
    const r = await this.#call("document.save", { path }, signal);
    return { open: r.isOpen, saved: r.saved };
  }

  async executeCode(code: string, signal: AbortSignal): Promise<ExecuteOutput[]> {
    const r = await this.#call("notebook.executeCode", { code }, signal);
    if (r.status === "no-notebook") {
      throw new CcbError("UNSUPPORTED", "No active Jupyter notebook with a kernel in the workbench.", {
        hint: "Open a .ipynb notebook in the workbench, select a kernel, then try again.",
      });
    }
    if (r.status === "declined") {
      throw new CcbError("PERMISSION_DENIED", "The user declined to run this code in the notebook kernel.");
    }
    return r.outputs.map(
      (o): ExecuteOutput =>
        o.mime.startsWith("image/")
          ? { type: "image", data: o.text, mimeType: o.mime }
          : { type: "text", text: o.text },
    );
  }
}
