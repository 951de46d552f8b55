import { setTimeout as sleep } from "node:timers/promises";
import * as vscode from "vscode";
import type { DocumentOverlay, ExtensionMethod, ParamsOf, ResultOf } from "../../src/editor-wire/contract.ts";
import { askToInstall } from "./consent.ts";
import {
  BridgeError,
  diagnostic,
  documentSymbols,
  editorInfo,
  fromTagged,
  hoverText,
  location,
  symbolKind,
  toRange,
  toTagged,
  uriPath,
} from "./convert.ts";
import { executeBounded } from "./powers.ts";

/** The editor-side implementation of each contract method (params already validated). */
export type Handlers = { [M in ExtensionMethod]: (params: ParamsOf<M>) => Promise<ResultOf<M>> };

const fileUri = (path: string) => vscode.Uri.file(path);

async function openDoc(path: string): Promise<vscode.TextDocument> {
  try {
    return await vscode.workspace.openTextDocument(fileUri(path));
  } catch (err) {
    throw new BridgeError("NOT_FOUND", `The editor cannot open ${path}: ${(err as Error).message}`);
  }
}

function findDoc(path: string): vscode.TextDocument | undefined {
  const key = fileUri(path).toString();
  return vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
}

/** Attempts at showing a document: an open can be cancelled by another editor change in its group. */
const SHOW_ATTEMPTS = 3;
const SHOW_RETRY_MS = 250;

async function show(path: string, options: vscode.TextDocumentShowOptions = {}): Promise<vscode.TextEditor> {
  const doc = await openDoc(path);
  for (let attempt = 1; ; attempt++) {
    try {
      return await vscode.window.showTextDocument(doc, options);
    } catch (err) {
      // VS Code's "Could NOT open editor": the open lost to a tab closing or opening at that moment
      // (a review's diff closed just before); the document itself is fine, so ask again.
      if (attempt >= SHOW_ATTEMPTS) throw err;
      await sleep(SHOW_RETRY_MS * attempt);
    }
  }
}

function overlay(d: vscode.TextDocument, includeText: boolean): DocumentOverlay {
  return {
    path: uriPath(d.uri),
    version: d.version,
    isDirty: d.isDirty,
    languageId: d.languageId,
    text: includeText ? d.getText() : "",
  };
}

const noop = () => undefined;

/** Whether an extension's manifest activates it for documents of `languageId` (explicitly, or by contributing the language). */
function activatesFor(manifest: unknown, languageId: string): boolean {
  const m = (manifest ?? {}) as { activationEvents?: unknown; contributes?: { languages?: unknown } };
  const events = Array.isArray(m.activationEvents) ? m.activationEvents : [];
  if (events.some((e) => e === `onLanguage:${languageId}` || e === "onLanguage")) return true;
  const languages = Array.isArray(m.contributes?.languages) ? m.contributes.languages : [];
  return languages.some((l) => (l as { id?: unknown } | null)?.id === languageId);
}

/** Wait until vscode.extensions changes or `ms` pass (installs land asynchronously). */
function extensionsChanged(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    const sub = vscode.extensions.onDidChange(done);
    function done() {
      clearTimeout(t);
      sub.dispose();
      resolve();
    }
  });
}

