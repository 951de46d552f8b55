import { relative, sep } from "node:path";
import type { Core } from "../core/core.ts";
import { callEditor, type EditorBridge } from "../core/editor/bridge.ts";
import { isCcbError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { Diagnostic } from "../editor-wire/contract.ts";
import { HEALTH } from "../workbench/health.ts";
import type { EditedFile, EditFeedback } from "./tool-runner.ts";

/**
 * How long an edit waits for the language servers. First the editor must hold the edited text and
 * the language's servers must be up (`startMs` at most: the first edit of a language starts its
 * server, which loads the project). Then the diagnostics must stay unchanged for `quietMs` after a
 * change, or for `idleMs` when they do not change at all (a language server reports only changes);
 * at most `maxMs` after the servers were up.
 */
export interface SettleTiming {
  quietMs: number;
  idleMs: number;
  maxMs: number;
  startMs: number;
  /** How long an edit waits for the bridge of a running workbench that is away (RECONNECT_WAIT_MS). */
  reconnectMs?: number;
}

export const DEFAULT_SETTLE: SettleTiming = { quietMs: 500, idleMs: 1_500, maxMs: 5_000, startMs: 30_000 };

/** Diagnostics listed per edit result (the rest is counted). */
const MAX_LINES = 30;
/** Severities the model is told about: hints (unused code shown faded) are left out. */
const REPORTED = new Set<Diagnostic["severity"]>(["error", "warning", "information"]);

/** Why a diagnostics list may be stale. */
export type Unsettled = { busyMs: number } | { startingMs: number; languages: string[] } | { notShownMs: number };

/**
 * `path:line:col severity: message [source code]` lines (1-based positions), capped; paths relative
 * to `cwd` when inside it. `unsettled`: the language servers were still starting or busy.
 */
export function diagnosticsText(
  files: { path: string; diagnostics: Diagnostic[] }[],
  cwd: string,
  unsettled?: Unsettled,
): string {
  const show = (abs: string) => {
    const rel = relative(cwd, abs);
    return rel && !rel.startsWith(`..${sep}`) && rel !== ".." ? rel : abs;
  };
  const lines: string[] = [];
  let total = 0;
  for (const f of files) {
    for (const d of f.diagnostics.filter((x) => REPORTED.has(x.severity))) {
      total++;
      if (lines.length >= MAX_LINES) continue;
      const source = d.source ? ` [${d.source}${d.code !== undefined ? ` ${d.code}` : ""}]` : "";
      lines.push(
        `${show(f.path)}:${d.range.start.line + 1}:${d.range.start.character + 1} ${d.severity}: ${d.message.replace(/\s*\n\s*/g, " ")}${source}`,
      );
    }
  }
  const names = files.map((f) => show(f.path)).join(", ");
  const caveat =
    unsettled === undefined
      ? ""
      : "busyMs" in unsettled
        ? ` (the language servers had not reported on the edit within ${unsettled.busyMs} ms: this list may be stale)`
        : "notShownMs" in unsettled
          ? ` (the editor did not hold the edited text within ${unsettled.notShownMs} ms: this list may be stale)`
          : ` (the language server for ${unsettled.languages.join(", ")} was still starting after ${unsettled.startingMs} ms: this list may be stale)`;
  if (total === 0) return `Diagnostics: none reported for ${names}${caveat}.`;
  const more = total > lines.length ? `\n... and ${total - lines.length} more` : "";
  return `Diagnostics of ${names} from the editor's language servers${caveat}:\n${lines.join("\n")}${more}`;
}

/**
 * How long an edit waits for the bridge of a running workbench that is away for a moment: as long as
 * the headless keeper gives a window that answers nothing before it replaces it, and one probe more.
 * A window starved of CPU misses probes (6 s each) and is away until it answers one; 10 s lost the
 * edit's diagnostics under load (acp-live-editor) while the workbench was still there.
 */
const RECONNECT_WAIT_MS = HEALTH.headlessGraceMs + HEALTH.probeTimeoutMs;

/** Languages with no language server in a stock workbench: their edits do not wait for diagnostics. */
const NO_SERVER = new Set(["plaintext", "markdown"]);

/**
 * The live editor of an ACP session: after an edit it shows the edited files in the workbench (the
 * person sees the change; language servers analyse open files) and returns their diagnostics once
 * they settle. Present only while the workbench's bridge is connected.
 *
 * Settling: the editor's buffer must hold the edited text first (an open editor reloads the file
 * from disk a moment after the write); then the diagnostics must stay unchanged for `quietMs` after
 * a change, or for `idleMs` when none came; all within `maxMs` of the files being shown, after
 * which the list is returned marked as possibly stale.
 */
export class LiveEditor implements EditFeedback {
  constructor(
    private readonly core: Core,
    private readonly cwd: string,
    private readonly log: Logger,
    private readonly timing: SettleTiming = DEFAULT_SETTLE,
  ) {}

  get #reconnectMs(): number {
    return this.timing.reconnectMs ?? RECONNECT_WAIT_MS;
  }

  get connected(): boolean {
    return this.core.bridge.status().connected;
  }

  /**
   * Whether an edit gets this editor's feedback: its bridge is connected, or a workbench runs whose
   * bridge is away for a moment (`afterEdit` waits for it, bounded).
   */
  get present(): boolean {
    return this.connected || this.core.bridge.workbench() !== undefined;
  }

  /**
   * Wait until the language features of each file answer (language.ready), `startMs` at most.
   * Returns the languages whose servers were still starting then.
   */
  private async ready(bridge: EditorBridge, files: Map<string, string>, signal: AbortSignal): Promise<string[]> {
    const limit = AbortSignal.any([signal, AbortSignal.timeout(this.timing.startMs)]);
    const starting = new Set<string>();
    await Promise.all(
      [...files].map(async ([path, languageId]) => {
        try {
          const r = await callEditor(bridge, "language.ready", { path }, { signal: limit });
          if (r.activated.length > 0 || r.ms > 1_000)
            this.log.debug(
              `language features of ${r.languageId} ready after ${r.ms} ms (activated: ${r.activated.join(", ") || "none"}; semantic model: ${r.semantic ? "yes" : "none"})`,
            );
        } catch (err) {
          if (signal.aborted) throw err;
          if (!limit.aborted) {
            // an editor that cannot tell (an older bridge): settle on the diagnostics alone
            this.log.debug(`language.ready for ${path}: ${(err as Error).message}`);
            return;
          }
          starting.add(languageId);
        }
      }),
    );
    return [...starting];
  }

  /**
   * A workbench runs but its bridge is away for a moment (a probe a busy window missed, the shared
   * workbench's owner re-electing its host): wait for it, bounded, rather than return no diagnostics.
   */
  async #connectedSoon(signal: AbortSignal): Promise<boolean> {
    if (this.connected) return true;
    if (!this.core.bridge.workbench()) return false;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        off();
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, this.#reconnectMs);
      const off = this.core.bridge.onChange((s) => {
        if (s.connected) done();
      });
      signal.addEventListener("abort", done, { once: true });
    });
    return this.connected;
  }

  /**
   * The edited files' diagnostics. A bridge that goes away during the wait (a call answered
   * BRIDGE_UNAVAILABLE) is waited for once more, as one that was away before it: the second wait
   * starts over, so the edit is never reported on a half-asked editor.
   */
  async afterEdit(files: EditedFile[], signal: AbortSignal): Promise<string | undefined> {
    if (files.length === 0) return undefined;
    try {
      return await this.#afterEditOnce(files, signal);
    } catch (err) {
      if (signal.aborted || !isCcbError(err, "BRIDGE_UNAVAILABLE")) throw err;
      this.log.info(`live editor: the workbench went away during an edit's diagnostics (${err.message}); asking again`);
      return this.#afterEditOnce(files, signal);
    }
  }

  async #afterEditOnce(files: EditedFile[], signal: AbortSignal): Promise<string | undefined> {
    if (!(await this.#connectedSoon(signal))) {
      // A workbench that runs but did not come back: say so, never silence (read as "no errors").
      if (signal.aborted || !this.core.bridge.workbench()) return undefined;
      return `Diagnostics: not available for this edit: the workbench runs, but no editor window answered within ${Math.round(this.#reconnectMs / 1000)} s.`;
    }
    const bridge = this.core.bridge.require();
    const t0 = performance.now();
    /** Per file: diagnostics changes since its buffer last changed; undefined until the buffer holds the edit. */
    const since = new Map<string, number>();
    const expected = new Map(files.map((f) => [f.path, f.text]));
    const stale = new Set<string>();
    /** What happened when (ms after t0), for the debug line: how near each bound an edit came. */
    const timeline: string[] = [];
    const mark = (what: string) => timeline.push(`${what} ${Math.round(performance.now() - t0)}`);
    let wake: () => void = () => undefined;
    const off = bridge.onEvent((e) => {
      if (e.type === "documentChanged" && typeof e.path === "string" && expected.has(e.path)) {
        stale.add(e.path);
        since.set(e.path, 0);
        mark("buffer changed");
        wake();
      } else if (e.type === "diagnosticsChanged" && Array.isArray(e.paths)) {
        for (const p of e.paths as unknown[])
          if (typeof p === "string" && since.has(p)) {
            since.set(p, (since.get(p) ?? 0) + 1);
            mark("diagnostics changed");
          }
        wake();
      }
    });
    const current = new Set<string>();
    const check = async (path: string) => {
      stale.delete(path);
      const doc = await callEditor(bridge, "document.read", { path }, { signal });
      if (doc && doc.text === expected.get(path)) current.add(path);
      else current.delete(path);
    };
    try {
      /** Files with a language server to wait for, and their languages. */
      const waitFor = new Map<string, string>();
      for (const f of files) {
        since.set(f.path, 0);
        const shown = await callEditor(
          bridge,
          "editor.open",
          { path: f.path, preview: true, preserveFocus: true },
          { signal },
        );
        if (!NO_SERVER.has(shown.languageId)) waitFor.set(f.path, shown.languageId);
        await check(f.path);
      }
      // The bounds count from here, once the editor has shown the files: opening a file in a busy
      // editor (the first file of a language activates its extension) is not the language servers'
      // time to report (a fresh workbench on a busy machine took 8 s to open the first TypeScript
      // file, and the edit's list came back "may be stale" before its server was asked anything).
      let deadline = performance.now() + this.timing.maxMs;
      let quietSince = performance.now();
      let currentSince: number | undefined;
      /** When the language servers of the edited files were up (undefined: not asked yet). */
      let readyAt: number | undefined;
      let unsettled: Unsettled | undefined;
      let last = JSON.stringify([...since]);
      let settled = waitFor.size === 0;
      while (!settled && !signal.aborted && performance.now() < deadline) {
        for (const path of [...stale]) await check(path);
        const now = performance.now();
        const counts = JSON.stringify([...since]);
        if (counts !== last) {
          last = counts;
          quietSince = now;
        }
        const allCurrent = [...waitFor.keys()].every((p) => current.has(p));
        if (!allCurrent) currentSince = undefined;
        else if (currentSince === undefined) {
          currentSince = now;
          mark("buffers hold the edit");
        }
        if (currentSince !== undefined && readyAt === undefined) {
          const starting = await this.ready(bridge, waitFor, signal);
          if (starting.length > 0) {
            unsettled = { startingMs: this.timing.startMs, languages: starting };
            break;
          }
          readyAt = performance.now();
          mark("servers up");
          deadline = Math.max(deadline, readyAt + this.timing.maxMs);
          continue;
        }
        if (currentSince !== undefined && readyAt !== undefined) {
          const changed = [...waitFor.keys()].some((p) => (since.get(p) ?? 0) > 0);
          const calm = now - Math.max(quietSince, currentSince, readyAt);
          if (calm >= (changed ? this.timing.quietMs : this.timing.idleMs)) {
            settled = true;
            break;
          }
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, Math.min(100, Math.max(0, deadline - performance.now())));
          function done() {
            clearTimeout(timer);
            wake = () => undefined;
            resolve();
          }
          wake = done;
        });
      }
      if (!settled && !unsettled)
        unsettled = currentSince === undefined ? { notShownMs: this.timing.maxMs } : { busyMs: this.timing.maxMs };
      const ms = Math.round(performance.now() - t0);
      this.log.debug(
        `diagnostics of ${files.length} edited file(s) ${settled ? "settled" : "not settled"} after ${ms} ms` +
          (readyAt === undefined ? "" : ` (language servers up after ${Math.round(readyAt - t0)} ms)`) +
          `; timeline (ms): ${timeline.join(", ") || "nothing"}`,
      );
      const diagnostics = await Promise.all(
        files.map(async (f) => (await callEditor(bridge, "diagnostics.get", { path: f.path }, { signal })).files),
      );
      return diagnosticsText(diagnostics.flat(), this.cwd, settled ? undefined : unsettled);
    } finally {
      off();
    }
  }
}
