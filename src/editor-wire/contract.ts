/**
 * The bridge contract: the ONE module of message schemas shared by ccb's bridge server
 * (src/workbench/bridge-server.ts) and the VS Code bridge extension (extension/), bundled
 * into both. Every frame is validated with these schemas on both sides.
 *
 * Conventions: paths are absolute file-system paths (the server resolves and confines them before
 * sending; the extension reports the real paths of its documents); lines and characters are
 * zero-based, as in VS Code and LSP.
 *
 * Wire: JSON text frames over the `/bridge` WebSocket.
 *   ext -> ccb  hello (first frame, within HELLO_TIMEOUT_MS) -> ccb answers welcome or closes 4401
 *   either way  request {id, method, params} / response {id, result | error} / event {event}
 *   ext -> ccb  focus {focused} (window focus; the last focused host serves), ping -> pong
 *   ccb -> ext  role {role: active|standby}
 * Close codes: 4400 bad frame, 4401 bad token, 4408 silence or hello timeout, 4409 replaced.
 */
import { z } from "zod";
import { checkpointMethods } from "./contract-checkpoints.ts";
import { debugMethods } from "./contract-debug.ts";
import { Diagnostic, Location, Position, Range, Selection } from "./contract-shapes.ts";
import { taskMethods } from "./contract-tasks.ts";

export * from "./contract-checkpoints.ts";
export * from "./contract-debug.ts";
export * from "./contract-shapes.ts";
export * from "./contract-tasks.ts";

export const BRIDGE_PROTOCOL_VERSION = 1;
export const HELLO_TIMEOUT_MS = 5_000;
/** The extension pings every PING_INTERVAL_MS; the server closes a connection silent for SILENCE_TIMEOUT_MS. */
export const PING_INTERVAL_MS = 5_000;
export const SILENCE_TIMEOUT_MS = 20_000;
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;

export const CLOSE_BAD_FRAME = 4400;
export const CLOSE_BAD_TOKEN = 4401;
export const CLOSE_TIMEOUT = 4408;
export const CLOSE_SHUTDOWN = 4000;

// ---------------------------------------------------------------- shared value shapes

/**
 * A command argument or result as tagged JSON, so commands that need VS Code types (all provider
 * commands) can be called: {"$type":"uri","path":"/abs"} (or "uri" for other schemes) |
 * {"$type":"position",...} | {"$type":"range",...} | {"$type":"location",...}; anything else is
 * plain JSON. The extension converts the tags (extension/src/convert.ts).
 */
export const JsonValue: z.ZodType<unknown> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(JsonValue), z.record(z.string(), JsonValue)]),
);

export const EditorInfo = z.object({
  path: z.string(),
  uri: z.string(),
  languageId: z.string(),
  version: z.number().int(),
  isDirty: z.boolean(),
  isUntitled: z.boolean(),
  lineCount: z.number().int(),
  selections: z.array(Selection),
  visibleRanges: z.array(Range),
  viewColumn: z.number().int().optional(),
});
export type EditorInfo = z.infer<typeof EditorInfo>;

export const DocumentOverlay = z.object({
  path: z.string(),
  version: z.number().int(),
  isDirty: z.boolean(),
  languageId: z.string(),
  text: z.string(),
});
export type DocumentOverlay = z.infer<typeof DocumentOverlay>;

export const FileDiagnostics = z.object({ path: z.string(), diagnostics: z.array(Diagnostic) });
export type FileDiagnostics = z.infer<typeof FileDiagnostics>;

export const ExtensionInfo = z.object({
  id: z.string(),
  version: z.string(),
  displayName: z.string().optional(),
  isActive: z.boolean(),
  builtin: z.boolean(),
  path: z.string(),
});
export type ExtensionInfo = z.infer<typeof ExtensionInfo>;

