import { z } from "zod";
import type { Core } from "../../core/core.ts";
import type { EditorMethod, EditorMethods } from "../../core/editor/bridge.ts";
import type { EditorInfo, Range as WireRange } from "../../editor-wire/contract.ts";
import type { ToolAnnotations, ToolContext } from "../kernel.ts";

/**
 * Shared by the editor tools: a typed call through the live bridge (BRIDGE_UNAVAILABLE with the
 * reason when there is none), and the 1-based positions tools speak (like fs_read's line numbers)
 * converted to the contract's zero-based ones.
 */
export function callBridge<M extends EditorMethod>(
  ctx: ToolContext,
  method: M,
  params: EditorMethods[M]["params"],
  options: { timeoutMs?: number } = {},
): Promise<EditorMethods[M]["result"]> {
  return ctx.core.bridge.call(method, params, { signal: ctx.signal, ...options });
}

/**
 * Before asking a language service about a file: wait (bounded) until the file's language features
 * can answer (language.ready: extensions active, the file's project loaded). A server that is still
 * starting would answer "no symbol here" or "no fixes", which reads as a fact. Best effort: an
 * editor that cannot tell is asked anyway.
 */
export async function languageReady(ctx: ToolContext, path: string, ms = 30_000): Promise<void> {
  try {
    await ctx.core.bridge.call(
      "language.ready",
      { path },
      { signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(ms)]) },
    );
  } catch (err) {
    if (ctx.signal.aborted) throw err;
  }
}

export const EDITOR_WRITE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
};

export const PositionInput = z.object({
  line: z.number().int().min(1).describe("1-based line number (as fs_read shows them)."),
  column: z.number().int().min(1).describe("1-based column (UTF-16 code units, as the editor counts)."),
});
export type PositionInput = z.infer<typeof PositionInput>;

export const RangeInput = z.object({
  start: PositionInput.describe("Start of the range (inclusive)."),
  end: PositionInput.describe("End of the range (exclusive)."),
});
export type RangeInput = z.infer<typeof RangeInput>;

export function toWirePos(p: PositionInput): { line: number; character: number } {
  return { line: p.line - 1, character: p.column - 1 };
}
export function toWireRange(r: RangeInput): WireRange {
  return { start: toWirePos(r.start), end: toWirePos(r.end) };
}
export function fromWirePos(p: { line: number; character: number }): PositionInput {
  return { line: p.line + 1, column: p.character + 1 };
}
export function fromWireRange(r: WireRange): RangeInput {
  return { start: fromWirePos(r.start), end: fromWirePos(r.end) };
}
export function rangeText(r: RangeInput): string {
  return r.start.line === r.end.line && r.start.column === r.end.column
    ? `${r.start.line}:${r.start.column}`
    : `${r.start.line}:${r.start.column}-${r.end.line}:${r.end.column}`;
}

/** The input of the tools that ask about the symbol at a position of a file. */
export const SymbolAtInput = {
  path: z.string().describe("File containing the symbol, relative to the workspace root or absolute inside it."),
  position: PositionInput.describe("A position on the symbol (1-based)."),
};

/** A location as the tools show it: the workspace-relative path and a 1-based range. */
export interface LocationView {
  path: string;
  range: RangeInput;
}

/** A location the editor reported, as the tools show it. */
export function locationView(core: Core, l: { path: string; range: WireRange }): LocationView {
  return { path: displayPath(core, l.path), range: fromWireRange(l.range) };
}

/** `path:line:column` of a location's start (1-based). */
export function locationLine(l: LocationView): string {
  return `${l.path}:${l.range.start.line}:${l.range.start.column}`;
}

/** Confine a caller's path (symlinks resolved) and give the absolute real path the editor uses. */
export async function resolveForEditor(core: Core, path: string, mustExist = true): Promise<string> {
  core.bridge.require(); // say BRIDGE_UNAVAILABLE before any path complaint
  const r = await core.workspace.resolve(path, { mustExist });
  return r.abs;
}

/** Workspace-relative display of an absolute path the editor reported (absolute when outside every root). */
export function displayPath(core: Core, abs: string): string {
  for (const root of core.workspace.roots) {
    if (abs === root) return core.workspace.roots.length === 1 ? "." : root;
    if (abs.startsWith(root.endsWith("/") ? root : `${root}/`)) {
      const rel = abs.slice(root.length + 1);
      return core.workspace.roots.length === 1 ? rel : `${root.split("/").pop()}/${rel}`;
    }
  }
  return abs;
}

/** An editor as tools show it: relative path, 1-based selections. */
export function editorView(core: Core, e: EditorInfo) {
  return {
    path: displayPath(core, e.path),
    languageId: e.languageId,
    version: e.version,
    isDirty: e.isDirty,
    lineCount: e.lineCount,
    selections: e.selections.map((s) => ({ anchor: fromWirePos(s.anchor), active: fromWirePos(s.active) })),
    visibleRanges: e.visibleRanges.map(fromWireRange),
  };
}

export function editorLine(core: Core, e: EditorInfo): string {
  const sel = e.selections[0];
  const cursor = sel ? `${sel.active.line + 1}:${sel.active.character + 1}` : "-";
  return `${displayPath(core, e.path)} (${e.languageId}, version ${e.version}${e.isDirty ? ", unsaved changes" : ""}, cursor ${cursor}, ${e.lineCount} lines)`;
}
