/**
 * The live editor as the Claude Code IDE tools need it. The production implementation
 * (bridge-editor.ts) calls the workbench bridge; unit tests of the protocol layer inject a double.
 * Every operation that needs a live editor throws BRIDGE_UNAVAILABLE (with the reason) when there
 * is none: never a fake success. Positions and ranges are the bridge contract's (zero-based).
 */
import type { Range } from "../../editor-wire/contract.ts";

export interface EditorSelection {
  /** Absolute path of the document (or the untitled name). */
  filePath: string;
  text: string;
  range: Range;
}

export type DiagnosticSeverity = "Error" | "Warning" | "Info" | "Hint";

export interface EditorDiagnostic {
  message: string;
  severity: DiagnosticSeverity;
  range: Range;
  source?: string | undefined;
  code?: string | number | undefined;
}

export interface FileDiagnostics {
  /** Absolute path. */
  path: string;
  diagnostics: EditorDiagnostic[];
}

export interface EditorTab {
  /** Absolute path, or undefined for tabs that are not files (diffs, untitled, settings). */
  path?: string | undefined;
  /** A URI for non-file tabs (e.g. untitled:Untitled-1). */
  uri?: string | undefined;
  label: string;
  languageId?: string | undefined;
  isActive: boolean;
  isDirty: boolean;
  isPinned?: boolean | undefined;
  isPreview?: boolean | undefined;
  groupIndex?: number | undefined;
  isGroupActive?: boolean | undefined;
}

export interface OpenFileRequest {
  /** Absolute path inside the workspace. */
  path: string;
  preview: boolean;
  startText?: string | undefined;
  endText?: string | undefined;
  selectToEndOfLine: boolean;
  makeFrontmost: boolean;
}

export interface OpenFileResult {
  languageId: string;
  lineCount: number;
}

export interface DiffRequest {
  /** ccb's id for this diff (unique per server). */
  diffId: string;
  /** Absolute path of the file the proposal is for (may not exist yet). */
  path: string;
  newContents: string;
  tabName: string;
}

/** How the person ended a diff in the editor. `accepted.contents` includes their own edits. */
export type DiffOutcome = { kind: "accepted"; contents: string } | { kind: "rejected" };

export interface DocumentState {
  /** False when the document is not open in the editor. */
  open: boolean;
  isDirty: boolean;
  isUntitled: boolean;
}

export type ExecuteOutput = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string };

/** Events the editor pushes. */
export type EditorEvent =
  | { type: "selection"; selection: EditorSelection | null }
  | { type: "atMention"; filePath: string; lineStart: number; lineEnd: number };

export interface IdeEditor {
  /** Whether a live editor is attached right now, and why not. */
  status(): { connected: boolean; reason: string };
  openFile(req: OpenFileRequest, signal: AbortSignal): Promise<OpenFileResult>;
  /**
   * Show a diff and wait until the person accepts or rejects it. Aborting the signal closes the
   * diff in the editor (superseded, closed by the client, client gone). The editor never writes
   * the file.
   */
  showDiff(req: DiffRequest, signal: AbortSignal): Promise<DiffOutcome>;
  /** Close a diff ccb opened (pending or already answered); no error when it is gone. */
  closeDiff(diffId: string, signal: AbortSignal): Promise<void>;
  currentSelection(signal: AbortSignal): Promise<EditorSelection | null>;
  openEditors(signal: AbortSignal): Promise<EditorTab[]>;
  /** Diagnostics of one file (absolute path) or of every file with diagnostics. */
  diagnostics(path: string | undefined, signal: AbortSignal): Promise<FileDiagnostics[]>;
  documentState(path: string, signal: AbortSignal): Promise<DocumentState>;
  /** Save an open document; `saved` false when it is not open. */
  saveDocument(path: string, signal: AbortSignal): Promise<{ open: boolean; saved: boolean }>;
  /** Run code in the active notebook's kernel after the person confirms in the editor. */
  executeCode(code: string, signal: AbortSignal): Promise<ExecuteOutput[]>;
  onEvent(listener: (event: EditorEvent) => void): () => void;
}