export const SymbolNode: z.ZodType<SymbolNodeT> = z.lazy(() =>
  z.object({
    name: z.string(),
    kind: z.string(),
    detail: z.string().optional(),
    range: Range,
    selectionRange: Range,
    children: z.array(SymbolNode),
  }),
);
export interface SymbolNodeT {
  name: string;
  kind: string;
  detail?: string | undefined;
  range: Range;
  selectionRange: Range;
  children: SymbolNodeT[];
}

export const WorkspaceSymbol = z.object({
  name: z.string(),
  kind: z.string(),
  containerName: z.string().optional(),
  location: Location,
});

export const TabInfo = z.object({
  path: z.string().optional(),
  uri: z.string().optional(),
  label: z.string(),
  isActive: z.boolean(),
  isDirty: z.boolean(),
  isPinned: z.boolean(),
  isPreview: z.boolean(),
  groupIndex: z.number().int(),
  viewColumn: z.number().int(),
  isGroupActive: z.boolean(),
  languageId: z.string().optional(),
});

// ---------------------------------------------------------------- refactor and deeper navigation

/** A text replacement in one file (zero-based range of the text before any edit). */
export const TextEdit = z.object({ range: Range, newText: z.string() });
export type TextEdit = z.infer<typeof TextEdit>;

/** One file of an edit the editor computed: its text now and after the edit, and a hash of the text now. */
export const PlannedFile = z.object({
  path: z.string(),
  /** sha256 (hex) of the text the edit was computed on (the unsaved buffer when the file is dirty). */
  hash: z.string(),
  isDirty: z.boolean(),
  edits: z.array(TextEdit),
  before: z.string(),
  after: z.string(),
});
export type PlannedFile = z.infer<typeof PlannedFile>;

/** A file an applied edit changed. */
export const ChangedFile = z.object({
  path: z.string(),
  before: z.string(),
  after: z.string(),
  /** It had unsaved changes before: the edit stays in its buffer, unsaved (they are the person's). */
  wasDirty: z.boolean(),
  saved: z.boolean(),
});
export type ChangedFile = z.infer<typeof ChangedFile>;

export const CodeActionInfo = z.object({
  id: z.string(),
  title: z.string(),
  kind: z.string().optional(),
  isPreferred: z.boolean().optional(),
  disabled: z.string().optional(),
  diagnostics: z.array(z.string()),
  hasEdit: z.boolean(),
  command: z.string().optional(),
});
export type CodeActionInfo = z.infer<typeof CodeActionInfo>;

export interface HierarchyNodeT {
  name: string;
  kind: string;
  detail?: string | undefined;
  path: string;
  range: Range;
  selectionRange: Range;
  /** Call hierarchy: where the calls are (in the caller for incoming, in this item for outgoing). */
  fromRanges?: Range[] | undefined;
  children: HierarchyNodeT[];
}
export const HierarchyNode: z.ZodType<HierarchyNodeT> = z.lazy(() =>
  z.object({
    name: z.string(),
    kind: z.string(),
    detail: z.string().optional(),
    path: z.string(),
    range: Range,
    selectionRange: Range,
    fromRanges: z.array(Range).optional(),
    children: z.array(HierarchyNode),
  }),
);

const AtParams = z.object({ path: z.string(), position: Position });

