import type { CdpSession } from "../../src/platform/cdp-pipe.ts";
import type { PersonPage } from "./person-page.ts";

/**
 * The person's "Agent changes" view (extension/src/checkpoints-view.ts) as a person sees it in
 * a real Chromium: its rows read from the page by their accessible labels, acted on only with mouse
 * events (a hover shows a row's inline actions, a click runs one) and the modal dialog's buttons.
 */

const ROWS = `[...document.querySelectorAll(".monaco-list-row[aria-label]")].map((r) => r.getAttribute("aria-label")).filter((l) => /^(attached: |agent |change set |file )/.test(l))`;

/** What the workbench shows outside the view: notifications and the editor tabs' labels. */
const NOTIFICATIONS = `[...document.querySelectorAll(".notifications-toasts .notification-list-item")].map((e) => (e.getAttribute("aria-label") || e.textContent || "").trim())`;
const TABS = `[...document.querySelectorAll(".tabs-container .tab")].map((e) => (e.getAttribute("aria-label") || e.textContent || "").trim())`;
/** The modal dialog's text while one is shown, else null. */
export const DIALOG_TEXT = `(() => { const d = document.querySelector(".monaco-dialog-box"); if (!d || d.getBoundingClientRect().width === 0) return null; return d.textContent; })()`;
const BUTTON = (label: string) =>
  `(() => { const b = [...document.querySelectorAll(".monaco-dialog-box .monaco-button")].find((e) => e.textContent.trim() === ${JSON.stringify(label)}); if (!b) return null; const r = b.getBoundingClientRect(); return r.width > 0 ? { x: r.x + r.width / 2, y: r.y + r.height / 2 } : null; })()`;

/** The center of the first row whose label matches, or null. */
const ROW_AT = (re: RegExp) =>
  `(() => { const re = new RegExp(${JSON.stringify(re.source)}, ${JSON.stringify(re.flags)}); const r = [...document.querySelectorAll(".monaco-list-row[aria-label]")].find((e) => re.test(e.getAttribute("aria-label"))); if (!r) return null; const b = r.getBoundingClientRect(); return b.width > 0 && b.height > 0 ? { x: b.x + Math.min(60, b.width / 2), y: b.y + b.height / 2 } : null; })()`;
/** The center of an inline action (by its label) of the first row whose label matches, once shown. */
const ACTION_AT = (re: RegExp, action: string) =>
  `(() => { const re = new RegExp(${JSON.stringify(re.source)}, ${JSON.stringify(re.flags)}); const r = [...document.querySelectorAll(".monaco-list-row[aria-label]")].find((e) => re.test(e.getAttribute("aria-label"))); if (!r) return null; const a = [...r.querySelectorAll(".actions .action-label")].find((e) => (e.getAttribute("aria-label") || "").startsWith(${JSON.stringify(action)})); if (!a) return null; const b = a.getBoundingClientRect(); return b.width > 0 ? { x: b.x + b.width / 2, y: b.y + b.height / 2 } : null; })()`;

/** The label of the first row whose label matches, or null. */
const LABEL_OF = (re: RegExp) =>
  `(() => { const re = new RegExp(${JSON.stringify(re.source)}, ${JSON.stringify(re.flags)}); const r = [...document.querySelectorAll(".monaco-list-row[aria-label]")].find((e) => re.test(e.getAttribute("aria-label"))); return r ? r.getAttribute("aria-label") : null; })()`;

/**
 * Whether a confirmation dialog is about the change set a row shows, as a person reads it: its
 * agent, its tool, its time and (an undo's) its files. Rows move when the view is refreshed (a
 * record pushed, a new row on top), so a click can land on another row's action: the dialog says so.
 */
function dialogIsAbout(dialog: string, rowLabel: string): boolean {
  const m = /^change set \S+ by (.+?): (\S+)/.exec(rowLabel);
  if (!m) return false;
  const [, agent, tool] = m as unknown as [string, string, string];
  if (!dialog.includes(agent) || !dialog.includes(tool)) return false;
  const time = /\d{1,2}:\d{2}:\d{2}(\s?[AP]M)?/.exec(rowLabel)?.[0];
  if (time && !dialog.includes(time)) return false;
  const files = /files (.+)$/.exec(rowLabel)?.[1];
  if (files && /Takes back/.test(dialog)) return files.split(", ").every((f) => dialog.includes(f));
  return true;
}

