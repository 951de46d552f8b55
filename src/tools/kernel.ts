import { z } from "zod";
import { type Caller, checkpointsOf } from "../core/checkpoints/index.ts";
import type { Core } from "../core/core.ts";
import { CcbError, toCcbError } from "../core/errors.ts";
import { type Logger, redact } from "../core/log.ts";
import { maskSecrets } from "../core/secret-vault.ts";

/**
 * The tool kernel: the one way to define a tool, and what every front end shares when it runs one:
 * the JSON Schema of its input (computed once per schema), the text of an argument error, and the
 * sanitizing of an unexpected failure. The MCP, IDE and ACP adapters only map a definition and its
 * typed outcome (a result or a CcbError) to their wire forms.
 */

/** MCP-style behaviour hints; every tool states all four. */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** A progress report of a running call, for adapters that can show one. */
export interface ToolProgress {
  message: string;
}

/** A permission a handler asks for during its call (the adapter asks the person, or its policy answers). */
export interface PermissionRequest {
  title: string;
  detail?: string;
}

/** What every call gets, whichever protocol it came in on; `D` is what the tool needs besides. */
export type ToolContext<D extends object = CoreDeps, P = ToolProgress> = D & {
  /** Fires when the caller cancels (MCP cancel, ACP cancel, closed socket). Pass it down. */
  signal: AbortSignal;
  log: Logger;
  /** Report progress; absent where the protocol has no channel for it. */
  progress?: (update: P) => void;
  /** Ask for a further permission; absent where the host confirms each call itself (MCP, IDE). */
  permission?: (request: PermissionRequest) => Promise<boolean>;
  /** Who calls (front end, client, session, OAuth identity): what checkpoints and terminals attribute to them. */
  caller?: Caller;
};

/** What the workspace tools need: the core's services. */
export interface CoreDeps {
  core: Core;
}

export interface ToolResult {
  /** Model-visible text. Never put secrets, tokens or private URLs here. */
  text: string;
  /** Machine-readable result (MCP structuredContent). Model-visible too: no secrets. */
  structured?: Record<string, unknown>;
  /** Host-only metadata (MCP `_meta`), e.g. the workbench URL for an MCP App. */
  meta?: Record<string, unknown>;
}

/**
 * One tool. `D` is what its handler needs besides the call context (the core for the workspace
 * tools, the IDE's editor and diff tabs, the ACP session's file access), `R` its result.
 */
export interface ToolDef<
  S extends z.ZodObject = z.ZodObject,
  D extends object = CoreDeps,
  R = ToolResult,
  P = ToolProgress,
> {
  name: string;
  title: string;
  /** What it does, when to use it, what it returns. */
  description: string;
  /** Every field described with `.describe()`. */
  input: S;
  annotations: ToolAnnotations;
  /** True for tools that need the live editor bridge (they fail with BRIDGE_UNAVAILABLE without it). */
  needsBridge?: boolean;
  /** Static tool metadata for hosts (MCP tools/list `_meta`), e.g. `{ ui: { resourceUri } }` for an MCP App. */
  meta?: Record<string, unknown>;
  execute(args: z.infer<S>, ctx: ToolContext<D, P>): Promise<R>;
}

/**
 * A tool of any input schema, as catalogs hold it. Adapters parse the arguments with
 * `parseArguments` before calling `execute`, so the erased type is never trusted blindly.
 */
// biome-ignore lint/suspicious/noExplicitAny: erased schema type in heterogeneous catalogs
export type AnyToolDef<D extends object = CoreDeps, R = ToolResult, P = ToolProgress> = ToolDef<any, D, R, P>;

/**
 * Identity helper that keeps the schema's type attached to `execute`, and the tool's name as its
 * literal type (so a front end can key a table by the catalog's names: a missing row fails to compile).
 */
export function defineTool<
  S extends z.ZodObject,
  D extends object = CoreDeps,
  R = ToolResult,
  P = ToolProgress,
  const N extends string = string,
>(def: ToolDef<S, D, R, P> & { name: N }): ToolDef<S, D, R, P> & { name: N } {
  return def;
}

/** Convenience annotation presets. */
export const READ_ONLY: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

// ---------------------------------------------------------------- schemas