/** The refactor and navigation methods (a block of their own; spread into extensionMethods). */
const powerMethods = {
  /** The rename provider's edit, not applied. */
  "refactor.rename": {
    params: AtParams.extend({ newName: z.string().min(1) }),
    result: z.object({ files: z.array(PlannedFile) }),
    timeoutMs: 60_000,
  },
  /**
   * Apply text edits to several files at once: all or none. Refused (VERSION_CONFLICT) when a
   * file's text no longer has the given hash, and before any change when a file cannot be written.
   * Files that had no unsaved changes are saved when `save`; a dirty buffer keeps the edit unsaved.
   */
  "edits.apply": {
    params: z.object({
      files: z.array(z.object({ path: z.string(), hash: z.string().optional(), edits: z.array(TextEdit) })).min(1),
      save: z.boolean(),
    }),
    result: z.object({ files: z.array(ChangedFile) }),
    timeoutMs: 60_000,
  },
  /**
   * The edits that moving a file or folder `from` → `to` needs (imports of every importer, the moved
   * files' own relative imports), from the editor's TypeScript server; nothing moved. `languageService`:
   * false when no TypeScript server answered (the move would update no import).
   */
  "refactor.move": {
    params: z.object({ from: z.string(), to: z.string() }),
    result: z.object({ files: z.array(PlannedFile), languageService: z.boolean() }),
    timeoutMs: 60_000,
  },
  /**
   * Move a file or folder through the editor with the planned edits (paths before the move), all or
   * none: every file unchanged since its hash and writable, `to` absent, before anything changes;
   * the edits land, then the move; on a failure everything is put back. Paths after: the result's.
   */
  "files.move": {
    params: z.object({
      from: z.string(),
      to: z.string(),
      files: z.array(z.object({ path: z.string(), hash: z.string(), edits: z.array(TextEdit) })),
      save: z.boolean(),
    }),
    result: z.object({ files: z.array(ChangedFile) }),
    timeoutMs: 120_000,
  },
  /** Code actions for a range (the whole file when absent), optionally of a kind (prefix, e.g. "quickfix", "source.organizeImports"). */
  "codeActions.list": {
    params: z.object({ path: z.string(), range: Range.optional(), kind: z.string().optional() }),
    result: z.object({ actions: z.array(CodeActionInfo) }),
    timeoutMs: 60_000,
  },
  /** Apply a listed code action: its edit, then its command. Refused when the file changed since the list. */
  "codeActions.apply": {
    params: z.object({ id: z.string(), save: z.boolean() }),
    result: z.object({ title: z.string(), files: z.array(ChangedFile), command: z.string().optional() }),
    timeoutMs: 60_000,
  },
  /** Format a document or a range with the workspace's formatter and its settings for the file. */
  "format.apply": {
    params: z.object({ path: z.string(), range: Range.optional(), save: z.boolean() }),
    result: z.object({
      files: z.array(ChangedFile),
      options: z.object({ tabSize: z.number(), insertSpaces: z.boolean() }),
    }),
    timeoutMs: 60_000,
  },
  "language.implementations": {
    params: AtParams,
    result: z.object({ locations: z.array(Location) }),
    timeoutMs: 60_000,
  },
  "language.typeDefinition": {
    params: AtParams,
    result: z.object({ locations: z.array(Location) }),
    timeoutMs: 60_000,
  },
  "language.signatureHelp": {
    params: AtParams,
    result: z.object({
      signatures: z.array(
        z.object({ label: z.string(), documentation: z.string().optional(), parameters: z.array(z.string()) }),
      ),
      activeSignature: z.number().int(),
      activeParameter: z.number().int(),
    }),
    timeoutMs: 60_000,
  },
  /** Call hierarchy from the symbol at a position, `depth` levels of callers (incoming) or callees (outgoing). */
  "language.callHierarchy": {
    params: AtParams.extend({
      direction: z.enum(["incoming", "outgoing"]),
      depth: z.number().int().min(1).max(5),
      maxNodes: z.number().int().min(1).max(2000),
    }),
    result: z.object({ roots: z.array(HierarchyNode), truncated: z.boolean() }),
    timeoutMs: 120_000,
  },
  "language.typeHierarchy": {
    params: AtParams.extend({
      direction: z.enum(["supertypes", "subtypes"]),
      depth: z.number().int().min(1).max(5),
      maxNodes: z.number().int().min(1).max(2000),
    }),
    result: z.object({ roots: z.array(HierarchyNode), truncated: z.boolean() }),
    timeoutMs: 120_000,
  },
} as const;

// ---------------------------------------------------------------- methods ccb calls on the extension

