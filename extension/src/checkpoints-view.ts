import * as vscode from "vscode";
import type {
  ChangeSet,
  ChangeSetFile,
  PresenceEntry,
  ServerMethod,
  ServerParamsOf,
  ServerResultOf,
} from "../../src/editor-wire/contract.ts";
import { BridgeError } from "./convert.ts";
import { refusedForModel } from "./model-guard.ts";

/**
 * The person's "Agent changes" view (its own container in the activity bar): who is at the workbench now (the ccb process that
 * runs it, the front ends attached to it, the workbench tabs) and every agent's recent change sets
 * (tool, time, files), read from ccb (src/workbench/checkpoints-view.ts; the workspace's one
 * checkpoint store, so a shared workbench shows the same in every tab). Per change set: its diff in
 * VS Code's diff editor (before vs after, every file), and Undo (takes back that change set, keeps
 * everyone else's) or Restore (every recorded file back to its state there), each only after the
 * person confirmed in a modal dialog, and refused while a command the model asked for runs
 * (model-guard.ts). A refused undo (someone changed the same lines since) is shown with the
 * conflicting hunks ccb named; nothing is written then.
 *
 * Pushed: ccb sends the event `checkpointsChanged` when any ccb process of the workspace recorded a
 * checkpoint or who is attached changed (src/workbench/checkpoints-view.ts), and the view, while
 * shown, asks again; it asks too when it is shown and when ccb answers again. No poll: a record
 * made while this tab was not connected is listed by the ask that follows the reconnect.
 *
 * The person's only: Undo and Restore act on a row of this view, the very object the view gave VS
 * Code (a hover's inline action, a right-click, the selection), never on a change set described in
 * a command's arguments (a model's `commands.execute` would pass one it made up, its dialog naming
 * another agent's change); and they are refused, before any dialog, while a command the model asked
 * for runs (model-guard.ts), and again after the person confirmed.
 */

export const VIEW_ID = "ccb.checkpoints";
const SCHEME = "ccb-checkpoint";

type Request = <M extends ServerMethod>(method: M, params: ServerParamsOf<M>) => Promise<ServerResultOf<M>>;

type Node =
  | { kind: "section"; label: string; children: Node[] }
  | { kind: "presence"; entry: PresenceEntry }
  | { kind: "agent"; key: string; frontEnd: string; client: string; sets: ChangeSet[] }
  | { kind: "set"; set: ChangeSet }
  | { kind: "file"; set: ChangeSet; file: ChangeSet["files"][number] }
  | { kind: "message"; text: string };

/** Who made a change set, as the person reads it. */
function agentOf(s: { frontEnd: string; client: string }): string {
  return s.frontEnd === "person" ? s.client : `${s.client} (${s.frontEnd})`;
}

function when(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString();
}

function what(s: ChangeSet): string {
  if (s.phase === "restore") return s.tool;
  if (s.phase === "effects") return `${s.tool} (its command's effects)`;
  if (s.phase === "before") return "changes made outside ccb";
  return s.tool;
}

