import * as vscode from "vscode";
import type {
  Diagnostic,
  EditorInfo,
  Location,
  Position,
  Range,
  Severity,
  SymbolNodeT,
} from "../../src/editor-wire/contract.ts";

/** Conversions between VS Code objects and the contract's plain JSON (zero-based, absolute paths). */

export class BridgeError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

export const pos = (p: vscode.Position): Position => ({ line: p.line, character: p.character });
export const range = (r: vscode.Range): Range => ({ start: pos(r.start), end: pos(r.end) });
export const toPos = (p: Position): vscode.Position => new vscode.Position(p.line, p.character);
export const toRange = (r: Range): vscode.Range => new vscode.Range(toPos(r.start), toPos(r.end));

export function uriPath(uri: vscode.Uri): string {
  return uri.scheme === "file" ? uri.fsPath : uri.toString();
}

export function location(l: vscode.Location | vscode.LocationLink): Location {
  if ("targetUri" in l) return { path: uriPath(l.targetUri), range: range(l.targetSelectionRange ?? l.targetRange) };
  return { path: uriPath(l.uri), range: range(l.range) };
}

const SEVERITY: Record<number, Severity> = {
  [vscode.DiagnosticSeverity.Error]: "error",
  [vscode.DiagnosticSeverity.Warning]: "warning",
  [vscode.DiagnosticSeverity.Information]: "information",
  [vscode.DiagnosticSeverity.Hint]: "hint",
};

export function diagnostic(d: vscode.Diagnostic): Diagnostic {
  const code = typeof d.code === "object" && d.code !== null ? d.code.value : d.code;
  return {
    range: range(d.range),
    severity: SEVERITY[d.severity] ?? "error",
    message: d.message,
    ...(d.source ? { source: d.source } : {}),
    ...(code !== undefined ? { code } : {}),
  };
}

export function editorInfo(e: vscode.TextEditor): EditorInfo {
  const d = e.document;
  return {
    path: uriPath(d.uri),
    uri: d.uri.toString(),
    languageId: d.languageId,
    version: d.version,
    isDirty: d.isDirty,
    isUntitled: d.isUntitled,
    lineCount: d.lineCount,
    selections: e.selections.map((s) => ({ anchor: pos(s.anchor), active: pos(s.active) })),
    visibleRanges: e.visibleRanges.map(range),
    ...(e.viewColumn !== undefined ? { viewColumn: e.viewColumn } : {}),
  };
}

export function symbolKind(k: vscode.SymbolKind): string {
  return vscode.SymbolKind[k] ?? String(k);
}

export function documentSymbols(
  list: readonly (vscode.DocumentSymbol | vscode.SymbolInformation)[] | undefined,
): SymbolNodeT[] {
  return (list ?? []).map((s) =>
    "children" in s
      ? {
          name: s.name,
          kind: symbolKind(s.kind),
          ...(s.detail ? { detail: s.detail } : {}),
          range: range(s.range),
          selectionRange: range(s.selectionRange),
          children: documentSymbols(s.children),
        }
      : {
          name: s.name,
          kind: symbolKind(s.kind),
          range: range(s.location.range),
          selectionRange: range(s.location.range),
          children: [],
        },
  );
}

export function hoverText(c: vscode.MarkdownString | vscode.MarkedString): string {
  if (typeof c === "string") return c;
  if ("language" in c) return `\`\`\`${c.language}\n${c.value}\n\`\`\``;
  return c.value;
}

/** Tagged JSON -> VS Code argument objects ({"$type":"uri"|"position"|"range"|"location"}). */
export function fromTagged(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(fromTagged);
  if (value === null || typeof value !== "object") return value;
  const o = value as Record<string, unknown>;
  switch (o.$type) {
    case "uri":
      if (typeof o.path === "string") return vscode.Uri.file(o.path);
      if (typeof o.uri === "string") return vscode.Uri.parse(o.uri, true);
      throw new BridgeError("INVALID_ARGUMENT", 'A {"$type":"uri"} needs "path" or "uri".');
    case "position":
      return new vscode.Position(Number(o.line), Number(o.character));
    case "range":
      return toRange(o as unknown as Range);
    case "location":
      return new vscode.Location(vscode.Uri.file(String(o.path)), toRange(o.range as Range));
    default: {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(o)) out[k] = fromTagged(v);
      return out;
    }
  }
}

/** VS Code results -> tagged JSON (cycles and functions dropped, depth bounded). */
export function toTagged(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (depth > 20) return null;
  if (value === undefined || typeof value === "function" || typeof value === "symbol") return null;
  if (typeof value === "bigint") return value.toString();
  if (value === null || typeof value !== "object") return value;
  if (value instanceof vscode.Uri)
    return value.scheme === "file" ? { $type: "uri", path: value.fsPath } : { $type: "uri", uri: value.toString() };
  if (value instanceof vscode.Range) return { $type: "range", ...range(value) };
  if (value instanceof vscode.Position) return { $type: "position", ...pos(value) };
  if (value instanceof vscode.Location) return { $type: "location", ...location(value) };
  if (value instanceof vscode.MarkdownString) return value.value;
  if (value instanceof vscode.TextEdit)
    return { range: { $type: "range", ...range(value.range) }, newText: value.newText };
  if (value instanceof vscode.WorkspaceEdit)
    return {
      $type: "workspaceEdit",
      files: value.entries().map(([uri, edits]) => ({
        ...(uri.scheme === "file" ? { path: uri.fsPath } : { uri: uri.toString() }),
        edits: edits.map((e) => ({ range: range(e.range), newText: e.newText })),
      })),
    };
  if (seen.has(value)) return null;
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => toTagged(v, depth + 1, seen));
  if (value instanceof Map)
    return Object.fromEntries([...value].map(([k, v]) => [String(k), toTagged(v, depth + 1, seen)]));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === "function") continue;
    out[k] = toTagged(v, depth + 1, seen);
  }
  return out;
}
