import { randomBytes } from "node:crypto";
import type { Logger } from "../../core/log.ts";
import { type IdeToolResult, text } from "./converters.ts";
import type { IdeEditor } from "./editor.ts";

/**
 * The diffs ccb opened, by tab name. `openDiff` blocks until the person acts in the editor, or
 * until `close_tab`, `closeAllDiffTabs`, a new diff with the same tab name, or the client leaving
 * ends it. A pending diff never blocks other calls. The IDE never writes the file: the client does.
 */

interface DiffEntry {
  id: string;
  tabName: string;
  connectionId: number;
  pending: boolean;
  /** Aborting closes the diff in the editor (the signal given to showDiff). */
  controller: AbortController;
  settle(result: IdeToolResult): void;
}

export interface OpenDiffArgs {
  path: string;
  newContents: string;
  tabName: string;
  connectionId: number;
}

/**
 * The title of a diff tab in the editor: the file's name and whose proposal it is, in plain ASCII
 * so every font renders it (the client's own tab name, e.g. "✻ [Claude Code] a.ts ⧉", uses glyphs
 * many fonts lack). The client's tab name still identifies the diff for close_tab.
 */
export function diffTitle(path: string): string {
  const name = path.split(/[\\/]/).pop() || "file";
  return `${name} (proposed by Claude)`;
}

export function rejected(tabName: string): IdeToolResult {
  return text("DIFF_REJECTED", tabName);
}

export class DiffRegistry {
  readonly #editor: IdeEditor;
  readonly #log: Logger;
  readonly #entries = new Map<string, DiffEntry>();
  readonly #openListeners = new Set<(e: { diffId: string; tabName: string; path: string }) => void>();

  constructor(editor: IdeEditor, log: Logger) {
    this.#editor = editor;
    this.#log = log;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Called when a diff has been handed to the editor. */
  onOpen(listener: (e: { diffId: string; tabName: string; path: string }) => void): () => void {
    this.#openListeners.add(listener);
    return () => this.#openListeners.delete(listener);
  }

  pendingCount(): number {
    let n = 0;
    for (const e of this.#entries.values()) if (e.pending) n++;
    return n;
  }

  /** Open a diff and wait for its outcome. `signal` is the request's (the client cancelled). */
  async open(args: OpenDiffArgs, signal: AbortSignal): Promise<IdeToolResult> {
    const old = this.#entries.get(args.tabName);
    if (old) {
      this.#log.debug(`diff superseded: ${args.tabName}`);
      await this.#close(old, rejected(old.tabName));
    }
    const controller = new AbortController();
    let settle!: (r: IdeToolResult) => void;
    const settled = new Promise<IdeToolResult>((resolve) => (settle = resolve));
    const entry: DiffEntry = {
      id: `ccb-diff-${randomBytes(6).toString("hex")}`,
      tabName: args.tabName,
      connectionId: args.connectionId,
      pending: true,
      controller,
      settle,
    };
    this.#entries.set(args.tabName, entry);

    const onCancel = () => void this.#close(entry, rejected(entry.tabName));
    signal.addEventListener("abort", onCancel, { once: true });

    let shown: Promise<IdeToolResult> | undefined;
    try {
      shown = this.#editor
        .showDiff(
          { diffId: entry.id, path: args.path, newContents: args.newContents, tabName: args.tabName },
          controller.signal,
        )
        .then(
          (outcome): IdeToolResult =>
            outcome.kind === "accepted" ? text("FILE_SAVED", outcome.contents) : rejected(entry.tabName),
        );
      for (const l of this.#openListeners) l({ diffId: entry.id, tabName: entry.tabName, path: args.path });
      return await Promise.race([shown, settled]);
    } catch (err) {
      // The editor could not show it (no workbench, bridge error): forget it, let the client fall back.
      if (this.#entries.get(entry.tabName) === entry) this.#entries.delete(entry.tabName);
      if (entry.pending && !controller.signal.aborted) throw err;
      return rejected(entry.tabName);
    } finally {
      entry.pending = false;
      signal.removeEventListener("abort", onCancel);
      shown?.catch(() => {});
    }
  }

  /** `close_tab`: resolves a pending diff (as rejected) and closes it; no error for unknown names. */
  async closeTab(tabName: string): Promise<boolean> {
    const entry = this.#entries.get(tabName);
    if (!entry) return false;
    await this.#close(entry, rejected(tabName));
    return true;
  }

  /** `closeAllDiffTabs`: only the diffs ccb opened. Returns how many were closed. */
  async closeAll(): Promise<number> {
    const all = [...this.#entries.values()];
    await Promise.all(all.map((e) => this.#close(e, rejected(e.tabName))));
    return all.length;
  }

  /** A client left: close its diffs, nobody is waiting for an answer any more. */
  async dropConnection(connectionId: number): Promise<void> {
    const mine = [...this.#entries.values()].filter((e) => e.connectionId === connectionId);
    await Promise.all(mine.map((e) => this.#close(e, rejected(e.tabName))));
  }

  async #close(entry: DiffEntry, result: IdeToolResult): Promise<void> {
    if (this.#entries.get(entry.tabName) === entry) this.#entries.delete(entry.tabName);
    const wasPending = entry.pending;
    entry.pending = false;
    if (wasPending) entry.settle(result);
    entry.controller.abort();
    try {
      await this.#editor.closeDiff(entry.id, AbortSignal.timeout(10_000));
    } catch (err) {
      this.#log.debug(`closing diff ${entry.id}: ${(err as Error).message}`);
    }
  }
}
