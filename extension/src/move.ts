import { constants } from "node:fs";
import { access, lstat } from "node:fs/promises";
import { dirname, sep } from "node:path";
import * as vscode from "vscode";
import type { ParamsOf, PlannedFile, ResultOf } from "../../src/editor-wire/contract.ts";
import { BridgeError, toRange } from "./convert.ts";
import { type Confine, finish, openDoc, plannedFile, sha256, writable } from "./powers.ts";

/**
 * Moving a file or folder with its imports updated. The edits come from the editor's own TypeScript
 * server through the bridge's server plugin (tsserver-plugin.ts: `getEditsForFileRename`, the answer
 * the TypeScript extension applies after a move in the explorer), computed before anything moves, so
 * a preview shows exactly what an apply does. The apply is one workspace edit, all or none: the text
 * edits (on the paths before the move), then the move; saved like every edit of the bridge.
 */

/** The request the server plugin adds (tsserver-plugin.ts; forwarded by `typescript.tsserverRequest`). */
const EDITS_FOR_FILE_RENAME = "_ccb.editsForFileRename";
const TS_WAIT_MS = 30_000;

interface FileSpanEdits {
  fileName: string;
  textChanges: Array<{ start: number; length: number; newText: string }>;
}

/** The TypeScript server's edits for a move, or undefined when no TypeScript server answered. */
async function serverEdits(from: string, to: string): Promise<FileSpanEdits[] | undefined> {
  const commands = await vscode.commands.getCommands(true);
  if (!commands.includes("typescript.tsserverRequest")) return undefined;
  const ask = Promise.resolve(
    vscode.commands.executeCommand<{ type?: string; body?: unknown } | undefined>(
      "typescript.tsserverRequest",
      EDITS_FOR_FILE_RENAME,
      { oldFilePath: from, newFilePath: to },
    ),
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new BridgeError(
            "TIMEOUT",
            `The TypeScript server did not answer within ${TS_WAIT_MS / 1000} s; nothing was moved.`,
            "The project may still be loading: try again in a moment.",
          ),
        ),
      TS_WAIT_MS,
    );
  });
  let r: { type?: string; body?: unknown } | undefined;
  try {
    r = await Promise.race([ask, expired]);
  } catch (err) {
    if (err instanceof BridgeError) throw err;
    return undefined; // the server does not know the request: the plugin is not loaded
  } finally {
    clearTimeout(timer);
  }
  if (r?.type !== "response" || !Array.isArray(r.body)) return undefined;
  return r.body as FileSpanEdits[];
}

/** The server's span edits as planned files (their texts as the editor holds them). */
async function planned(edits: readonly FileSpanEdits[], confine: Confine): Promise<PlannedFile[]> {
  const out: PlannedFile[] = [];
  for (const f of edits) {
    if (!f.textChanges.length) continue;
    await confine(f.fileName);
    const doc = await openDoc(vscode.Uri.file(f.fileName));
    const changes = f.textChanges.map(
      (c) =>
        new vscode.TextEdit(new vscode.Range(doc.positionAt(c.start), doc.positionAt(c.start + c.length)), c.newText),
    );
    out.push(plannedFile(doc, changes, doc.uri.fsPath));
  }
  return out;
}

