import { setTimeout as sleep } from "node:timers/promises";
import * as vscode from "vscode";
import type { ParamsOf, ResultOf } from "../../src/editor-wire/contract.ts";
import { refusedForModel } from "./model-guard.ts";
import { HunkReview } from "./review/hunk-review.mts";

type DiffResult = ResultOf<"diff.open">;

/** Proposed texts live in memory under this scheme, editable by the person; saving one accepts it. */
export const PROPOSED_SCHEME = "ccb-proposed";
const ORIGINAL_SCHEME = "ccb-original";
/** How long a decided review's tab waits for its proposal's save before it closes anyway. */
const SAVE_BOUND_MS = 5_000;
/** How long closing a review waits for its tab to finish opening. */
const SHOW_BOUND_MS = 15_000;
/** The pause before a decided review's tab, still open after its close, is closed again. */
const CLOSE_RETRY_MS = 1_000;

interface OpenDiff {
  id: string;
  proposedUri: vscode.Uri;
  originalUri: vscode.Uri;
  /** The original as its document holds it (what "nothing kept" compares with). */
  originalText: string;
  review: HunkReview;
  /** Settles once the diff's tab was asked to show: a close that came earlier waits for it. */
  shown: Promise<void>;
  /** Decisions run one at a time (a rejection edits the document the next one reads). */
  queue: Promise<void>;
  resolve(r: DiffResult): void;
}

/** Where a review's decisions are logged (the bridge's output channel, in the runtime's logs). */
let diffLog: (line: string) => void = () => undefined;
export function setDiffLog(log: (line: string) => void): void {
  diffLog = log;
}

/** The argument of ccb.diff.acceptHunk / rejectHunk: a hunk number, the diff's proposed URI, or both. */
interface HunkArg {
  hunk?: number;
  uri?: string | vscode.Uri;
}

/**
 * Diffs opened for ccb (Claude IDE openDiff): original on the left (read-only), the proposal on
 * the right (editable). Accept (title button or save) resolves with the final text including the
 * person's own edits; Reject or closing the tab resolves as rejected; diff.close / closeAll as
 * closed. It never writes the real file: the caller does.
 *
 * Per hunk (hunk-review.ts): code lenses "Accept hunk | Reject hunk" over each undecided hunk of
 * the proposal, and the commands ccb.diff.acceptHunk / rejectHunk (no argument: the hunk at the
 * cursor; `{ hunk: n }`: hunk n as numbered when the diff opened; `uri`: which diff). Rejecting a
 * hunk puts the original's lines back into the proposal; once every hunk is decided the review
 * ends by itself with the proposal's text (accepted), or as rejected when that is the original.
 * The state lives in the extension host whose window opened the diff, keyed by the diff's id (in
 * its URIs' query), which is where its tab, code lenses and title buttons are.
 */
export class DiffManager implements vscode.FileSystemProvider {
  readonly #texts = new Map<string, Uint8Array>();
  readonly #diffs = new Map<string, OpenDiff>();
  readonly #emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.#emitter.event;
  readonly #disposables: vscode.Disposable[] = [];
  readonly #lensesChanged = new vscode.EventEmitter<void>();

  /** Reviews open in this window (a decision still to come). */
  get pending(): number {
    return this.#diffs.size;
  }

