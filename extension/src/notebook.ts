import * as vscode from "vscode";
import type { ResultOf } from "../../src/editor-wire/contract.ts";

type Result = ResultOf<"notebook.executeCode">;

/** Run code in the active notebook's kernel, only after the person says yes (a modal prompt). */
export async function executeInNotebook(code: string): Promise<Result> {
  const nb = vscode.window.activeNotebookEditor;
  if (!nb) return { status: "no-notebook", outputs: [] };
  const preview = code.length > 400 ? `${code.slice(0, 400)}…` : code;
  const ok = await vscode.window.showWarningMessage(
    "Run this code in the active notebook's kernel?",
    { modal: true, detail: preview },
    "Run",
  );
  if (ok !== "Run") return { status: "declined", outputs: [] };
  const doc = nb.notebook;
  const index = doc.cellCount;
  const edit = new vscode.WorkspaceEdit();
  edit.set(doc.uri, [
    vscode.NotebookEdit.insertCells(index, [new vscode.NotebookCellData(vscode.NotebookCellKind.Code, code, "python")]),
  ]);
  await vscode.workspace.applyEdit(edit);
  const done = new Promise<void>((resolve) => {
    const sub = vscode.workspace.onDidChangeNotebookDocument((e) => {
      if (e.notebook !== doc) return;
      const c = e.cellChanges.find((x) => x.cell.index === index && x.executionSummary?.timing?.endTime !== undefined);
      if (c) {
        sub.dispose();
        resolve();
      }
    });
  });
  await vscode.commands.executeCommand("notebook.cell.execute", {
    ranges: [{ start: index, end: index + 1 }],
    document: doc.uri,
  });
  await done;
  const cell = doc.cellAt(index);
  const outputs = cell.outputs.flatMap((o) =>
    o.items.map((i) => ({ mime: i.mime, text: new TextDecoder().decode(i.data) })),
  );
  return { status: "executed", outputs };
}