export class CheckpointsView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  readonly #changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.#changed.event;
  readonly #disposables: vscode.Disposable[] = [];
  /** The texts the diff editor shows, by URI. */
  readonly #texts = new Map<string, string>();
  #roots: Node[] = [{ kind: "message", text: "Connecting to ccb…" }];
  #view: vscode.TreeView<Node>;
  /** The rows this view handed to VS Code: only they can be undone or restored. */
  #issued = new WeakSet<Node>();
  #loading: Promise<void> | undefined;
  #again = false;
  #shown = "";

  constructor(private readonly request: Request) {
    this.#view = vscode.window.createTreeView(VIEW_ID, { treeDataProvider: this, showCollapseAll: true });
    this.#disposables.push(
      this.#view,
      this.#changed,
      this.#view.onDidChangeVisibility(() => {
        if (this.#view.visible) void this.refresh();
      }),
      vscode.workspace.registerTextDocumentContentProvider(SCHEME, {
        provideTextDocumentContent: (uri) => this.#texts.get(uri.toString()) ?? "",
      }),
      vscode.commands.registerCommand("ccb.checkpoints.show", async () => {
        await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
        await this.refresh();
      }),
      vscode.commands.registerCommand("ccb.checkpoints.refresh", () => this.refresh()),
      vscode.commands.registerCommand("ccb.checkpoints.diff", (n?: Node) => this.#diff(n)),
      vscode.commands.registerCommand("ccb.checkpoints.undo", (n?: Node) => this.#undo(n, "undo")),
      vscode.commands.registerCommand("ccb.checkpoints.restore", (n?: Node) => this.#undo(n, "restore")),
    );
    if (this.#view.visible) void this.refresh();
  }

  /** ccb answers again (connected), or told of a new checkpoint or presence (checkpointsChanged): asked anew if shown. */
  connected(): void {
    if (this.#view.visible) void this.refresh();
  }

  /** Ask ccb for the overview (one request at a time; a refresh asked meanwhile runs once after it). */
  refresh(): Promise<void> {
    if (this.#loading) {
      this.#again = true;
      return this.#loading;
    }
    this.#loading = (async () => {
      do {
        this.#again = false;
        let roots: Node[];
        try {
          const o = await this.request("checkpoints.overview", { limit: 200 });
          roots = this.#tree(o.attached, o.changes);
        } catch (err) {
          roots = [{ kind: "message", text: `ccb does not answer: ${(err as Error).message}` }];
        }
        // Rendered anew only when something changed: a row under the person's mouse stays put.
        const shown = JSON.stringify(roots);
        if (shown === this.#shown) continue;
        this.#shown = shown;
        this.#roots = roots;
        this.#changed.fire(undefined);
      } while (this.#again);
    })().finally(() => {
      this.#loading = undefined;
    });
    return this.#loading;
  }

  #tree(attached: PresenceEntry[], changes: ChangeSet[]): Node[] {
    const agents = new Map<string, Extract<Node, { kind: "agent" }>>();
    for (const s of changes) {
      if (s.files.length === 0) continue;
      const key = `${s.frontEnd}:${s.client}`;
      let a = agents.get(key);
      if (!a) agents.set(key, (a = { kind: "agent", key, frontEnd: s.frontEnd, client: s.client, sets: [] }));
      a.sets.push(s);
    }
    const sets: Node[] = [...agents.values()];
    return [
      { kind: "section", label: "Attached now", children: attached.map((entry) => ({ kind: "presence", entry })) },
      {
        kind: "section",
        label: "Recent changes",
        children: sets.length > 0 ? sets : [{ kind: "message", text: "No change recorded yet." }],
      },
    ];
  }

  getChildren(n?: Node): Node[] {
    const out = this.#children(n);
    for (const c of out) this.#issued.add(c);
    return out;
  }

  #children(n?: Node): Node[] {
    if (!n) return this.#roots;
    if (n.kind === "section") return n.children;
    if (n.kind === "agent") return n.sets.map((set) => ({ kind: "set", set }));
    if (n.kind === "set") return n.set.files.map((file) => ({ kind: "file", set: n.set, file }));
    return [];
  }

  getTreeItem(n: Node): vscode.TreeItem {
    const Expanded = vscode.TreeItemCollapsibleState.Expanded;
    const Collapsed = vscode.TreeItemCollapsibleState.Collapsed;
    switch (n.kind) {
      case "section": {
        const t = new vscode.TreeItem(n.label, Expanded);
        t.id = `section:${n.label}`;
        return t;
      }
      case "presence": {
        const t = new vscode.TreeItem(n.entry.label);
        t.description = n.entry.detail;
        t.iconPath = new vscode.ThemeIcon(
          { tab: "browser", runs: "server-process", attached: "plug", client: "hubot" }[n.entry.kind],
        );
        t.accessibilityInformation = { label: `attached: ${n.entry.label}, ${n.entry.detail}` };
        return t;
      }
      case "agent": {
        const t = new vscode.TreeItem(agentOf(n), Expanded);
        t.id = `agent:${n.key}`;
        t.description = `${n.sets.length} change set${n.sets.length === 1 ? "" : "s"}`;
        t.iconPath = new vscode.ThemeIcon(n.frontEnd === "person" ? "person" : "hubot");
        t.accessibilityInformation = { label: `agent ${agentOf(n)}, ${t.description}` };
        return t;
      }
      case "set": {
        const s = n.set;
        const files = s.files.map((f) => f.rel);
        const t = new vscode.TreeItem(what(s), Collapsed);
        t.id = `set:${s.id}`;
        t.description = `${when(s.time)} · ${files.length === 1 ? files[0] : `${files.length} files`}`;
        t.tooltip = new vscode.MarkdownString(undefined, false);
        t.tooltip.appendText(
          `${agentOf(s)}${s.session ? `, ${s.session}` : ""}\n${s.tool} at ${s.time}\n${files.join("\n")}\n${s.id.slice(0, 12)}`,
        );
        t.contextValue = "ccbChangeSet";
        t.iconPath = new vscode.ThemeIcon(s.phase === "restore" ? "discard" : "diff");
        t.command = { command: "ccb.checkpoints.diff", title: "Show the diff", arguments: [n] };
        t.accessibilityInformation = {
          label: `change set ${s.id.slice(0, 12)} by ${agentOf(s)}: ${what(s)} at ${when(s.time)}, files ${files.join(", ")}`,
        };
        return t;
      }
      case "file": {
        const t = new vscode.TreeItem(n.file.rel);
        t.resourceUri = vscode.Uri.file(n.file.path);
        t.description = false;
        t.command = { command: "ccb.checkpoints.diff", title: "Show the diff", arguments: [n] };
        t.accessibilityInformation = { label: `file ${n.file.rel} of change set ${n.set.id.slice(0, 12)}` };
        return t;
      }
      case "message":
        return new vscode.TreeItem(n.text);
      default: {
        n satisfies never;
        return new vscode.TreeItem("");
      }
    }
  }

  /** The change set a command was given (its row, a file row of it, or the selected row): only a row of this view. */
  #setOf(n: Node | undefined): { set: ChangeSet; file?: string } | undefined {
    const node = n ?? this.#view.selection[0];
    if (!node || typeof node !== "object" || !this.#issued.has(node)) return undefined;
    if (node?.kind === "set") return { set: node.set };
    if (node?.kind === "file") return { set: node.set, file: node.file.path };
    return undefined;
  }

  #uri(set: ChangeSet, f: ChangeSetFile, side: "before" | "after"): vscode.Uri {
    return vscode.Uri.from({ scheme: SCHEME, path: f.path, query: `${set.id.slice(0, 12)}-${side}` });
  }

  async #diff(n: Node | undefined): Promise<void> {
    const picked = this.#setOf(n);
    if (!picked) return;
    try {
      const { changeSet, files } = await this.request("checkpoints.files", { id: picked.set.id });
      const shown = picked.file ? files.filter((f) => f.path === picked.file) : files;
      const triples = shown.map((f) => {
        const before = this.#uri(changeSet, f, "before");
        const after = this.#uri(changeSet, f, "after");
        this.#texts.set(before.toString(), f.before ?? "");
        this.#texts.set(after.toString(), f.after ?? "");
        return { f, before, after };
      });
      const title = `${what(changeSet)} by ${agentOf(changeSet)} (${when(changeSet.time)})`;
      const [one] = triples;
      if (triples.length === 1 && one)
        await vscode.commands.executeCommand("vscode.diff", one.before, one.after, `${one.f.rel}: ${title}`, {
          preview: true,
        });
      else if (triples.length > 1)
        await vscode.commands.executeCommand(
          "vscode.changes",
          title,
          triples.map((t) => [vscode.Uri.file(t.f.path), t.before, t.after]),
        );
    } catch (err) {
      void vscode.window.showErrorMessage(`ccb: no diff of this change set: ${(err as Error).message}`);
    }
  }

  async #undo(n: Node | undefined, mode: "undo" | "restore"): Promise<void> {
    const decision = mode === "undo" ? "undoing a change set" : "restoring a checkpoint";
    // Asked by a model command (by name, through runCommands...): refused before a dialog shows.
    if (refusedForModel(decision)) return;
    const picked = this.#setOf(n);
    if (!picked) {
      void vscode.window.showWarningMessage(
        `ccb: ${mode === "undo" ? "Undo" : "Restore"} acts on a change set of the Agent changes view: hover its row and click the action.`,
      );
      return;
    }
    const s = picked.set;
    const files = s.files.map((f) => f.rel);
    const question =
      mode === "undo"
        ? `Undo what ${agentOf(s)} changed with ${what(s)} at ${when(s.time)}?`
        : `Restore every recorded file to its state after ${what(s)} by ${agentOf(s)} at ${when(s.time)}?`;
    const detail =
      mode === "undo"
        ? `Takes back this change set in ${files.join(", ")} and keeps everyone else's changes. If someone changed the same lines since, nothing is changed. The undo can itself be undone.`
        : "Every file changed since goes back to that moment, whoever changed it. The restore can itself be undone.";
    const button = mode === "undo" ? "Undo" : "Restore";
    const answer = await vscode.window.showWarningMessage(question, { modal: true, detail }, button);
    if (answer !== button || refusedForModel(decision)) return;
    try {
      const r = await this.request("checkpoints.undo", { id: s.id, mode });
      void vscode.window.showInformationMessage(
        r.files.length === 0
          ? `ccb: nothing to ${mode}: the files already match.`
          : `ccb: ${mode === "undo" ? "took back" : "restored"} ${r.files.join(", ")}.`,
      );
    } catch (err) {
      // A conflict names the files and lines someone changed since (nothing was written).
      const hint = err instanceof BridgeError && err.hint ? ` ${err.hint}` : "";
      const conflict = err instanceof BridgeError && err.code === "VERSION_CONFLICT";
      void vscode.window.showErrorMessage(
        `ccb: ${conflict ? "" : `the ${mode} failed: `}${(err as Error).message}${hint}`,
      );
    }
    await this.refresh();
  }

  dispose(): void {
    for (const d of this.#disposables) d.dispose();
  }
}