  constructor(private readonly onClosed: (id: string) => void) {
    const original: vscode.TextDocumentContentProvider = {
      provideTextDocumentContent: (uri) =>
        new TextDecoder().decode(this.#texts.get(uri.toString()) ?? new Uint8Array()),
    };
    this.#disposables.push(
      vscode.workspace.registerFileSystemProvider(PROPOSED_SCHEME, this, { isCaseSensitive: true }),
      vscode.workspace.registerTextDocumentContentProvider(ORIGINAL_SCHEME, original),
      // The decisions are the person's: refused while a command the model asked for runs (model-guard.ts).
      vscode.commands.registerCommand(
        "ccb.diff.accept",
        (uri?: vscode.Uri) => !refusedForModel("accepting the proposal") && this.#finishFrom(uri, "accepted"),
      ),
      vscode.commands.registerCommand(
        "ccb.diff.reject",
        (uri?: vscode.Uri) => !refusedForModel("rejecting the proposal") && this.#finishFrom(uri, "rejected"),
      ),
      vscode.commands.registerCommand("ccb.diff.acceptHunk", (arg?: HunkArg | vscode.Uri) =>
        refusedForModel("accepting a hunk") ? Promise.resolve(false) : this.#decide(arg, "accept"),
      ),
      vscode.commands.registerCommand("ccb.diff.rejectHunk", (arg?: HunkArg | vscode.Uri) =>
        refusedForModel("rejecting a hunk") ? Promise.resolve(false) : this.#decide(arg, "reject"),
      ),
      vscode.languages.registerCodeLensProvider(
        { scheme: PROPOSED_SCHEME },
        {
          onDidChangeCodeLenses: this.#lensesChanged.event,
          provideCodeLenses: (doc) => this.#lenses(doc),
        },
      ),
      this.#lensesChanged,
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document.uri.scheme !== PROPOSED_SCHEME || e.contentChanges.length === 0) return;
        const d = this.#byUri(e.document.uri);
        if (!d) return;
        d.review.onEdits(e.contentChanges.map((c) => ({ start: c.range.start, end: c.range.end, text: c.text })));
      }),
      vscode.window.tabGroups.onDidChangeTabs((e) => {
        for (const tab of e.closed) {
          const input = tab.input;
          if (input instanceof vscode.TabInputTextDiff && input.modified.scheme === PROPOSED_SCHEME) {
            const d = this.#byUri(input.modified);
            if (d) void this.#finish(d, { outcome: "rejected" }, false);
          }
        }
      }),
    );
  }

  async open(p: ParamsOf<"diff.open">): Promise<DiffResult> {
    const existing = this.#diffs.get(p.id);
    if (existing) void this.#finish(existing, { outcome: "closed" }, true); // same id supersedes
    // Both sides read as the file itself: its workspace-relative path (what the breadcrumb shows),
    // the diff's id in the query so two diffs of one file stay apart.
    const path = `/${vscode.workspace.asRelativePath(vscode.Uri.file(p.path), false)}`.replace(/^\/+/, "/");
    const query = `diff=${encodeURIComponent(p.id)}`;
    const proposedUri = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path, query });
    const originalUri = vscode.Uri.from({ scheme: ORIGINAL_SCHEME, path, query });
    let original = p.originalText;
    if (original === undefined) {
      try {
        original = new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.file(p.path)));
      } catch {
        original = ""; // a new file
      }
    }
    this.#texts.set(originalUri.toString(), new TextEncoder().encode(original));
    this.#texts.set(proposedUri.toString(), new TextEncoder().encode(p.proposedText));
    // Hunks over the texts as the editor holds them (it may normalize line breaks).
    const [originalDoc, proposedDoc] = await Promise.all([
      vscode.workspace.openTextDocument(originalUri),
      vscode.workspace.openTextDocument(proposedUri),
    ]);
    const originalText = originalDoc.getText();
    const review = new HunkReview(originalText, proposedDoc.getText());
    let markShown: () => void = () => undefined;
    const shown = new Promise<void>((r) => {
      markShown = r;
    });
    const result = new Promise<DiffResult>((resolve) => {
      this.#diffs.set(p.id, {
        id: p.id,
        proposedUri,
        originalUri,
        originalText,
        review,
        shown,
        queue: Promise.resolve(),
        resolve,
      });
    });
    this.#lensesChanged.fire();
    try {
      await vscode.commands.executeCommand("vscode.diff", originalUri, proposedUri, p.title, { preview: false });
    } finally {
      markShown();
    }
    return result;
  }

  async close(id: string): Promise<boolean> {
    const d = this.#diffs.get(id);
    if (!d) return false;
    // the caller learns the tab is gone: an editor it opens next is not raced by this close
    await this.#finish(d, { outcome: "closed" }, true);
    return true;
  }

  async closeAll(ids: string[]): Promise<number> {
    let n = 0;
    for (const id of ids) if (await this.close(id)) n++;
    return n;
  }

  #byUri(uri: vscode.Uri): OpenDiff | undefined {
    for (const d of this.#diffs.values()) if (d.proposedUri.toString() === uri.toString()) return d;
    return undefined;
  }

  #byEitherUri(uri: vscode.Uri): { d: OpenDiff; side: "proposed" | "original" } | undefined {
    for (const d of this.#diffs.values()) {
      if (d.proposedUri.toString() === uri.toString()) return { d, side: "proposed" };
      if (d.originalUri.toString() === uri.toString()) return { d, side: "original" };
    }
    return undefined;
  }

  /**
   * Which diff and hunk a hunk command means: the diff of `uri`, else of the focused editor, else of
   * the active diff tab, else the only diff under review in this window; the hunk `hunk`, else the
   * one at the cursor of that diff's focused side.
   */
  #target(arg: HunkArg | vscode.Uri | undefined): { d: OpenDiff; n: number } | undefined {
    const a: HunkArg = arg instanceof vscode.Uri ? { uri: arg } : (arg ?? {});
    const editor = vscode.window.activeTextEditor;
    const named = typeof a.uri === "string" ? vscode.Uri.parse(a.uri) : a.uri;
    const fromEditor = editor ? this.#byEitherUri(editor.document.uri) : undefined;
    const tab = activeProposedUri();
    const only = this.#diffs.size === 1 ? [...this.#diffs.values()][0] : undefined;
    const d = named ? this.#byEitherUri(named)?.d : (fromEditor?.d ?? (tab ? this.#byUri(tab) : undefined) ?? only);
    if (!d) return undefined;
    if (typeof a.hunk === "number") return Number.isInteger(a.hunk) ? { d, n: a.hunk } : undefined;
    const side = editor ? this.#byEitherUri(editor.document.uri) : undefined;
    if (!editor || side?.d !== d) return undefined;
    const line = editor.selection.active.line;
    const n = side.side === "proposed" ? d.review.atProposedLine(line) : d.review.atOriginalLine(line);
    return n === undefined ? undefined : { d, n };
  }

  /** Accept or reject one hunk (true when it was undecided); when it was the last undecided one the review ends. */
  #decide(arg: HunkArg | vscode.Uri | undefined, how: "accept" | "reject"): Promise<boolean> {
    const t = this.#target(arg);
    if (!t) return Promise.resolve(false);
    const { d, n } = t;
    const run = async (): Promise<boolean> => {
      if (this.#diffs.get(d.id) !== d) return false;
      if (how === "accept") {
        if (!d.review.accept(n)) return false;
      } else {
        const revert = d.review.reject(n);
        if (!revert) return false;
        const doc = await vscode.workspace.openTextDocument(d.proposedUri);
        const range = doc.validateRange(new vscode.Range(revert.range.start, 0, revert.range.end, 0));
        const edit = new vscode.WorkspaceEdit();
        edit.replace(d.proposedUri, range, revert.text);
        // An edit VS Code refuses (the document changed meanwhile) leaves the proposed lines in place:
        // the hunk is undecided again, never counted as rejected while its lines would be kept.
        if (!(await vscode.workspace.applyEdit(edit))) {
          d.review.undecide(n);
          diffLog(`review ${d.id}: hunk ${n + 1} not rejected: its original lines could not be put back`);
          this.#lensesChanged.fire();
          return false;
        }
      }
      diffLog(`review ${d.id}: hunk ${n + 1} of ${d.review.size} ${how === "accept" ? "accepted" : "rejected"}`);
      this.#lensesChanged.fire();
      if (d.review.complete) {
        const doc = await vscode.workspace.openTextDocument(d.proposedUri);
        const kept = doc.getText();
        diffLog(`review ${d.id}: every hunk decided: ${kept === d.originalText ? "rejected" : "accepted"}`);
        void this.#finish(
          d,
          kept === d.originalText ? { outcome: "rejected" } : { outcome: "accepted", finalText: kept },
          true,
        );
      }
      return true;
    };
    const decided = d.queue.then(run, run);
    d.queue = decided.then(
      () => undefined,
      () => undefined,
    );
    return decided;
  }

  #lenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const d = this.#byUri(doc.uri);
    if (!d) return [];
    const uri = d.proposedUri.toString();
    const lenses: vscode.CodeLens[] = [];
    for (const h of d.review.list()) {
      if (h.state === "rejected") continue; // its original lines are back: no difference left to show
      const at = doc.validateRange(new vscode.Range(h.range.start, 0, h.range.start, 0));
      const label = `hunk ${h.n + 1} of ${d.review.size}`;
      if (h.state === "accepted") {
        lenses.push(new vscode.CodeLens(at, { title: "Accepted", command: "", tooltip: `Accepted ${label}` }));
        continue;
      }
      lenses.push(
        new vscode.CodeLens(at, {
          title: "Accept hunk",
          command: "ccb.diff.acceptHunk",
          arguments: [{ hunk: h.n, uri }],
          tooltip: `Accept ${label}: keep the proposed lines`,
        }),
        new vscode.CodeLens(at, {
          title: "Reject hunk",
          command: "ccb.diff.rejectHunk",
          arguments: [{ hunk: h.n, uri }],
          tooltip: `Reject ${label}: keep the original lines`,
        }),
      );
    }
    return lenses;
  }

  /** End the review of `uri` (else of the active diff tab) as the person decided; false when there is none. */
  #finishFrom(uri: vscode.Uri | undefined, outcome: "accepted" | "rejected"): boolean {
    const target = uri ?? activeProposedUri();
    const d = target ? this.#byUri(target) : undefined;
    if (!d) return false;
    diffLog(`review ${d.id}: ${outcome} as a whole${uri ? "" : " (the active diff)"}`);
    if (outcome === "accepted") {
      const doc = vscode.workspace.textDocuments.find((t) => t.uri.toString() === d.proposedUri.toString());
      const text = doc ? doc.getText() : new TextDecoder().decode(this.#texts.get(d.proposedUri.toString()));
      void this.#finish(d, { outcome, finalText: text }, true);
    } else void this.#finish(d, { outcome }, true);
    return true;
  }

  /** Resolves the review; the promise settles once its tab is closed (when `closeTab`). */
  #finish(d: OpenDiff, r: DiffResult, closeTab: boolean): Promise<void> {
    if (this.#diffs.get(d.id) !== d) return Promise.resolve();
    this.#diffs.delete(d.id);
    d.resolve(r);
    this.#lensesChanged.fire();
    this.onClosed(d.id);
    const forget = () => {
      this.#texts.delete(d.proposedUri.toString());
      this.#texts.delete(d.originalUri.toString());
    };
    if (!closeTab) {
      forget();
      return Promise.resolve();
    }
    return (async () => {
      // A review decided (or closed by its caller) while its tab was still opening: the tab comes
      // after this, so wait for it (bounded) rather than find nothing to close and leave it open.
      await Promise.race([d.shown, sleep(SHOW_BOUND_MS)]);
      // Saving the in-memory proposal first keeps VS Code from asking the person to save it; a save
      // that hangs (a save participant of another extension) does not keep the tab open.
      const doc = vscode.workspace.textDocuments.find((t) => t.uri.toString() === d.proposedUri.toString());
      if (doc?.isDirty) await Promise.race([doc.save().then(undefined, () => false), sleep(SAVE_BOUND_MS)]);
      // Closed, and once more if still there (a close that came while the editor was being laid out).
      for (let attempt = 0; attempt < 2 && this.#tabsOf(d).length > 0; attempt++) {
        if (attempt > 0) await sleep(CLOSE_RETRY_MS);
        await Promise.resolve(vscode.window.tabGroups.close(this.#tabsOf(d), true)).catch(() => undefined);
      }
      forget();
    })();
  }

  #tabsOf(d: OpenDiff): vscode.Tab[] {
    return vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .filter(
        (t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString() === d.proposedUri.toString(),
      );
  }

  // FileSystemProvider for the proposal: in memory; writing (save) accepts.
  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }
  stat(uri: vscode.Uri): vscode.FileStat {
    const t = this.#texts.get(uri.toString());
    if (!t) throw vscode.FileSystemError.FileNotFound(uri);
    return { type: vscode.FileType.File, ctime: 0, mtime: Date.now(), size: t.byteLength };
  }
  readDirectory(): [string, vscode.FileType][] {
    return [];
  }
  createDirectory(): void {}
  readFile(uri: vscode.Uri): Uint8Array {
    const t = this.#texts.get(uri.toString());
    if (!t) throw vscode.FileSystemError.FileNotFound(uri);
    return t;
  }
  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    if (!this.#texts.has(uri.toString())) throw vscode.FileSystemError.NoPermissions(uri);
    const d = this.#byUri(uri);
    // Saving a proposal under review accepts it: the person's decision, refused during a model command.
    if (d && refusedForModel("saving (accepting) the proposal", "write"))
      throw vscode.FileSystemError.NoPermissions(uri);
    this.#texts.set(uri.toString(), content);
    this.#emitter.fire([{ type: vscode.FileChangeType.Changed, uri }]);
    if (d) diffLog(`review ${d.id}: the proposal was saved`);
    if (d) setTimeout(() => this.#finishFrom(uri, "accepted"), 0);
  }
  delete(): void {}
  rename(): void {}

  dispose(): void {
    for (const d of [...this.#diffs.values()]) void this.#finish(d, { outcome: "closed" }, false);
    for (const x of this.#disposables) x.dispose();
  }
}

function activeProposedUri(): vscode.Uri | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  return input instanceof vscode.TabInputTextDiff && input.modified.scheme === PROPOSED_SCHEME
    ? input.modified
    : undefined;
}
