/**
 * Typed errors of the core, with stable string codes. Each protocol adapter maps them once to its
 * wire form (MCP isError result, JSON-RPC error, ACP RequestError); the CLI prints them as
 * actionable messages without stack traces.
 */
export const ERROR_CODES = [
  "PATH_OUTSIDE_WORKSPACE",
  "INVALID_PATH",
  "PATH_TOO_LONG",
  "INVALID_ARGUMENT",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "IS_DIRECTORY",
  "NOT_DIRECTORY",
  "NOT_EMPTY",
  "VERSION_CONFLICT",
  "TOO_LARGE",
  "BINARY_FILE",
  "PERMISSION_DENIED",
  "BRIDGE_UNAVAILABLE",
  "BRIDGE_ERROR",
  "TERMINAL_NOT_FOUND",
  "TERMINAL_EXITED",
  "DEBUG_NOT_STOPPED",
  "GIT_REFUSED",
  "GIT_FAILED",
  "TIMEOUT",
  "ABORTED",
  "UNSUPPORTED",
  "RUNTIME_UNAVAILABLE",
  "INTEGRITY_FAILED",
  "CONFIG_INVALID",
  "INTERNAL",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * What a hint can send the caller to, named by its role: the core does not know which front end
 * (if any) carries its error, nor its tools' names. A hint writes `{{list}}`; each front end renders
 * it in its own tools' names (`toUserText(names)`), and a role it has no tool for reads as plain words.
 */
export type HintAction =
  | "list"
  | "read"
  | "write"
  | "git"
  | "gitStatus"
  | "gitDiff"
  | "terminal"
  | "terminalList"
  | "terminalRead";
export type HintNames = Partial<Record<HintAction, string>>;

const PLAIN_NAMES: Record<HintAction, string> = {
  list: "a directory listing",
  read: "a file read",
  write: "a file write",
  git: "git",
  gitStatus: "git status",
  gitDiff: "git diff",
  terminal: "a terminal",
  terminalList: "the terminal list",
  terminalRead: "a terminal read",
};

/** A hint with its `{{role}}` places filled from `names` (plain words where a name is missing). */
export function renderHint(hint: string, names: HintNames = {}): string {
  return hint.replace(
    /\{\{(\w+)\}\}/g,
    (m, role: string) => names[role as HintAction] ?? PLAIN_NAMES[role as HintAction] ?? m,
  );
}

export interface CcbErrorOptions {
  /** What the caller can do next; shown to users and models. Tools are named by role (`{{list}}`, see HintAction). */
  hint?: string;
  /** Machine-readable details (never secrets). */
  details?: Record<string, unknown>;
  cause?: unknown;
}

export class CcbError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: CcbErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "CcbError";
    this.code = code;
    this.hint = options.hint;
    this.details = options.details;
  }

  /** What to do, in the names of the front end's tools (plain words for roles it has no tool for). */
  hintFor(names: HintNames = {}): string | undefined {
    return this.hint === undefined ? undefined : renderHint(this.hint, names);
  }

  /** One line for a person or a model: message, then what to do (tools named as `names` says). */
  toUserText(names: HintNames = {}): string {
    const hint = this.hintFor(names);
    return hint ? `${this.code}: ${this.message}\n${hint}` : `${this.code}: ${this.message}`;
  }

  toJSON(): Record<string, unknown> {
    return { code: this.code, message: this.message, hint: this.hint, details: this.details };
  }
}

/** A CcbError from an error that crossed a wire ({code, message, hint}); an unknown code becomes `fallback`. */
export function ccbErrorFromWire(
  e: { code: string; message: string; hint?: string | undefined },
  fallback: ErrorCode = "BRIDGE_ERROR",
): CcbError {
  const code = (ERROR_CODES as readonly string[]).includes(e.code) ? (e.code as ErrorCode) : fallback;
  return new CcbError(code, e.message, e.hint ? { hint: e.hint } : {});
}

export function isCcbError(err: unknown, code?: ErrorCode): err is CcbError {
  return err instanceof CcbError && (code === undefined || err.code === code);
}

/** Map Node system errors (ENOENT, EACCES, ...) and aborts to typed errors; keep CcbErrors as they are. */
export function toCcbError(err: unknown, path?: string): CcbError {
  if (err instanceof CcbError) return err;
  const e = err as NodeJS.ErrnoException | undefined;
  const where = path ?? e?.path ?? "";
  switch (e?.code) {
    case "ENOENT":
      return new CcbError("NOT_FOUND", `No such file or directory: ${where}`, {
        hint: "Check the path; {{list}} shows what exists.",
        cause: err,
      });
    case "EEXIST":
      return new CcbError("ALREADY_EXISTS", `Already exists: ${where}`, { cause: err });
    case "EISDIR":
      return new CcbError("IS_DIRECTORY", `Is a directory: ${where}`, { cause: err });
    case "ENOTDIR":
      return new CcbError("NOT_DIRECTORY", `Not a directory: ${where}`, { cause: err });
    case "ENOTEMPTY":
      return new CcbError("NOT_EMPTY", `Directory not empty: ${where}`, { cause: err });
    case "EACCES":
    case "EPERM":
      return new CcbError("PERMISSION_DENIED", `Permission denied: ${where}`, { cause: err });
    case "ENAMETOOLONG":
      return new CcbError("PATH_TOO_LONG", `Path too long: ${where}`, {
        hint: "A path component may have at most 255 bytes and a whole path at most 4095; choose a shorter name.",
        cause: err,
      });
    case "ELOOP":
      return new CcbError("INVALID_PATH", `Too many levels of symbolic links: ${where}`, {
        hint: "A symlink loop is in the path; remove or fix the symlink.",
        cause: err,
      });
    case "EFBIG":
      return new CcbError("TOO_LARGE", `File too large: ${where}`, { cause: err });
    case "ABORT_ERR":
      return new CcbError("ABORTED", "The operation was cancelled.", { cause: err });
    default:
      break;
  }
  if (e && (e as Error).name === "AbortError") {
    return new CcbError("ABORTED", "The operation was cancelled.", { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new CcbError("INTERNAL", message, { cause: err });
}

/** Throw ABORTED if the signal has fired. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new CcbError("ABORTED", "The operation was cancelled.");
}