const Empty = z.object({});
const PathParams = z.object({ path: z.string() });

/** Methods served by the extension. Each: params schema, result schema, default timeout (ms; 0 = none, only the caller's signal). */
export const extensionMethods = {
  ...powerMethods,
  "editor.open": {
    params: z.object({
      path: z.string(),
      selection: Range.optional(),
      preview: z.boolean().optional(),
      preserveFocus: z.boolean().optional(),
    }),
    result: EditorInfo,
    timeoutMs: 30_000,
  },
  "editor.state": {
    params: z.object({ path: z.string().optional(), includeText: z.boolean().optional() }),
    result: z.object({
      active: EditorInfo.nullable(),
      visible: z.array(EditorInfo),
      /** Unsaved buffers (all dirty documents, or the one asked for): what the person is typing. */
      overlays: z.array(DocumentOverlay),
      workspaceFolders: z.array(z.string()),
      focused: z.boolean(),
    }),
    timeoutMs: 15_000,
  },
  "editor.setSelection": {
    params: z.object({ path: z.string(), selections: z.array(Selection).min(1), reveal: z.boolean().optional() }),
    result: EditorInfo,
    timeoutMs: 15_000,
  },
  "editor.applyEdits": {
    params: z.object({
      path: z.string(),
      edits: z.array(z.object({ range: Range, newText: z.string() })),
      expectedVersion: z.number().int().optional(),
      save: z.boolean().optional(),
    }),
    result: z.object({
      applied: z.boolean(),
      version: z.number().int(),
      isDirty: z.boolean(),
      saved: z.boolean(),
      /** The document's `files.autoSave` (the web workbench's default is afterDelay) and `files.autoSaveDelay` (ms). */
      autoSave: z.object({ mode: z.string(), delayMs: z.number() }).optional(),
    }),
    timeoutMs: 30_000,
  },
  "editor.openEditors": { params: Empty, result: z.object({ tabs: z.array(TabInfo) }), timeoutMs: 15_000 },
  "document.read": { params: PathParams, result: DocumentOverlay.nullable(), timeoutMs: 15_000 },
  "document.isDirty": {
    params: PathParams,
    result: z.object({ isOpen: z.boolean(), isDirty: z.boolean() }),
    timeoutMs: 15_000,
  },
  "document.save": {
    params: PathParams,
    result: z.object({ saved: z.boolean(), isOpen: z.boolean() }),
    timeoutMs: 30_000,
  },
  "diagnostics.get": {
    params: z.object({ path: z.string().optional() }),
    result: z.object({ files: z.array(FileDiagnostics) }),
    timeoutMs: 15_000,
  },
  /**
   * What this window holds that would be lost if it closed (ccb's headless client is closed while
   * idle only when every window answers all zero): running tasks, debug sessions, open reviews,
   * unsaved documents and terminals that are not ccb's (those are core PTYs and survive).
   */
  "workbench.activity": {
    params: Empty,
    result: z.object({
      tasks: z.number().int(),
      debugSessions: z.number().int(),
      reviews: z.number().int(),
      dirty: z.number().int(),
      terminals: z.number().int(),
      /** Those terminals' names and process ids (for the log). */
      terminalNames: z.array(z.string()).optional(),
    }),
    timeoutMs: 5_000,
  },
  "commands.list": {
    params: z.object({ filter: z.string().optional(), includeInternal: z.boolean().optional() }),
    result: z.object({ commands: z.array(z.string()) }),
    timeoutMs: 15_000,
  },
  "commands.execute": {
    params: z.object({
      command: z.string(),
      args: z.array(JsonValue),
      /** Give up after this long (the command may be waiting for input): the picker is closed, COMMAND_TIMEOUT. */
      waitMs: z.number().int().positive().optional(),
    }),
    result: z.object({ result: JsonValue }),
    timeoutMs: 120_000,
  },
  "extensions.list": {
    params: z.object({ includeBuiltin: z.boolean().optional() }),
    result: z.object({ extensions: z.array(ExtensionInfo) }),
    timeoutMs: 15_000,
  },
  "extensions.install": {
    params: z.object({ id: z.string().optional(), vsixPath: z.string().optional() }),
    result: z.object({ id: z.string().optional(), installed: z.boolean() }),
    timeoutMs: 300_000,
  },
  "extensions.uninstall": {
    params: z.object({ id: z.string() }),
    result: z.object({ uninstalled: z.boolean() }),
    timeoutMs: 120_000,
  },
  /**
   * Wait until the language features of a file's language can answer: the extensions that activate
   * for the language are active, and the file's semantic model (its semantic tokens) has been
   * computed, which makes a language server that is starting load the file's project first.
   * `semantic`: a provider answered (false: none for this language, or it declined the file).
   */
  "language.ready": {
    params: PathParams,
    result: z.object({
      languageId: z.string(),
      activated: z.array(z.string()),
      semantic: z.boolean(),
      ms: z.number(),
    }),
    timeoutMs: 120_000,
  },
  "language.documentSymbols": {
    params: PathParams,
    result: z.object({ symbols: z.array(SymbolNode) }),
    timeoutMs: 60_000,
  },
  "language.workspaceSymbols": {
    params: z.object({ query: z.string() }),
    result: z.object({ symbols: z.array(WorkspaceSymbol) }),
    timeoutMs: 60_000,
  },
  "language.definition": {
    params: z.object({ path: z.string(), position: Position }),
    result: z.object({ locations: z.array(Location) }),
    timeoutMs: 60_000,
  },
  "language.references": {
    params: z.object({ path: z.string(), position: Position, includeDeclaration: z.boolean().optional() }),
    result: z.object({ locations: z.array(Location) }),
    timeoutMs: 60_000,
  },
  "language.hover": {
    params: z.object({ path: z.string(), position: Position }),
    result: z.object({ contents: z.array(z.string()), range: Range.optional() }),
    timeoutMs: 60_000,
  },
  /** Open a diff the person accepts or rejects. Resolves only when they act (or on diff.close / closeAll). The extension never writes the file. */
  "diff.open": {
    params: z.object({
      id: z.string().min(1),
      path: z.string(),
      originalText: z.string().optional(),
      proposedText: z.string(),
      title: z.string(),
    }),
    result: z.object({
      outcome: z.enum(["accepted", "rejected", "closed"]),
      /** The final text when accepted, including the person's own edits in the diff. */
      finalText: z.string().optional(),
    }),
    timeoutMs: 0,
  },
  "diff.close": { params: z.object({ id: z.string() }), result: z.object({ closed: z.boolean() }), timeoutMs: 15_000 },
  "diff.closeAll": {
    params: z.object({ ids: z.array(z.string()) }),
    result: z.object({ closed: z.number().int() }),
    timeoutMs: 15_000,
  },
  /** Run code in the active notebook's kernel after the person confirms. */
  "notebook.executeCode": {
    params: z.object({ code: z.string() }),
    result: z.object({
      status: z.enum(["executed", "declined", "no-notebook"]),
      outputs: z.array(z.object({ mime: z.string(), text: z.string() })),
    }),
    timeoutMs: 0,
  },
  /** Mirror a core terminal into the workbench's terminal panel. */
  "terminal.attach": {
    params: z.object({ id: z.string(), title: z.string(), backlog: z.string(), focus: z.boolean().optional() }),
    result: z.object({ attached: z.boolean() }),
    timeoutMs: 15_000,
  },
  "terminal.list": {
    params: Empty,
    result: z.object({ terminals: z.array(z.object({ name: z.string(), coreId: z.string().optional() })) }),
    timeoutMs: 15_000,
  },
  /** Debugging through the workbench's debugger: editor/contract-debug.ts. */
  ...debugMethods,
  /** Tasks (tasks.json, detected ones) run in the workbench: editor/contract-tasks.ts. */
  ...taskMethods,
} as const;

