import { relative, sep } from "node:path";
import type { EditorBridge } from "../../core/bridge.ts";
import type { Core } from "../../core/core.ts";
import { CcbError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import { extensionMethods, type Diagnostic, type ExtensionMethod, type ParamsOf, type ResultOf } from "../../workbench/contract.ts";
import type { EditFeedback } from "./tool-runner.ts";

/**
 * How long an edit waits for the language servers: until no diagnostics of the edited files changed
 * for `quietMs` after at least one change, at most `maxMs` after the files were shown.
 */
export interface SettleTiming {
  quietMs: number;
  maxMs: number;
}

export const DEFAULT_SETTLE: SettleTiming = { quietMs: 500, maxMs: 5_000 };

/** Diagnostics listed per edit result (the rest is counted). */
const MAX_LINES = 30;
/** Severities the model is told about: hints (unused code shown faded) are left out. */
const REPORTED = new Set<Diagnostic["severity"]>(["error", "warning", "information"]);

async function call<M extends ExtensionMethod>(bridge: EditorBridge, method: M, params: ParamsOf<M>, signal: AbortSignal): Promise<ResultOf<M>> {
  const parsed = extensionMethods[method].result.safeParse(await bridge.call(method, params, { signal }));
  if (!parsed.success) throw new CcbError("BRIDGE_ERROR", `The editor answered ${method} with an unexpected shape.`);
  return parsed.data as ResultOf<M>;
}

/**
 * `path:line:col severity: message [source code]` lines (1-based positions), capped; paths relative
 * to `cwd` when inside it. `unsettledMs`: the language servers were still busy after that long.
 */
export function diagnosticsText(files: { path: string; diagnostics: Diagnostic[] }[], cwd: string, unsettledMs?: number): string {
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
      lines.push(`${show(f.path)}:${d.range.start.line + 1}:${d.range.start.character + 1} ${d.severity}: ${d.message.replace(/\s*\n\s*/g, " ")}${source}`);
    }
  }
  const names = files.map((f) => show(f.path)).join(", ");
  const caveat = unsettledMs === undefined ? "" : ` (the language servers had not reported on the edit within ${unsettledMs} ms: this list may be stale)`;
  if (total === 0) return `Diagnostics: none reported for ${names}${caveat}.`;
  const more = total > lines.length ? `\n... and ${total - lines.length} more` : "";
  return `Diagnostics of ${names} from the editor's language servers${caveat}:\n${lines.join("\n")}${more}`;
}

/**
 * The live editor of an ACP session: after an edit it shows the edited files in the workbench (the
 * person sees the change; language servers analyse open files) and returns their diagnostics once
 * they settle. Present only while the workbench's bridge is connected.
 */
export class LiveEditor implements EditFeedback {
  constructor(
    private readonly core: Core,
    private readonly cwd: string,
    private readonly log: Logger,
    private readonly timing: SettleTiming = DEFAULT_SETTLE,
  ) {}

  get connected(): boolean {
    return this.core.bridge.status().connected;
  }

  async afterEdit(paths: string[], signal: AbortSignal): Promise<string | undefined> {
    if (!this.connected) return undefined;
    const bridge = this.core.bridge.require();
    const wanted = new Set(paths);
    let changes = 0;
    let onChange: () => void = () => undefined;
    const off = bridge.onEvent((e) => {
      if (e.type !== "diagnosticsChanged" || !Array.isArray(e.paths)) return;
      if ((e.paths as unknown[]).some((p) => typeof p === "string" && wanted.has(p))) {
        changes++;
        onChange();
      }
    });
    try {
      for (const path of paths) await call(bridge, "editor.open", { path, preview: true, preserveFocus: true }, signal);
      const settled = await this.settle(() => changes, (f) => (onChange = f), signal);
      const files = await Promise.all(paths.map(async (path) => (await call(bridge, "diagnostics.get", { path }, signal)).files));
      return diagnosticsText(files.flat(), this.cwd, settled ? undefined : this.timing.maxMs);
    } finally {
      off();
    }
  }

  /** True when a change came and then `quietMs` passed without one; false when `maxMs` ran out first. */
  private settle(count: () => number, listen: (f: () => void) => void, signal: AbortSignal): Promise<boolean> {
    const { quietMs, maxMs } = this.timing;
    return new Promise<boolean>((resolve) => {
      let quiet: NodeJS.Timeout | undefined;
      const done = (settled: boolean) => {
        clearTimeout(cap);
        if (quiet) clearTimeout(quiet);
        signal.removeEventListener("abort", onAbort);
        listen(() => undefined);
        resolve(settled);
      };
      const onAbort = () => done(false);
      const cap = setTimeout(() => {
        this.log.debug(`diagnostics did not settle within ${maxMs} ms`);
        done(false);
      }, maxMs);
      const arm = () => {
        if (quiet) clearTimeout(quiet);
        quiet = setTimeout(() => done(true), quietMs);
      };
      listen(arm);
      if (count() > 0) arm();
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}