/** Where `path` lands when `from` moves to `to` (itself, or a file inside the moved folder). */
function moved(path: string, from: string, to: string): string {
  if (path === from) return to;
  return path.startsWith(from + sep) ? to + path.slice(from.length) : path;
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/** The move alone, through the editor (its open buffers follow), refused when `to` exists. */
async function renameThroughEditor(from: string, to: string): Promise<boolean> {
  const e = new vscode.WorkspaceEdit();
  e.renameFile(vscode.Uri.file(from), vscode.Uri.file(to), { overwrite: false });
  return vscode.workspace.applyEdit(e);
}

/** Put the texts back (on the paths before the move), saving those that had no unsaved changes. */
async function restoreTexts(docs: readonly { path: string; before: string; dirty: boolean }[]): Promise<void> {
  const undo = new vscode.WorkspaceEdit();
  const open: vscode.TextDocument[] = [];
  for (const d of docs) {
    const doc = await openDoc(vscode.Uri.file(d.path)).catch(() => undefined);
    if (!doc) continue;
    open.push(doc);
    undo.replace(doc.uri, new vscode.Range(0, 0, doc.lineCount, 0), d.before);
  }
  await vscode.workspace.applyEdit(undo);
  for (const [i, doc] of open.entries()) if (!docs[i]?.dirty && doc.isDirty) await doc.save();
}

type MoveMethod = "refactor.move" | "files.move";
type MoveHandlers = { [M in MoveMethod]: (p: ParamsOf<M>) => Promise<ResultOf<M>> };

export function moveHandlers(confine: Confine): MoveHandlers {
  return {
    async "refactor.move"(p) {
      const from = await confine(p.from);
      const to = await confine(p.to);
      if (!(await exists(from))) throw new BridgeError("NOT_FOUND", `${from} does not exist.`);
      if (await exists(to))
        throw new BridgeError("ALREADY_EXISTS", `${to} already exists.`, "Choose a destination that does not exist.");
      const edits = await serverEdits(from, to);
      if (!edits) return { files: [], languageService: false };
      return { files: await planned(edits, confine), languageService: true };
    },
    async "files.move"(p) {
      const from = await confine(p.from);
      const to = await confine(p.to);
      if (!(await exists(from))) throw new BridgeError("NOT_FOUND", `${from} does not exist; nothing was moved.`);
      if (await exists(to))
        throw new BridgeError(
          "ALREADY_EXISTS",
          `${to} already exists; nothing was moved.`,
          "Choose a destination that does not exist.",
        );
      const blocked = [];
      if (
        !(await access(dirname(from), constants.W_OK).then(
          () => true,
          () => false,
        ))
      )
        blocked.push(dirname(from));
      const edit = new vscode.WorkspaceEdit();
      const docs: { path: string; before: string; dirty: boolean }[] = [];
      for (const f of p.files) {
        await confine(f.path);
        const doc = await openDoc(vscode.Uri.file(f.path));
        if (sha256(doc.getText()) !== f.hash)
          throw new BridgeError(
            "VERSION_CONFLICT",
            `${f.path} changed since the move was planned; nothing was moved.`,
            "Preview the move again and apply that.",
          );
        if (!(await writable(f.path))) blocked.push(f.path);
        docs.push({ path: doc.uri.fsPath, before: doc.getText(), dirty: doc.isDirty });
        edit.set(
          doc.uri,
          f.edits.map((e) => vscode.TextEdit.replace(toRange(e.range), e.newText)),
        );
      }
      if (blocked.length)
        throw new BridgeError(
          "PERMISSION_DENIED",
          `Cannot write ${blocked.join(", ")}; nothing was moved.`,
          "Make them writable, then try again.",
        );
      // the edits first, on the paths they were computed for, then the move (as the TypeScript
      // extension's own rename of a file does): a handler of the move then finds nothing left to update
      edit.renameFile(vscode.Uri.file(from), vscode.Uri.file(to), { overwrite: false });
      let ok = false;
      try {
        ok = await vscode.workspace.applyEdit(edit);
      } catch (err) {
        ok = false;
        if (!(err instanceof Error)) throw err;
      }
      const isMoved = (await exists(to)) && !(await exists(from));
      if (!ok || !isMoved) {
        if (isMoved) await renameThroughEditor(to, from);
        await restoreTexts(docs);
        throw new BridgeError("BRIDGE_ERROR", "The editor refused the move; nothing was moved.");
      }
      const after = await Promise.all(docs.map((d) => openDoc(vscode.Uri.file(moved(d.path, from, to)))));
      try {
        const files = await finish(
          after,
          docs.map((d) => ({ text: d.before, dirty: d.dirty })),
          p.save,
        );
        return { files };
      } catch (err) {
        // finish put the texts back; the move goes back too
        await renameThroughEditor(to, from);
        throw err;
      }
    },
  };
}