// ---------------------------------------------------------------- methods the extension calls on ccb

export const serverMethods = {
  /** A terminal opened in the workbench ("ccb" profile): ccb creates a core PTY for it (origin "workbench"). */
  "terminal.create": {
    params: z.object({
      cols: z.number().int().positive(),
      rows: z.number().int().positive(),
      title: z.string().optional(),
      cwd: z.string().optional(),
    }),
    result: z.object({ id: z.string(), title: z.string() }),
    timeoutMs: 15_000,
  },
  "terminal.input": { params: z.object({ id: z.string(), data: z.string() }), result: z.object({}), timeoutMs: 15_000 },
  "terminal.resize": {
    params: z.object({ id: z.string(), cols: z.number().int().positive(), rows: z.number().int().positive() }),
    result: z.object({}),
    timeoutMs: 15_000,
  },
  "terminal.close": { params: z.object({ id: z.string() }), result: z.object({}), timeoutMs: 15_000 },
  /** Is this path inside the workspace (real path after symlinks)? The extension asks before writing on its own. */
  "workspace.resolve": {
    params: z.object({ path: z.string() }),
    result: z.object({ path: z.string() }),
    timeoutMs: 15_000,
  },
  /** The person's "Agent changes" view: editor-wire/contract-checkpoints.ts. */
  ...checkpointMethods,
} as const;