const base = {
  async "editor.open"(p) {
    const e = await show(p.path, {
      preview: p.preview ?? false,
      preserveFocus: p.preserveFocus ?? false,
      ...(p.selection ? { selection: toRange(p.selection) } : {}),
    });
    if (p.selection) e.revealRange(toRange(p.selection), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    return editorInfo(e);
  },
  async "editor.state"(p) {
    const includeText = p.includeText ?? true;
    const docs = vscode.workspace.textDocuments.filter((d) => d.uri.scheme === "file" && d.isDirty);
    if (p.path && !docs.some((d) => d.uri.fsPath === p.path)) {
      const d = findDoc(p.path) ?? (await openDoc(p.path).catch(() => undefined));
      if (d) docs.push(d);
    }
    const active = vscode.window.activeTextEditor;
    return {
      active: active ? editorInfo(active) : null,
      visible: vscode.window.visibleTextEditors.map(editorInfo),
      overlays: docs.map((d) => overlay(d, includeText)),
      workspaceFolders: (vscode.workspace.workspaceFolders ?? []).map((f) => uriPath(f.uri)),
      focused: vscode.window.state.focused,
    };
  },
  async "editor.setSelection"(p) {
    const e = await show(p.path);
    e.selections = p.selections.map(
      (s) => new vscode.Selection(s.anchor.line, s.anchor.character, s.active.line, s.active.character),
    );
    const first = e.selections[0];
    if (first && (p.reveal ?? true)) e.revealRange(first, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    return editorInfo(e);
  },
  async "editor.applyEdits"(p) {
    const doc = await openDoc(p.path);
    if (p.expectedVersion !== undefined && doc.version !== p.expectedVersion) {
      throw new BridgeError(
        "VERSION_CONFLICT",
        `The buffer of ${p.path} is at version ${doc.version}, not ${p.expectedVersion}.`,
        "Read it again with editor_state and recompute the edits.",
      );
    }
    const edit = new vscode.WorkspaceEdit();
    for (const e of p.edits) edit.replace(doc.uri, toRange(e.range), e.newText);
    const applied = await vscode.workspace.applyEdit(edit);
    let saved = false;
    if (applied && p.save) saved = await doc.save();
    // what happens to unsaved changes next is the person's auto-save (on by default in the web workbench)
    const files = vscode.workspace.getConfiguration("files", doc); // the document: language overrides count
    const autoSave = {
      mode: files.get<string>("autoSave") ?? "off",
      delayMs: files.get<number>("autoSaveDelay") ?? 1000,
    };
    return { applied, version: doc.version, isDirty: doc.isDirty, saved, autoSave };
  },
  async "editor.openEditors"() {
    const tabs = vscode.window.tabGroups.all.flatMap((g, groupIndex) =>
      g.tabs.map((t) => {
        const input = t.input;
        const uri =
          input instanceof vscode.TabInputText
            ? input.uri
            : input instanceof vscode.TabInputTextDiff
              ? input.modified
              : undefined;
        const doc = uri ? vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString()) : undefined;
        return {
          ...(uri ? { path: uriPath(uri), uri: uri.toString() } : {}),
          label: t.label,
          isActive: t.isActive,
          isDirty: t.isDirty,
          isPinned: t.isPinned,
          isPreview: t.isPreview,
          groupIndex,
          viewColumn: g.viewColumn,
          isGroupActive: g.isActive,
          ...(doc ? { languageId: doc.languageId } : {}),
        };
      }),
    );
    return { tabs };
  },
  async "document.read"(p) {
    const d = findDoc(p.path);
    return d ? overlay(d, true) : null;
  },
  async "document.isDirty"(p) {
    const d = findDoc(p.path);
    return { isOpen: Boolean(d), isDirty: d?.isDirty ?? false };
  },
  async "document.save"(p) {
    const d = findDoc(p.path);
    return d ? { isOpen: true, saved: await d.save() } : { isOpen: false, saved: false };
  },
  async "diagnostics.get"(p) {
    if (p.path) {
      const uri = fileUri(p.path);
      return { files: [{ path: p.path, diagnostics: vscode.languages.getDiagnostics(uri).map(diagnostic) }] };
    }
    const files = vscode.languages
      .getDiagnostics()
      .filter(([, ds]) => ds.length > 0)
      .map(([uri, ds]) => ({ path: uriPath(uri), diagnostics: ds.map(diagnostic) }));
    return { files };
  },
  async "commands.list"(p) {
    const all = await vscode.commands.getCommands(!(p.includeInternal ?? false));
    const f = p.filter?.toLowerCase();
    return { commands: f ? all.filter((c) => c.toLowerCase().includes(f)) : all };
  },
  async "commands.execute"(p) {
    const args = p.args.map(fromTagged);
    const result: unknown = await executeBounded(p.command, args, p.waitMs ?? 110_000);
    return { result: toTagged(result) };
  },
  async "extensions.list"(p) {
    const list = vscode.extensions.all
      .filter((e) => (p.includeBuiltin ?? false) || !isBuiltin(e))
      .map((e) => ({
        id: e.id,
        version: String((e.packageJSON as { version?: unknown }).version ?? ""),
        ...(typeof (e.packageJSON as { displayName?: unknown }).displayName === "string"
          ? { displayName: (e.packageJSON as { displayName: string }).displayName }
          : {}),
        isActive: e.isActive,
        builtin: isBuiltin(e),
        path: e.extensionUri.fsPath,
      }));
    return { extensions: list };
  },
  async "extensions.install"(p) {
    const before = new Set(vscode.extensions.all.map((e) => e.id.toLowerCase()));
    // The model asked: the person allows it first, in their tab (consent.ts).
    const allowed = await askToInstall(p);
    const changed = extensionsChanged(20_000);
    try {
      await vscode.commands.executeCommand("workbench.extensions.installExtension", allowed.target, {
        donotSync: true,
      });
    } catch (err) {
      throw new BridgeError(
        "BRIDGE_ERROR",
        `The workbench could not install ${p.id ?? p.vsixPath}: ${(err as Error).message}`,
      );
    } finally {
      await allowed.done();
    }
    await changed;
    const added = vscode.extensions.all.find((e) => !before.has(e.id.toLowerCase()));
    const id = added?.id ?? p.id?.replace(/@.*$/, "");
    return { ...(id ? { id } : {}), installed: true };
  },
  async "extensions.uninstall"(p) {
    const had = vscode.extensions.getExtension(p.id);
    const changed = extensionsChanged(20_000);
    try {
      await vscode.commands.executeCommand("workbench.extensions.uninstallExtension", p.id);
    } catch (err) {
      const msg = (err as Error).message;
      if (/not installed/i.test(msg)) return { uninstalled: false };
      throw new BridgeError("BRIDGE_ERROR", `The workbench could not uninstall ${p.id}: ${msg}`);
    }
    if (had) await changed;
    return { uninstalled: true };
  },
  async "language.ready"(p) {
    const t0 = Date.now();
    const doc = await openDoc(p.path);
    const serving = vscode.extensions.all.filter((e) => !e.isActive && activatesFor(e.packageJSON, doc.languageId));
    // An extension whose activation failed is the workbench's to report; the file is then served without it.
    await Promise.all(serving.map((e) => Promise.resolve(e.activate()).then(noop, noop)));
    let semantic = false;
    try {
      semantic =
        (await vscode.commands.executeCommand<vscode.SemanticTokens | undefined>(
          "vscode.provideDocumentSemanticTokens",
          doc.uri,
        )) != null;
    } catch {
      // a provider that failed has answered all the same: nothing more to wait for
    }
    return { languageId: doc.languageId, activated: serving.map((e) => e.id), semantic, ms: Date.now() - t0 };
  },
  async "language.documentSymbols"(p) {
    const doc = await openDoc(p.path);
    const r = await vscode.commands.executeCommand<(vscode.DocumentSymbol | vscode.SymbolInformation)[] | undefined>(
      "vscode.executeDocumentSymbolProvider",
      doc.uri,
    );
    return { symbols: documentSymbols(r) };
  },
  async "language.workspaceSymbols"(p) {
    const r = await vscode.commands.executeCommand<vscode.SymbolInformation[] | undefined>(
      "vscode.executeWorkspaceSymbolProvider",
      p.query,
    );
    return {
      symbols: (r ?? []).map((s) => ({
        name: s.name,
        kind: symbolKind(s.kind),
        ...(s.containerName ? { containerName: s.containerName } : {}),
        location: location(s.location),
      })),
    };
  },
  async "language.definition"(p) {
    const doc = await openDoc(p.path);
    const r = await vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[] | undefined>(
      "vscode.executeDefinitionProvider",
      doc.uri,
      new vscode.Position(p.position.line, p.position.character),
    );
    return { locations: (r ?? []).map(location) };
  },
  async "language.references"(p) {
    const doc = await openDoc(p.path);
    const at = new vscode.Position(p.position.line, p.position.character);
    const r =
      (await vscode.commands.executeCommand<vscode.Location[] | undefined>(
        "vscode.executeReferenceProvider",
        doc.uri,
        at,
      )) ?? [];
    let locations = r.map(location);
    if (p.includeDeclaration === false) {
      const defs = (
        (await vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[] | undefined>(
          "vscode.executeDefinitionProvider",
          doc.uri,
          at,
        )) ?? []
      ).map(location);
      const key = (l: { path: string; range: { start: { line: number; character: number } } }) =>
        `${l.path}:${l.range.start.line}:${l.range.start.character}`;
      const defKeys = new Set(defs.map(key));
      locations = locations.filter((l) => !defKeys.has(key(l)));
    }
    return { locations };
  },
  async "language.hover"(p) {
    const doc = await openDoc(p.path);
    const r = await vscode.commands.executeCommand<vscode.Hover[] | undefined>(
      "vscode.executeHoverProvider",
      doc.uri,
      new vscode.Position(p.position.line, p.position.character),
    );
    const hovers = r ?? [];
    const contents = hovers.flatMap((h) => h.contents.map(hoverText)).filter((t) => t.trim() !== "");
    const first = hovers.find((h) => h.range)?.range;
    return {
      contents,
      ...(first
        ? {
            range: {
              start: { line: first.start.line, character: first.start.character },
              end: { line: first.end.line, character: first.end.character },
            },
          }
        : {}),
    };
  },
} satisfies Partial<Handlers>;

export const baseHandlers = base;

let userExtensionsDir = "";
/** The folder user extensions are installed in (this extension's parent): everything else is built in. */
export function setUserExtensionsDir(dir: string): void {
  userExtensionsDir = dir;
}
function isBuiltin(e: vscode.Extension<unknown>): boolean {
  return !e.extensionUri.fsPath.startsWith(`${userExtensionsDir}/`);
}
