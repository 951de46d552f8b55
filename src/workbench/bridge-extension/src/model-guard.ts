import * as vscode from "vscode";

/**
 * Decisions that belong to the person (a diff review's accept and reject) are refused while a
 * command the model asked for runs, and for SETTLE_MS after it settled. A model command can reach
 * a decision command by any route — by name, through `runCommands`, by accepting a quick pick of
 * code lenses or a command palette it opened, by saving the proposal — and every route ends in the
 * decision's own handler, which asks `refusedForModel` first. What the person does (a click on a
 * lens or a title button, the palette, Ctrl+S) runs in no model command and is not refused; nor
 * are a front end's own answers (Claude's close_tab, an ACP client's permission answer), which
 * close the diff through diff.close, not through a command.
 */

/** After a model command settled, what it set going (a picker's item, a forwarded command) lands within this. */
export const SETTLE_MS = 1000;

let running = 0;
let quietAt = 0;
let logLine: (line: string) => void = () => undefined;

/** Where refusals are logged (the extension's output channel). */
export function setModelGuardLog(log: (line: string) => void): void {
  logLine = log;
}

/** Run a command the model asked for; person-only decisions are refused until it settles, and SETTLE_MS after. */
export async function asModelCommand<T>(run: () => Thenable<T>): Promise<T> {
  running++;
  try {
    return await run();
  } finally {
    running--;
    quietAt = Math.max(quietAt, Date.now() + SETTLE_MS);
  }
}

/** True (logged, and said in the status bar) when a person-only decision must be refused now. */
export function refusedForModel(decision: string): boolean {
  if (running === 0 && Date.now() >= quietAt) return false;
  logLine(`refused ${decision}: a command the model asked for is running (review decisions are the person's)`);
  vscode.window.setStatusBarMessage(
    `ccb: ${decision} was not done: the model was running a command. Review decisions are yours; do it again.`,
    5000,
  );
  return true;
}