export type ExtensionMethod = keyof typeof extensionMethods;
export type ServerMethod = keyof typeof serverMethods;
export type ParamsOf<M extends ExtensionMethod> = z.infer<(typeof extensionMethods)[M]["params"]>;
export type ResultOf<M extends ExtensionMethod> = z.infer<(typeof extensionMethods)[M]["result"]>;
export type ServerParamsOf<M extends ServerMethod> = z.infer<(typeof serverMethods)[M]["params"]>;
export type ServerResultOf<M extends ServerMethod> = z.infer<(typeof serverMethods)[M]["result"]>;

export function isExtensionMethod(m: string): m is ExtensionMethod {
  return Object.hasOwn(extensionMethods, m);
}
export function isServerMethod(m: string): m is ServerMethod {
  return Object.hasOwn(serverMethods, m);
}

// ---------------------------------------------------------------- events

export const BridgeEvent = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("selectionChanged"),
    path: z.string(),
    text: z.string(),
    selection: Range,
    isEmpty: z.boolean(),
  }),
  /** From the "Send selection to Claude" command (keybinding ctrl+alt+k). */
  z.object({
    type: z.literal("atMentioned"),
    path: z.string(),
    lineStart: z.number().int(),
    lineEnd: z.number().int(),
  }),
  z.object({ type: z.literal("activeEditorChanged"), path: z.string().nullable() }),
  z.object({ type: z.literal("diagnosticsChanged"), paths: z.array(z.string()) }),
  z.object({ type: z.literal("documentChanged"), path: z.string(), version: z.number().int(), isDirty: z.boolean() }),
  z.object({ type: z.literal("diffClosed"), id: z.string() }),
  /** ccb -> ext: output of a mirrored core terminal. */
  z.object({ type: z.literal("terminalData"), id: z.string(), data: z.string() }),
  z.object({ type: z.literal("terminalExit"), id: z.string(), exitCode: z.number().int().nullable() }),
  z.object({ type: z.literal("terminalOpened"), id: z.string(), coreId: z.string().optional(), name: z.string() }),
  /** ccb -> ext: a checkpoint was recorded or who is attached changed; the "Agent changes" view asks again (contract-checkpoints.ts). */
  z.object({ type: z.literal("checkpointsChanged") }),
]);
export type BridgeEvent = z.infer<typeof BridgeEvent>;

// ---------------------------------------------------------------- frames

