import { basename } from "node:path";
import type { DiagnosticSeverity, EditorSelection, EditorTab, FileDiagnostics } from "./editor.ts";

/**
 * Pure mappings from editor state to the payloads the Claude Code CLI parses. No I/O here.
 */

export interface TextContent {
  type: "text";
  text: string;
}

export interface ImageContent {
  type: "image";
  data: string;
  mimeType: string;
}

export interface IdeToolResult {
  [key: string]: unknown;
  content: (TextContent | ImageContent)[];
  isError?: boolean;
}

export function text(...items: string[]): IdeToolResult {
  return { content: items.map((t) => ({ type: "text" as const, text: t })) };
}

export function json(value: unknown): IdeToolResult {
  return text(JSON.stringify(value));
}

export function errorResult(message: string): IdeToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

/** `file://` + the raw absolute path, not percent-encoded (what the CLI expects). */
export function fileUri(path: string): string {
  return `file://${path}`;
}

/**
 * Paths a `file://` URI may mean: the CLI sends raw, unencoded paths (which may contain a literal
 * `%`), other clients percent-encode. First the raw form, then the decoded one when it differs.
 * Plain paths pass through.
 */
export function pathsFromUri(uri: string): string[] {
  if (!uri.startsWith("file://")) return [uri];
  let rest = uri.slice("file://".length);
  if (rest.startsWith("localhost/")) rest = rest.slice("localhost".length);
  const out = [rest];
  if (/%[0-9A-Fa-f]{2}/.test(rest)) {
    try {
      const decoded = decodeURIComponent(rest);
      if (decoded !== rest) out.push(decoded);
    } catch {
      // not valid percent-encoding: raw only
    }
  }
  return out;
}

/** VS Code severities (names or enum numbers 0-3) to the CLI's names. */
export function severityName(value: string | number): DiagnosticSeverity {
  switch (value) {
    case 0:
    case "Error":
    case "error":
      return "Error";
    case 1:
    case "Warning":
    case "warning":
      return "Warning";
    case 2:
    case "Info":
    case "Information":
    case "info":
    case "information":
      return "Info";
    case 3:
    case "Hint":
    case "hint":
      return "Hint";
    default:
      return "Info";
  }
}

export function diagnosticsPayload(files: readonly FileDiagnostics[]): unknown[] {
  return files.map((f) => ({
    uri: fileUri(f.path),
    diagnostics: f.diagnostics.map((d) => ({
      message: d.message,
      severity: severityName(d.severity),
      range: { start: { ...d.range.start }, end: { ...d.range.end } },
      ...(d.source !== undefined ? { source: d.source } : {}),
      ...(d.code !== undefined ? { code: d.code } : {}),
    })),
  }));
}

export function isEmptyRange(s: EditorSelection): boolean {
  return s.range.start.line === s.range.end.line && s.range.start.character === s.range.end.character;
}

/** `selection_changed` params. */
export function selectionChangedParams(s: EditorSelection): Record<string, unknown> {
  return {
    text: s.text,
    filePath: s.filePath,
    fileUrl: fileUri(s.filePath),
    selection: { start: { ...s.range.start }, end: { ...s.range.end }, isEmpty: isEmptyRange(s) },
  };
}

/** A key that changes when anything the client would see changes (for de-duplication). */
export function selectionKey(s: EditorSelection | null): string {
  if (!s) return "";
  const r = s.range;
  return `${s.filePath}\u0000${r.start.line}:${r.start.character}-${r.end.line}:${r.end.character}\u0000${s.text}`;
}

/** getCurrentSelection / getLatestSelection body. */
export function selectionResult(s: EditorSelection | null, missing: string): Record<string, unknown> {
  if (!s) return { success: false, message: missing };
  return {
    success: true,
    text: s.text,
    filePath: s.filePath,
    fileUrl: fileUri(s.filePath),
    selection: { start: { ...s.range.start }, end: { ...s.range.end }, isEmpty: isEmptyRange(s) },
  };
}

export function openEditorsPayload(tabs: readonly EditorTab[]): { tabs: unknown[] } {
  return {
    tabs: tabs.map((t) => ({
      uri: t.path !== undefined ? fileUri(t.path) : (t.uri ?? `untitled:${t.label}`),
      isActive: t.isActive,
      label: t.label,
      languageId: t.languageId ?? "plaintext",
      isDirty: t.isDirty,
      ...(t.path !== undefined ? { fileName: t.path } : {}),
      ...(t.isPinned !== undefined ? { isPinned: t.isPinned } : {}),
      ...(t.isPreview !== undefined ? { isPreview: t.isPreview } : {}),
      ...(t.groupIndex !== undefined ? { groupIndex: t.groupIndex, viewColumn: t.groupIndex + 1 } : {}),
      ...(t.isGroupActive !== undefined ? { isGroupActive: t.isGroupActive } : {}),
    })),
  };
}

export function workspaceFoldersPayload(roots: readonly string[]): Record<string, unknown> {
  return {
    success: true,
    folders: roots.map((p, index) => ({ name: basename(p) || p, uri: fileUri(p), path: p, index })),
    rootPath: roots[0] ?? null,
    workspaceFile: null,
  };
}

/** Offsets of the start of each line (after \n). */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

function positionAt(starts: number[], offset: number): { line: number; character: number } {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo, character: offset - (starts[lo] as number) };
}

function offsetAt(starts: number[], text: string, p: { line: number; character: number }): number {
  const start = starts[Math.min(p.line, starts.length - 1)] as number;
  return Math.min(start + p.character, text.length);
}

/** The text a range covers. */
export function textInRange(
  text: string,
  range: { start: { line: number; character: number }; end: { line: number; character: number } },
): string {
  const starts = lineStarts(text);
  return text.slice(offsetAt(starts, text, range.start), offsetAt(starts, text, range.end));
}

/**
 * openFile's selection: from the first occurrence of `startText` to the end of the first
 * occurrence of `endText` after it (or of startText alone); `selectToEndOfLine` extends the end
 * to its line's end. Undefined when startText is absent or not found.
 */
export function findTextRange(
  text: string,
  startText: string | undefined,
  endText: string | undefined,
  selectToEndOfLine: boolean,
): { start: { line: number; character: number }; end: { line: number; character: number } } | undefined {
  if (!startText) return undefined;
  const s = text.indexOf(startText);
  if (s === -1) return undefined;
  let e = s + startText.length;
  if (endText) {
    const found = text.indexOf(endText, s + startText.length);
    if (found !== -1) e = found + endText.length;
  }
  if (selectToEndOfLine) {
    const nl = text.indexOf("\n", e);
    e = nl === -1 ? text.length : nl;
  }
  const starts = lineStarts(text);
  return { start: positionAt(starts, s), end: positionAt(starts, e) };
}
