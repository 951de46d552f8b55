import * as vscode from "vscode";
import type { ParamsOf, ResultOf } from "../../../core/editor/contract.ts";

type DiffResult = ResultOf<"diff.open">;

/** Proposed texts live in memory under this scheme, editable by the person; saving one accepts it. */
export const PROPOSED_SCHEME = "ccb-proposed";
const ORIGINAL_SCHEME = "ccb-original";

interface OpenDiff {
  id: string;
  proposedUri: vscode.Uri;
  originalUri: vscode.Uri;
  resolve(r: DiffResult): void;
}

/**
 * Diffs opened for ccb (Claude IDE openDiff): original on the left (read-only), the proposal on
 * the right (editable). Accept (title button or save) resolves with the final text including the
 * person's own edits; Reject or closing the tab resolves as rejected; diff.close / closeAll as
 * closed. It never writes the real file: the caller does.
 */
export class DiffManager implements vscode.FileSystemProvider {
  readonly #texts = new Map<string, Uint8Array>();
  readonly #diffs = new Map<string, OpenDiff>();
  readonly #emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.#emitter.event;
  readonly #disposables: vscode.Disposable[] = [];

  constructor(private readonly onClosed: (id: string) => void) {
    const original: vscode.TextDocumentContentProvider = {
      provideTextDocumentContent: (uri) =>
        new TextDecoder().decode(this.#texts.get(uri.toString()) ?? new Uint8Array()),
    };
    this.#disposables.push(
      vscode.workspace.registerFileSystemProvider(PROPOSED_SCHEME, this, { isCaseSensitive: true }),
      vscode.workspace.registerTextDocumentContentProvider(ORIGINAL_SCHEME, original),
      vscode.commands.registerCommand("ccb.diff.accept", (uri?: vscode.Uri) => this.#finishFrom(uri, "accepted")),
      vscode.commands.registerCommand("ccb.diff.reject", (uri?: vscode.Uri) => this.#finishFrom(uri, "rejected")),
      vscode.window.tabGroups.onDidChangeTabs((e) => {
        for (const tab of e.closed) {
          const input = tab.input;
          if (input instanceof vscode.TabInputTextDiff && input.modified.scheme === PROPOSED_SCHEME) {
            const d = this.#byUri(input.modified);
            if (d) this.#finish(d, { outcome: "rejected" }, false);
          }
        }
      }),
    );
  }

  async open(p: ParamsOf<"diff.open">): Promise<DiffResult> {
    const existing = this.#diffs.get(p.id);
    if (existing) this.#finish(existing, { outcome: "closed" }, true); // same id supersedes
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
    const result = new Promise<DiffResult>((resolve) => {
      this.#diffs.set(p.id, { id: p.id, proposedUri, originalUri, resolve });
    });
    await vscode.commands.executeCommand("vscode.diff", originalUri, proposedUri, p.title, { preview: false });
    return result;
  }

  async close(id: string): Promise<boolean> {
    const d = this.#diffs.get(id);
    if (!d) return false;
    this.#finish(d, { outcome: "closed" }, true);
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

  #finishFrom(uri: vscode.Uri | undefined, outcome: "accepted" | "rejected"): void {
    const target = uri ?? activeProposedUri();
    const d = target ? this.#byUri(target) : undefined;
    if (!d) return;
    if (outcome === "accepted") {
      const doc = vscode.workspace.textDocuments.find((t) => t.uri.toString() === d.proposedUri.toString());
      const text = doc ? doc.getText() : new TextDecoder().decode(this.#texts.get(d.proposedUri.toString()));
      this.#finish(d, { outcome, finalText: text }, true);
    } else this.#finish(d, { outcome }, true);
  }

  #finish(d: OpenDiff, r: DiffResult, closeTab: boolean): void {
    if (!this.#diffs.has(d.id) || this.#diffs.get(d.id) !== d) return;
    this.#diffs.delete(d.id);
    d.resolve(r);
    this.onClosed(d.id);
    const forget = () => {
      this.#texts.delete(d.proposedUri.toString());
      this.#texts.delete(d.originalUri.toString());
    };
    if (!closeTab) {
      forget();
      return;
    }
    void (async () => {
      // Saving the in-memory proposal first keeps VS Code from asking the person to save it.
      const doc = vscode.workspace.textDocuments.find((t) => t.uri.toString() === d.proposedUri.toString());
      if (doc?.isDirty) await doc.save().then(undefined, () => false);
      const tabs = vscode.window.tabGroups.all
        .flatMap((g) => g.tabs)
        .filter(
          (t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString() === d.proposedUri.toString(),
        );
      await Promise.resolve(vscode.window.tabGroups.close(tabs, true)).catch(() => undefined);
      forget();
    })();
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
    this.#texts.set(uri.toString(), content);
    this.#emitter.fire([{ type: vscode.FileChangeType.Changed, uri }]);
    const d = this.#byUri(uri);
    if (d) setTimeout(() => this.#finishFrom(uri, "accepted"), 0);
  }
  delete(): void {}
  rename(): void {}

  dispose(): void {
    for (const d of [...this.#diffs.values()]) this.#finish(d, { outcome: "closed" }, false);
    for (const x of this.#disposables) x.dispose();
  }
}

function activeProposedUri(): vscode.Uri | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  return input instanceof vscode.TabInputTextDiff && input.modified.scheme === PROPOSED_SCHEME
    ? input.modified
    : undefined;
}