export const ErrorPayload = z.object({
  code: z.string(),
  message: z.string(),
  hint: z.string().optional(),
});
export type ErrorPayload = z.infer<typeof ErrorPayload>;

export const HelloFrame = z.object({
  type: z.literal("hello"),
  protocol: z.number().int(),
  token: z.string().max(512),
  /** Random per extension host; stable across its reconnects. */
  clientId: z.string().min(1).max(128),
  focused: z.boolean(),
  extensionVersion: z.string(),
  vscodeVersion: z.string(),
  workspaceFolders: z.array(z.string()),
});
export type HelloFrame = z.infer<typeof HelloFrame>;

export const Role = z.enum(["active", "standby"]);
export type Role = z.infer<typeof Role>;

export const RequestFrame = z.object({
  type: z.literal("request"),
  id: z.number().int(),
  method: z.string(),
  params: z.unknown(),
});
export const ResponseFrame = z.object({
  type: z.literal("response"),
  id: z.number().int(),
  result: z.unknown().optional(),
  error: ErrorPayload.optional(),
});
export const EventFrame = z.object({ type: z.literal("event"), event: BridgeEvent });

/** Every frame the extension may send after hello. */
export const ExtensionFrame = z.discriminatedUnion("type", [
  RequestFrame,
  ResponseFrame,
  EventFrame,
  z.object({ type: z.literal("focus"), focused: z.boolean() }),
  z.object({ type: z.literal("ping") }),
]);
export type ExtensionFrame = z.infer<typeof ExtensionFrame>;

/** Every frame ccb may send. */
export const ServerFrame = z.discriminatedUnion("type", [
  z.object({ type: z.literal("welcome"), role: Role, serverVersion: z.string(), pingIntervalMs: z.number().int() }),
  z.object({ type: z.literal("role"), role: Role }),
  RequestFrame,
  ResponseFrame,
  EventFrame,
  z.object({ type: z.literal("pong") }),
]);
export type ServerFrame = z.infer<typeof ServerFrame>;

/** Parse one text frame; undefined when it is not valid JSON or not a valid frame. */
export function parseFrame<T>(schema: z.ZodType<T>, text: string): T | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const r = schema.safeParse(json);
  return r.success ? r.data : undefined;
}

/** Bridge config file the launcher writes (0600) into the installed extension's folder. */
export const BridgeConfig = z.object({ url: z.string(), token: z.string(), workspaceFolders: z.array(z.string()) });
export type BridgeConfig = z.infer<typeof BridgeConfig>;
export const BRIDGE_CONFIG_FILE = "ccb-bridge.json";
export const EXTENSION_ID = "ccb.ccb-bridge";

/**
 * Rewrite every path of tagged arguments ({"$type":"uri"|"location","path"}) with `resolve`
 * (ccb confines them to the workspace). Plain file: URIs are refused: they must come as paths.
 */
export async function mapTaggedPaths(
  value: unknown,
  resolve: (path: string) => Promise<string>,
  depth = 0,
): Promise<unknown> {
  if (depth > 32) throw new TypeError("Command arguments are nested too deeply.");
  if (Array.isArray(value)) return Promise.all(value.map((v) => mapTaggedPaths(v, resolve, depth + 1)));
  if (value === null || typeof value !== "object") return value;
  const obj = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) out[k] = await mapTaggedPaths(v, resolve, depth + 1);
  if (obj.$type === "uri" || obj.$type === "location") {
    if (typeof obj.path === "string") out.path = await resolve(obj.path);
    else if (obj.$type === "location" || typeof obj.uri !== "string")
      throw new TypeError(`A {"$type":"${String(obj.$type)}"} argument needs a "path".`);
    else if (/^file:/i.test(obj.uri))
      throw new TypeError(
        'Give file URIs as {"$type":"uri","path":"..."} so the path can be checked against the workspace.',
      );
  }
  return out;
}
