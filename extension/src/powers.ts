import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { access, readFile, stat } from "node:fs/promises";
import * as vscode from "vscode";
import type {
  ChangedFile,
  CodeActionInfo,
  HierarchyNodeT,
  ParamsOf,
  PlannedFile,
  ResultOf,
} from "../../src/editor-wire/contract.ts";
import { BridgeError, location, range, symbolKind, toPos, toRange, uriPath } from "./convert.ts";
import { asModelCommand } from "./model-guard.ts";

/**
 * The editor's refactor and deeper navigation powers (rename, code actions, format, call and type
 * hierarchy, implementations, type definition, signature help), and the one way their edits land:
 * every file confined by ccb first, all files or none, saved unless the person has unsaved changes.
 */

/** Asks ccb whether a path is inside the workspace (rejects when it is not); the real path back. */
export type Confine = (path: string) => Promise<string>;

export const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");

export function textAfter(doc: vscode.TextDocument, edits: readonly vscode.TextEdit[]): string {
  const text = doc.getText();
  const spans = edits
    .map((e) => ({ start: doc.offsetAt(e.range.start), end: doc.offsetAt(e.range.end), text: e.newText }))
    .sort((a, b) => b.start - a.start || b.end - a.end);
  let out = text;
  for (const s of spans) out = out.slice(0, s.start) + s.text + out.slice(s.end);
  return out;
}

export async function openDoc(uri: vscode.Uri): Promise<vscode.TextDocument> {
  try {
    return await vscode.workspace.openTextDocument(uri);
  } catch (err) {
    throw new BridgeError("NOT_FOUND", `The editor cannot open ${uriPath(uri)}: ${(err as Error).message}`);
  }
}

