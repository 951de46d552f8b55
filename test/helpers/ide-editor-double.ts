import { CcbError } from "../../src/core/errors.ts";
import type {
  DiffOutcome,
  DiffRequest,
  DocumentState,
  EditorEvent,
  EditorSelection,
  EditorTab,
  ExecuteOutput,
  FileDiagnostics,
  IdeEditor,
  OpenFileRequest,
} from "../../src/protocols/ide/editor.ts";

/**
 * A test double of the live editor, used ONLY by unit tests of the IDE protocol layer (the
 * production editor is the workbench bridge, exercised by the e2e tests with a real workbench).
 */

export interface ShownDiff {
  req: DiffRequest;
  signal: AbortSignal;
  accept(contents?: string): void;
  reject(): void;
}

export class EditorDouble implements IdeEditor {
  connected = true;
  selection: EditorSelection | null = null;
  tabs: EditorTab[] = [];
  diagnosticsByPath: FileDiagnostics[] = [];
  documents = new Map<string, DocumentState>();
  saved: string[] = [];
  opened: OpenFileRequest[] = [];
  closedDiffs: string[] = [];
  shown: ShownDiff[] = [];
  /** executeCode: what the person answers when asked to confirm; "no-kernel" = no notebook. */
  confirmExecution: "yes" | "no" | "no-kernel" = "yes";
  executed: string[] = [];
  readonly #listeners = new Set<(e: EditorEvent) => void>();
  readonly #diffWaiters: { tabName: string; nth: number; resolve: (d: ShownDiff) => void }[] = [];

  status() {
    return this.connected ? { connected: true, reason: "" } : { connected: false, reason: "no workbench in this test" };
  }

  #require(): void {
    if (!this.connected)
      throw new CcbError("BRIDGE_UNAVAILABLE", "The live editor bridge is not connected: no workbench in this test");
  }

  async openFile(req: OpenFileRequest) {
    this.#require();
    this.opened.push(req);
    return { languageId: req.path.endsWith(".ts") ? "typescript" : "plaintext", lineCount: 3 };
  }

  showDiff(req: DiffRequest, signal: AbortSignal): Promise<DiffOutcome> {
    this.#require();
    return new Promise((resolve, reject) => {
      const d: ShownDiff = {
        req,
        signal,
        accept: (contents) => resolve({ kind: "accepted", contents: contents ?? req.newContents }),
        reject: () => resolve({ kind: "rejected" }),
      };
      signal.addEventListener("abort", () => reject(new CcbError("ABORTED", "diff closed")), { once: true });
      this.shown.push(d);
      for (const w of [...this.#diffWaiters]) {
        const hit = this.shown.filter((x) => x.req.tabName === w.tabName)[w.nth];
        if (hit) {
          this.#diffWaiters.splice(this.#diffWaiters.indexOf(w), 1);
          w.resolve(hit);
        }
      }
    });
  }

  /** The n-th (0-based) diff shown with this tab name, once it is shown. */
  waitForDiff(tabName: string, nth = 0): Promise<ShownDiff> {
    const found = this.shown.filter((d) => d.req.tabName === tabName)[nth];
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => this.#diffWaiters.push({ tabName, nth, resolve }));
  }

  async closeDiff(diffId: string) {
    this.closedDiffs.push(diffId);
  }

  async currentSelection() {
    this.#require();
    return this.selection;
  }

  async openEditors() {
    this.#require();
    return this.tabs;
  }

  async diagnostics(path: string | undefined) {
    this.#require();
    return path === undefined ? this.diagnosticsByPath : this.diagnosticsByPath.filter((f) => f.path === path);
  }

  async documentState(path: string) {
    this.#require();
    return this.documents.get(path) ?? { open: false, isDirty: false, isUntitled: false };
  }

  async saveDocument(path: string) {
    this.#require();
    const d = this.documents.get(path);
    if (!d) return { open: false, saved: false };
    this.saved.push(path);
    d.isDirty = false;
    return { open: true, saved: true };
  }

  async executeCode(code: string): Promise<ExecuteOutput[]> {
    this.#require();
    if (this.confirmExecution === "no-kernel")
      throw new CcbError("UNSUPPORTED", "No active Jupyter notebook with a kernel in the workbench.");
    if (this.confirmExecution === "no")
      throw new CcbError("PERMISSION_DENIED", "The user declined to run this code in the notebook kernel.");
    this.executed.push(code);
    return [
      { type: "text", text: "Hello, World!" },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
    ];
  }

  emit(e: EditorEvent): void {
    for (const l of this.#listeners) l(e);
  }

  onEvent(listener: (e: EditorEvent) => void) {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