const schemas = new WeakMap<z.ZodType, Record<string, unknown>>();

/**
 * The JSON Schema of a tool's input (what the caller sends: defaults make fields optional), an
 * object schema without `$schema`. Computed once per schema; every adapter lists this same object.
 */
export function inputSchema(schema: z.ZodType): Record<string, unknown> {
  let json = schemas.get(schema);
  if (!json) {
    const generated = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
    const { $schema: _drop, ...rest } = generated;
    json = { ...rest, type: "object" };
    schemas.set(schema, json);
  }
  return json;
}

// ---------------------------------------------------------------- a catalog

/** Tools by name, in order; names are unique. Each front end's tools/list shape is built once per catalog. */
export class ToolCatalog<T extends { name: string }> {
  readonly tools: readonly T[];
  readonly #byName = new Map<string, T>();
  readonly #lists = new Map<object, unknown[]>();

  constructor(tools: readonly T[]) {
    for (const t of tools) {
      if (this.#byName.has(t.name)) throw new Error(`Duplicate tool name in catalog: ${t.name}`);
      this.#byName.set(t.name, t);
    }
    this.tools = tools;
  }

  get(name: string): T | undefined {
    return this.#byName.get(name);
  }

  /** The tools as one front end lists them (`entry`: a module-level function, the cache's key). */
  list<E>(entry: (tool: T) => E): E[] {
    let list = this.#lists.get(entry);
    if (!list) {
      list = this.tools.map(entry);
      this.#lists.set(entry, list);
    }
    return list as E[];
  }
}

const catalogs = new WeakMap<readonly { name: string }[], ToolCatalog<{ name: string }>>();

/** The catalog of a tool list, built once per list. */
export function catalogOf<T extends { name: string }>(tools: readonly T[]): ToolCatalog<T> {
  let c = catalogs.get(tools);
  if (!c) {
    c = new ToolCatalog(tools);
    catalogs.set(tools, c);
  }
  return c as ToolCatalog<T>;
}

// ---------------------------------------------------------------- arguments

/**
 * "path: expected string, received number; limit: too big": what is wrong, field by field; the one
 * formatter of schema issues (tool arguments, MCP params, IDE JSON-RPC). `root` names an issue of the
 * whole value, `under` is a leading path key left out, `max` caps how many are listed.
 */
export function formatIssues(
  issues: readonly { path: readonly PropertyKey[]; message: string }[],
  o: { root?: string; under?: string; max?: number } = {},
): string {
  return issues
    .slice(0, o.max ?? 10)
    .map((i) => {
      const path = i.path.map(String);
      const where = o.under !== undefined && path[0] === o.under ? path.slice(1) : path;
      return `${where.length > 0 ? where.join(".") : (o.root ?? "(arguments)")}: ${i.message}`;
    })
    .join("; ");
}

/** The one text of an argument error, on every protocol. */
export function argumentErrorText(toolName: string, error: z.ZodError): string {
  return (
    `Invalid arguments for tool ${toolName}: ${formatIssues(error.issues)}. ` +
    "Fix them (the tool's input schema describes every field) and call it again."
  );
}

export type Parsed<T> = { ok: true; args: T } | { ok: false; message: string };

/** A tool's arguments checked against its input schema, or the argument error's text. */
export function parseArguments<S extends z.ZodObject>(
  def: { name: string; input: S },
  raw: unknown,
): Parsed<z.infer<S>> {
  const r = def.input.safeParse(raw ?? {});
  return r.success ? { ok: true, args: r.data } : { ok: false, message: argumentErrorText(def.name, r.error) };
}

// ---------------------------------------------------------------- failures

const UNEXPECTED_HINT =
  "This is a bug in ccb or an unexpected environment problem; ccb keeps running. Retry, or check ccb's log.";
const MAX_MESSAGE = 500;

/**
 * A failed call as the caller may see it. A CcbError is the tool's own answer and passes unchanged.
 * Anything else is unexpected: its message may hold paths of this machine, tokens or secrets, so
 * the caller gets its first line with every secret value, token-like word and absolute path
 * replaced, and no stack or cause; the whole error goes to the log (secrets masked).
 */
export function toolFailure(toolName: string, err: unknown, log?: Logger): CcbError {
  if (err instanceof CcbError && sanitized.has(err)) return err;
  const e = toCcbError(err);
  if (e.code !== "INTERNAL") {
    log?.debug(`${toolName} failed: ${e.message} (${e.code})`);
    return e;
  }
  const full = err instanceof Error ? (err.stack ?? err.message) : String(err);
  log?.error(`tool ${toolName} failed: ${redact(maskSecrets(full))}`);
  const message = `${toolName} failed unexpectedly: ${sanitizeMessage(e.message)}`;
  const safe = new CcbError("INTERNAL", message, { hint: UNEXPECTED_HINT });
  sanitized.add(safe);
  return safe;
}

/** The failures `toolFailure` made or a tool vouched for: an adapter that maps one again gets it unchanged. */
const sanitized = new WeakSet<CcbError>();

/** A failure a tool passes on as it is (a remote MCP server's own error): `toolFailure` leaves it unchanged. */
export function trustedFailure(err: unknown): CcbError {
  const e = toCcbError(err);
  sanitized.add(e);
  return e;
}

/**
 * Tools whose effects go on after their call returned (a command typed in a terminal, a task, a debug
 * session; the Claude Code IDE's `openDiff`, whose accepted content the CLI writes itself): the
 * checkpoints attribute what follows to their caller.
 */
const LINGERS = new Set([
  "openDiff",
  "terminal_create",
  "terminal_write",
  "task_run",
  "debug_start",
  "debug_control",
  "vscode_execute_command",
]);
/** Tools that record their own checkpoints. */
const RECORDS_ITSELF = new Set(["checkpoint_restore"]);
/** Tools that change only the paths their arguments name: the checkpoints look at those alone. */
const NAMES_PATHS: Record<string, readonly string[]> = {
  fs_write: ["path"],
  fs_delete: ["path"],
  fs_move: ["from", "to"],
};

/** The absolute paths a call of `tool` names, or undefined (its records then scan the whole tree). */
function namedPaths(core: CoreDeps["core"], tool: string, args: object): string[] | undefined {
  const keys = NAMES_PATHS[tool];
  if (!keys) return undefined;
  try {
    return keys.map((k) => core.workspace.lexical((args as Record<string, unknown>)[k] as string));
  } catch {
    return undefined;
  }
}

/** Run a tool with checked arguments; any failure leaves as `toolFailure`'s CcbError. */
export async function runTool<S extends z.ZodObject, D extends object, R, P>(
  def: ToolDef<S, D, R, P>,
  args: z.infer<S>,
  ctx: ToolContext<D, P>,
): Promise<R> {
  // An agent at work: a parked editor starts reopening (src/workbench/park.ts). Every front end's deps carry the core.
  const core = (ctx as Partial<CoreDeps>).core;
  core?.bridge.touch();
  try {
    // Every call that can change files is recorded before and after, with its caller (core/checkpoints/).
    const checkpoints = core && checkpointsOf(core);
    return await (checkpoints
      ? checkpoints.around(
          {
            name: def.name,
            annotations: def.annotations,
            lingers: LINGERS.has(def.name),
            recordsItself: RECORDS_ITSELF.has(def.name),
            paths: namedPaths(core, def.name, args),
          },
          ctx.caller,
          () => def.execute(args, ctx),
        )
      : def.execute(args, ctx));
  } catch (err) {
    throw toolFailure(def.name, err, ctx.log);
  }
}

// an absolute POSIX path (or ~/...) not glued to a word, a Windows path, a file: URI
const PATHS = /(?<![\w.~-])(?:file:\/\/)?~?(?:\/[^\s/'"`<>(){}[\],;]+)+\/?|\b[A-Za-z]:\\[^\s'"`<>]+/g;
// a word of 20+ letters, digits, - and _ with both letters and digits: a token or key
const TOKENS = /(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{20,}(?![\w-])/g;

/** The first line of an unexpected error's message, safe to show to a caller. */
export function sanitizeMessage(message: string): string {
  const first = message.split("\n", 1)[0] ?? "";
  const line = redact(maskSecrets(first)).replace(PATHS, "<path>").replace(TOKENS, "<redacted>");
  return line.length > MAX_MESSAGE ? `${line.slice(0, MAX_MESSAGE)}…` : line;
}
