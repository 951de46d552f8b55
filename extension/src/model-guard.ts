import { setTimeout as sleep } from "node:timers/promises";
import * as vscode from "vscode";

/**
 * Decisions that belong to the person (a diff review's accept and reject, allowing an extension
 * install the model asked for) are refused while a command the model asked for runs, and for
 * SETTLE_MS after it settled. A model command can reach a decision command by any route — by name,
 * through `runCommands`, by accepting a quick pick of code lenses or a command palette it opened,
 * by saving the proposal — and every route ends in the decision's own handler, which asks
 * `refusedForModel` first. What the person does (a click on a lens or a title button, the palette,
 * Ctrl+S) runs in no model command and is not refused; nor are a front end's own answers (Claude's
 * close_tab, an ACP client's permission answer), which close the diff through diff.close, not
 * through a command.
 *
 * Bounded: a picker or input box a model command opened never outlives it (closed when the command
 * settles, so it cannot wait for the person's next Enter), and a command that has not settled after
 * BOUND_MS (it waits on the person: a save dialog, a quick input) has its picker closed; if it then
 * still has not settled (a modal dialog, a slow command) it no longer blocks the person's decisions.
 * Its picker may not have been shown yet at the bound (under load, Save As resolved its folder over
 * the remote connection and showed its file input after the close, where it then waited for the
 * person's keys), so while it stays unsettled, up to its own wait, the quick input is closed again
 * every SETTLE_MS: a command the model left waiting owns no picker, however late it shows one.
 * A decision such a released command runs itself later is not refused: the tool never lets the model
 * chain one (runCommands and ccb.* are refused before the workbench sees them).
 */

/** After a model command settled, what it set going (a picker's item, a forwarded command) lands within this. */
export const SETTLE_MS = 1000;
/** A model command blocks the person's decisions at most this long (plus closing its picker and SETTLE_MS). */
export const BOUND_MS = 3000;

interface Running {
  command: string;
  released: boolean;
  /** Until when its caller waits for it: a write it causes (a save) is refused until then, even released. */
  until: number;
  /** Order of start: the quick input is one widget, and the newest model command's picker is the one shown. */
  seq: number;
}

const running = new Set<Running>();
let quietAt = 0;
let started = 0;
let logLine: (line: string) => void = () => undefined;

/** Where refusals are logged (the extension's output channel). */
export function setModelGuardLog(log: (line: string) => void): void {
  logLine = log;
}

/**
 * Close the quick input (a picker, an input box, the simple file dialog of Save As), if one is open,
 * for the model command `me`: unless a model command started after it, whose picker it would close
 * instead (that one's own guard closes it; a shown picker replaces an older one, which settles that).
 */
async function closeQuickInput(me: Running): Promise<void> {
  if (started > me.seq) return;
  await vscode.commands.executeCommand("workbench.action.closeQuickOpen").then(
    () => undefined,
    () => undefined,
  );
}

/**
 * Run a command the model asked for; person-only decisions are refused until it settles (bounded), and
 * SETTLE_MS after. `waitMs` is how long its caller waits for it: a picker it shows is closed until then.
 */
export async function asModelCommand<T>(
  run: () => Thenable<T>,
  command = "a command the model asked for",
  waitMs = BOUND_MS + SETTLE_MS,
): Promise<T> {
  const me: Running = { command, released: false, until: Date.now() + waitMs, seq: ++started };
  running.add(me);
  let settled = false;
  const bound = setTimeout(async () => {
    // Still running: it waits on something. A picker or input box it opened is closed (the command
    // then settles, still under this guard, as does whatever the close set going) ...
    await closeQuickInput(me);
    await sleep(SETTLE_MS);
    if (settled) return;
    // ... and if it still waits (a modal dialog, a slow command), the person's decisions are theirs again;
    me.released = true;
    logLine(`${command} has not settled after ${BOUND_MS / 1000} s: it no longer holds back the person's decisions`);
    // a picker it shows late is still closed, until it settles or its caller stops waiting.
    while (!settled && Date.now() < me.until && started === me.seq) {
      await closeQuickInput(me);
      await sleep(SETTLE_MS);
    }
  }, BOUND_MS);
  try {
    return await run();
  } finally {
    settled = true;
    clearTimeout(bound);
    // A picker it opened and left (a palette on a decision) must not wait for the person's next Enter.
    await closeQuickInput(me);
    running.delete(me);
    quietAt = Math.max(quietAt, Date.now() + SETTLE_MS);
    // A picker whose widget the renderer shows only after the command answered is closed once more
    // inside the quiet window, while the person's decisions are still refused.
    // Not if the model asked for another command meanwhile: its picker would be closed under it
    // (a second `workbench.action.debug.start` right after the first timed out answered `null`).
    setTimeout(() => void closeQuickInput(me), SETTLE_MS / 2);
  }
}

/**
 * True (logged, and said in the status bar) when a person-only decision must be refused now. A
 * `write` (saving the proposal, which accepts it) is what a save the model asked for does itself
 * when it lands, and a save that outlived BOUND_MS (released: its save participants are slow, or it
 * waits on a dialog) would land after the release. So a write stays refused while any model command
 * runs, released or not, up to its caller's wait; the person's buttons and lenses still decide.
 */
export function refusedForModel(decision: string, kind: "decision" | "write" = "decision"): boolean {
  const now = Date.now();
  const blocking = [...running].some((r) => !r.released || (kind === "write" && now < r.until));
  if (!blocking && now >= quietAt) return false;
  logLine(`refused ${decision}: a command the model asked for is running (review decisions are the person's)`);
  vscode.window.setStatusBarMessage(
    `ccb: ${decision} was not done: the model was running a command. Review decisions are yours; do it again.`,
    5000,
  );
  return true;
}