export interface ChangesView {
  /** The view's rows (their accessible labels), top to bottom. */
  rows(): Promise<string[]>;
  /** Wait until the rows satisfy `ok` (the view asks ccb again when ccb pushes a change). */
  untilRows(what: string, ok: (rows: string[]) => boolean): Promise<string[]>;
  /** Click the row whose label matches (a change set's row opens its diff). */
  clickRow(re: RegExp): Promise<void>;
  /** Open the view as a person does: a click on its activity bar icon ("ccb"). */
  open(): Promise<void>;
  /** Hover the row whose label matches and click its inline action `action` (e.g. "Undo this change set"), until its dialog shows. */
  rowAction(re: RegExp, action: string): Promise<void>;
  /** Wait for the modal dialog, return its text, and click its button `label`. */
  answerDialog(label: string): Promise<string>;
  untilNotification(what: string, re: RegExp): Promise<string>;
  untilTab(what: string, re: RegExp): Promise<string>;
}

export function changesView(person: PersonPage, cdp: CdpSession): ChangesView {
  const hover = (x: number, y: number) =>
    cdp.send("Input.dispatchMouseEvent", { type: "mouseMoved", x, y, button: "none" });
  return {
    rows: () => person.evaluate<string[]>(ROWS),
    untilRows: (what, ok) => person.until<string[]>(what, ROWS, ok),
    async clickRow(re) {
      const at = await person.until<{ x: number; y: number } | null>(`a row ${re}`, ROW_AT(re), (v) => v !== null);
      await person.click(at!.x, at!.y);
    },
    async open() {
      const at = await person.until<{ x: number; y: number } | null>(
        "the ccb icon in the activity bar",
        `(() => { const a = [...document.querySelectorAll(".activitybar .action-item .action-label")].find((e) => (e.getAttribute("aria-label") || "").startsWith("ccb")); if (!a) return null; const b = a.getBoundingClientRect(); return b.width > 0 ? { x: b.x + b.width / 2, y: b.y + b.height / 2 } : null; })()`,
        (v) => v !== null,
      );
      await person.click(at!.x, at!.y);
    },
    async rowAction(re, action) {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const row = await person.until<{ x: number; y: number } | null>(`a row ${re}`, ROW_AT(re), (v) => v !== null);
        await hover(row!.x, row!.y);
        const at = await person
          .until<{ x: number; y: number } | null>(
            `"${action}" on ${re}`,
            ACTION_AT(re, action),
            (v) => v !== null,
            5_000,
          )
          .catch(() => null);
        const label = await person.evaluate<string | null>(LABEL_OF(re));
        if (at && label) {
          await person.click(at.x, at.y);
          // a click lost to a row drawn anew under it: the person sees no dialog and clicks again
          const asked = await person
            .until<string | null>("the dialog", DIALOG_TEXT, (v) => !!v, 5_000)
            .catch(() => null);
          if (asked && dialogIsAbout(asked, label)) return;
          if (asked) {
            // the click landed on another row's action (the rows moved): the person reads the
            // dialog, cancels it, and clicks the row they meant
            const cancel = await person.until<{ x: number; y: number } | null>(
              "the dialog's Cancel",
              BUTTON("Cancel"),
              (v) => !!v,
            );
            await person.click(cancel!.x, cancel!.y);
            await person.until<string | null>("the dialog gone", DIALOG_TEXT, (v) => v === null, 30_000);
          }
        }
        // the row moved under the mouse (the view was refreshed): hover it again, as a person would
        if (Date.now() > deadline) throw new Error(`TIMEOUT no "${action}" shown on the row ${re}`);
      }
    },
    async answerDialog(label) {
      const text = await person.until<string | null>("the confirmation dialog", DIALOG_TEXT, (v) => !!v);
      const at = await person.until<{ x: number; y: number } | null>(
        `the dialog's ${label}`,
        BUTTON(label),
        (v) => !!v,
      );
      await person.click(at!.x, at!.y);
      await person.until<string | null>("the dialog gone", DIALOG_TEXT, (v) => v === null, 30_000);
      return text ?? "";
    },
    async untilNotification(what, re) {
      const all = await person.until<string[]>(what, NOTIFICATIONS, (v) => v.some((n) => re.test(n)));
      return all.find((n) => re.test(n)) ?? "";
    },
    async untilTab(what, re) {
      const all = await person.until<string[]>(what, TABS, (v) => v.some((n) => re.test(n)));
      return all.find((n) => re.test(n)) ?? "";
    },
  };
}