/** Writable for ccb, and not marked read-only (no write bit at all) by its owner: even root respects that. */
export async function writable(path: string): Promise<boolean> {
  try {
    const st = await stat(path);
    if ((st.mode & 0o222) === 0) return false;
    await access(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function fileUris(edit: vscode.WorkspaceEdit): vscode.Uri[] {
  const uris = edit.entries().map(([u]) => u);
  const other = uris.find((u) => u.scheme !== "file");
  if (other) throw new BridgeError("UNSUPPORTED", `The edit touches ${other.toString()}, which is not a file.`);
  return uris;
}

/**
 * Apply a workspace edit, all files or none: every file confined, unchanged since `expected`
 * (path -> sha256) and writable before anything changes; then the files without unsaved changes are
 * saved (when `save`), and if a save fails every file is put back as it was.
 */
export async function applyWorkspaceEdit(
  edit: vscode.WorkspaceEdit,
  confine: Confine,
  save: boolean,
  expected?: ReadonlyMap<string, string>,
): Promise<ChangedFile[]> {
  const uris = fileUris(edit);
  for (const u of uris) await confine(u.fsPath);
  const docs = await Promise.all(uris.map(openDoc));
  for (const d of docs) {
    const want = expected?.get(d.uri.fsPath);
    if (want !== undefined && sha256(d.getText()) !== want)
      throw new BridgeError(
        "VERSION_CONFLICT",
        `${d.uri.fsPath} changed since the edit was computed; nothing was applied.`,
        "Compute the edit again (a new preview) and apply that.",
      );
  }
  const readOnly = [];
  for (const d of docs) if (!(await writable(d.uri.fsPath))) readOnly.push(d.uri.fsPath);
  if (readOnly.length)
    throw new BridgeError(
      "PERMISSION_DENIED",
      `Cannot write ${readOnly.join(", ")}; nothing was applied.`,
      "Make the file(s) writable or leave them out, then try again.",
    );
  const before = docs.map((d) => ({ text: d.getText(), dirty: d.isDirty }));
  if (!(await vscode.workspace.applyEdit(edit)))
    throw new BridgeError("BRIDGE_ERROR", "The editor refused the edit; nothing was applied.");
  return finish(docs, before, save);
}

/** Save the changed documents that had no unsaved changes; on a failed save restore every one. */
export async function finish(
  docs: readonly vscode.TextDocument[],
  before: readonly { text: string; dirty: boolean }[],
  save: boolean,
): Promise<ChangedFile[]> {
  const saved = docs.map(() => false);
  try {
    if (save)
      for (const [i, d] of docs.entries()) {
        if (before[i]?.dirty || !d.isDirty) continue;
        if (!(await d.save())) throw new Error(`saving ${d.uri.fsPath} failed`);
        saved[i] = true;
      }
  } catch (err) {
    const undo = new vscode.WorkspaceEdit();
    for (const [i, d] of docs.entries())
      undo.replace(d.uri, new vscode.Range(0, 0, d.lineCount, 0), before[i]?.text ?? "");
    await vscode.workspace.applyEdit(undo);
    for (const [i, d] of docs.entries()) if (saved[i] || !before[i]?.dirty) await d.save();
    throw new BridgeError("BRIDGE_ERROR", `${(err as Error).message}; every file was put back as it was.`);
  }
  return docs
    .map((d, i) => ({
      path: d.uri.fsPath,
      before: before[i]?.text ?? "",
      after: d.getText(),
      wasDirty: before[i]?.dirty ?? false,
      saved: saved[i] ?? false,
    }))
    .filter((c) => c.before !== c.after);
}

/** Run `action` (a command that edits through the editor) and report the files it changed, saved like an edit. */
async function recordChanges(action: () => Thenable<unknown>, confine: Confine, save: boolean) {
  const open = new Map(
    vscode.workspace.textDocuments
      .filter((d) => d.uri.scheme === "file")
      .map((d) => [d.uri.toString(), { text: d.getText(), dirty: d.isDirty }]),
  );
  const touched = new Map<string, vscode.TextDocument>();
  const sub = vscode.workspace.onDidChangeTextDocument((e) => {
    if (e.document.uri.scheme === "file" && e.contentChanges.length) touched.set(e.document.uri.toString(), e.document);
  });
  try {
    await action();
  } finally {
    sub.dispose();
  }
  const docs = [...touched.values()];
  const before = await Promise.all(
    docs.map(
      async (d) =>
        open.get(d.uri.toString()) ?? { text: await readFile(d.uri.fsPath, "utf8").catch(() => ""), dirty: false },
    ),
  );
  try {
    for (const d of docs) await confine(d.uri.fsPath);
  } catch (err) {
    const undo = new vscode.WorkspaceEdit();
    for (const [i, d] of docs.entries())
      undo.replace(d.uri, new vscode.Range(0, 0, d.lineCount, 0), before[i]?.text ?? "");
    await vscode.workspace.applyEdit(undo);
    throw err;
  }
  return finish(docs, before, save);
}

/** Plain JSON of a workspace edit as planned changes (nothing applied). */
async function plan(edit: vscode.WorkspaceEdit): Promise<PlannedFile[]> {
  const out: PlannedFile[] = [];
  for (const [uri, edits] of edit.entries()) {
    out.push(plannedFile(await openDoc(uri), edits, uriPath(uri)));
  }
  return out;
}

/** One file of a planned edit: its text now (hash, dirty), the edits, and its text after them. */
export function plannedFile(doc: vscode.TextDocument, edits: readonly vscode.TextEdit[], path: string): PlannedFile {
  const text = doc.getText();
  return {
    path,
    hash: sha256(text),
    isDirty: doc.isDirty,
    edits: edits.map((e) => ({ range: range(e.range), newText: e.newText })),
    before: text,
    after: textAfter(doc, edits),
  };
}

// ---------------------------------------------------------------- code actions listed, by id

interface Listed {
  action: vscode.CodeAction | vscode.Command;
  path: string;
  hash: string;
}
const listed = new Map<string, Listed>();
let nextAction = 1;
const MAX_LISTED = 500;

function remember(entry: Listed): string {
  const id = `a${nextAction++}`;
  listed.set(id, entry);
  while (listed.size > MAX_LISTED) listed.delete(listed.keys().next().value as string);
  return id;
}

function isCommand(a: vscode.CodeAction | vscode.Command): a is vscode.Command {
  return typeof (a as vscode.Command).command === "string";
}

function actionInfo(id: string, a: vscode.CodeAction | vscode.Command): CodeActionInfo {
  if (isCommand(a)) return { id, title: a.title, diagnostics: [], hasEdit: false, command: a.command };
  return {
    id,
    title: a.title,
    ...(a.kind ? { kind: a.kind.value } : {}),
    ...(a.isPreferred !== undefined ? { isPreferred: a.isPreferred } : {}),
    ...(a.disabled ? { disabled: a.disabled.reason } : {}),
    diagnostics: (a.diagnostics ?? []).map((d) => d.message),
    hasEdit: Boolean(a.edit && a.edit.size > 0),
    ...(a.command ? { command: a.command.command } : {}),
  };
}

// ---------------------------------------------------------------- hierarchies

type Item = vscode.CallHierarchyItem | vscode.TypeHierarchyItem;

function node(item: Item, fromRanges?: readonly vscode.Range[]): HierarchyNodeT {
  return {
    name: item.name,
    kind: symbolKind(item.kind),
    ...(item.detail ? { detail: item.detail } : {}),
    path: uriPath(item.uri),
    range: range(item.range),
    selectionRange: range(item.selectionRange),
    ...(fromRanges ? { fromRanges: fromRanges.map(range) } : {}),
    children: [],
  };
}

/** Breadth-first expansion of `roots` to `depth` levels, at most `maxNodes` nodes in all. */
async function expand<T extends Item>(
  roots: readonly T[],
  depth: number,
  maxNodes: number,
  next: (item: T) => Promise<Array<{ item: T; fromRanges?: readonly vscode.Range[] }>>,
): Promise<{ roots: HierarchyNodeT[]; truncated: boolean }> {
  let count = 0;
  let truncated = false;
  const top = roots.slice(0, maxNodes).map((r) => ({ item: r, view: node(r) }));
  count += top.length;
  let level = top;
  for (let d = 0; d < depth && level.length; d++) {
    const following: typeof level = [];
    for (const { item, view } of level) {
      for (const child of await next(item)) {
        if (count >= maxNodes) {
          truncated = true;
          break;
        }
        const v = node(child.item, child.fromRanges);
        view.children.push(v);
        following.push({ item: child.item, view: v });
        count++;
      }
    }
    level = following;
  }
  return { roots: top.map((t) => t.view), truncated };
}

// ---------------------------------------------------------------- a command that may wait for input

/**
 * Run a command, giving up after `waitMs`: a command that opens a picker, input box or dialog waits
 * for a person. Then the quick input is closed (which usually ends the command) and TIMEOUT answers.
 */
/**
 * Load the documents of the file URIs among a command's arguments: provider commands on a file no
 * editor has loaded take another path in the workbench that drops arguments after the position
 * (the rename provider then fails with "Unexpected type"), and language servers answer only for
 * loaded files.
 */
async function loadDocuments(args: readonly unknown[]): Promise<void> {
  for (const a of args)
    if (a instanceof vscode.Uri && a.scheme === "file")
      await Promise.resolve(vscode.workspace.openTextDocument(a)).catch(() => undefined);
}

export async function executeBounded(command: string, args: unknown[], waitMs: number): Promise<unknown> {
  await loadDocuments(args);
  // Until it settles (even past waitMs), the person's review decisions are refused (model-guard.ts).
  const run = asModelCommand(() => vscode.commands.executeCommand(command, ...args), command, waitMs);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = Symbol("expired");
  const timeout = new Promise<typeof expired>((resolve) => {
    timer = setTimeout(() => resolve(expired), waitMs);
  });
  try {
    const r = await Promise.race([run, timeout]);
    if (r !== expired) return r;
  } finally {
    clearTimeout(timer);
  }
  run.catch(() => undefined);
  await vscode.commands.executeCommand("workbench.action.closeQuickOpen").then(undefined, () => undefined);
  throw new BridgeError(
    "TIMEOUT",
    `The command ${command} did not finish within ${Math.round(waitMs / 100) / 10} s: it is probably waiting for input ` +
      "(a picker, an input box or a dialog). The picker was closed.",
    "Give the command the arguments it would ask for, or use a dedicated tool; raise waitSeconds only for slow commands.",
  );
}

// ---------------------------------------------------------------- handlers

type PowerMethod =
  | "refactor.rename"
  | "edits.apply"
  | "codeActions.list"
  | "codeActions.apply"
  | "format.apply"
  | "language.implementations"
  | "language.typeDefinition"
  | "language.signatureHelp"
  | "language.callHierarchy"
  | "language.typeHierarchy";
type PowerHandlers = { [M in PowerMethod]: (p: ParamsOf<M>) => Promise<ResultOf<M>> };

const fileUri = (path: string) => vscode.Uri.file(path);

async function locations(command: string, p: { path: string; position: { line: number; character: number } }) {
  const r = await vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[] | undefined>(
    command,
    fileUri(p.path),
    toPos(p.position),
  );
  return { locations: (r ?? []).map(location) };
}

async function formattingOptions(doc: vscode.TextDocument): Promise<vscode.FormattingOptions> {
  const editor = vscode.window.visibleTextEditors.find((e) => e.document === doc);
  if (editor && typeof editor.options.tabSize === "number" && typeof editor.options.insertSpaces === "boolean")
    return { tabSize: editor.options.tabSize, insertSpaces: editor.options.insertSpaces };
  const cfg = vscode.workspace.getConfiguration("editor", doc);
  return { tabSize: cfg.get<number>("tabSize", 4), insertSpaces: cfg.get<boolean>("insertSpaces", true) };
}

export function powerHandlers(confine: Confine): PowerHandlers {
  return {
    async "refactor.rename"(p) {
      const uri = fileUri(p.path);
      await openDoc(uri);
      let edit: vscode.WorkspaceEdit | undefined;
      try {
        edit = await vscode.commands.executeCommand<vscode.WorkspaceEdit | undefined>(
          "vscode.executeDocumentRenameProvider",
          uri,
          toPos(p.position),
          p.newName,
        );
      } catch (err) {
        throw new BridgeError("INVALID_ARGUMENT", `Cannot rename here: ${(err as Error).message}`);
      }
      if (!edit || edit.size === 0)
        throw new BridgeError("NOT_FOUND", "No symbol the language service can rename at that position.");
      return { files: await plan(edit) };
    },
    async "edits.apply"(p) {
      const edit = new vscode.WorkspaceEdit();
      const expected = new Map<string, string>();
      for (const f of p.files) {
        const uri = fileUri(f.path);
        if (f.hash) expected.set(uri.fsPath, f.hash);
        edit.set(
          uri,
          f.edits.map((e) => vscode.TextEdit.replace(toRange(e.range), e.newText)),
        );
      }
      return { files: await applyWorkspaceEdit(edit, confine, p.save, expected) };
    },
    async "codeActions.list"(p) {
      const uri = fileUri(p.path);
      const doc = await openDoc(uri);
      const r = p.range ? toRange(p.range) : new vscode.Range(0, 0, doc.lineCount, 0);
      const actions =
        (await vscode.commands.executeCommand<(vscode.CodeAction | vscode.Command)[] | undefined>(
          "vscode.executeCodeActionProvider",
          uri,
          r,
          p.kind,
          50,
        )) ?? [];
      const hash = sha256(doc.getText());
      return {
        actions: actions.map((a) => actionInfo(remember({ action: a, path: uri.fsPath, hash }), a)),
      };
    },
    async "codeActions.apply"(p) {
      const entry = listed.get(p.id);
      if (!entry)
        throw new BridgeError(
          "NOT_FOUND",
          `No listed code action ${p.id}.`,
          "List the code actions again and use an id from that list.",
        );
      const doc = await openDoc(fileUri(entry.path));
      if (sha256(doc.getText()) !== entry.hash)
        throw new BridgeError(
          "VERSION_CONFLICT",
          `${entry.path} changed since the code actions were listed; nothing was applied.`,
          "List the code actions again and apply from the new list.",
        );
      const a = entry.action;
      if (isCommand(a)) {
        const files = await recordChanges(
          () => asModelCommand(() => vscode.commands.executeCommand(a.command, ...(a.arguments ?? []))),
          confine,
          p.save,
        );
        return { title: a.title, files, command: a.command };
      }
      if (a.disabled) throw new BridgeError("UNSUPPORTED", `The action is disabled: ${a.disabled.reason}`);
      const files = a.edit && a.edit.size > 0 ? await applyWorkspaceEdit(a.edit, confine, p.save) : [];
      if (a.command) {
        const cmd = a.command;
        const more = await recordChanges(
          () => vscode.commands.executeCommand(cmd.command, ...(cmd.arguments ?? [])),
          confine,
          p.save,
        );
        files.push(...more);
      }
      return { title: a.title, files, ...(a.command ? { command: a.command.command } : {}) };
    },
    async "format.apply"(p) {
      const uri = fileUri(p.path);
      const doc = await openDoc(uri);
      const options = await formattingOptions(doc);
      const edits =
        (p.range
          ? await vscode.commands.executeCommand<vscode.TextEdit[] | undefined>(
              "vscode.executeFormatRangeProvider",
              uri,
              toRange(p.range),
              options,
            )
          : await vscode.commands.executeCommand<vscode.TextEdit[] | undefined>(
              "vscode.executeFormatDocumentProvider",
              uri,
              options,
            )) ?? [];
      const opts = { tabSize: Number(options.tabSize), insertSpaces: Boolean(options.insertSpaces) };
      if (!edits.length) return { files: [], options: opts };
      const edit = new vscode.WorkspaceEdit();
      edit.set(uri, edits);
      const expected = new Map([[uri.fsPath, sha256(doc.getText())]]);
      return { files: await applyWorkspaceEdit(edit, confine, p.save, expected), options: opts };
    },
    "language.implementations": (p) => locations("vscode.executeImplementationProvider", p),
    "language.typeDefinition": (p) => locations("vscode.executeTypeDefinitionProvider", p),
    async "language.signatureHelp"(p) {
      const h = await vscode.commands.executeCommand<vscode.SignatureHelp | undefined>(
        "vscode.executeSignatureHelpProvider",
        fileUri(p.path),
        toPos(p.position),
      );
      const doc = (d: string | vscode.MarkdownString | undefined) => (typeof d === "string" ? d : d?.value);
      return {
        signatures: (h?.signatures ?? []).map((s) => {
          const documentation = doc(s.documentation);
          return {
            label: s.label,
            ...(documentation ? { documentation } : {}),
            parameters: s.parameters.map((x) =>
              typeof x.label === "string" ? x.label : s.label.slice(x.label[0], x.label[1]),
            ),
          };
        }),
        activeSignature: h?.activeSignature ?? 0,
        activeParameter: h?.activeParameter ?? 0,
      };
    },
    async "language.callHierarchy"(p) {
      const roots =
        (await vscode.commands.executeCommand<vscode.CallHierarchyItem[] | undefined>(
          "vscode.prepareCallHierarchy",
          fileUri(p.path),
          toPos(p.position),
        )) ?? [];
      return expand(roots, p.depth, p.maxNodes, async (item) => {
        if (p.direction === "incoming") {
          const calls =
            (await vscode.commands.executeCommand<vscode.CallHierarchyIncomingCall[] | undefined>(
              "vscode.provideIncomingCalls",
              item,
            )) ?? [];
          return calls.map((c) => ({ item: c.from, fromRanges: c.fromRanges }));
        }
        const calls =
          (await vscode.commands.executeCommand<vscode.CallHierarchyOutgoingCall[] | undefined>(
            "vscode.provideOutgoingCalls",
            item,
          )) ?? [];
        return calls.map((c) => ({ item: c.to, fromRanges: c.fromRanges }));
      });
    },
    async "language.typeHierarchy"(p) {
      const roots =
        (await vscode.commands.executeCommand<vscode.TypeHierarchyItem[] | undefined>(
          "vscode.prepareTypeHierarchy",
          fileUri(p.path),
          toPos(p.position),
        )) ?? [];
      const command = p.direction === "supertypes" ? "vscode.provideSupertypes" : "vscode.provideSubtypes";
      return expand(roots, p.depth, p.maxNodes, async (item) =>
        ((await vscode.commands.executeCommand<vscode.TypeHierarchyItem[] | undefined>(command, item)) ?? []).map(
          (t) => ({ item: t }),
        ),
      );
    },
  };
}
