import { constants } from "node:fs";
import { cp, link, lstat, mkdir, open, rename, rm, unlink } from "node:fs/promises";
import { dirname, sep } from "node:path";
import type { ResolvedPath, Workspace } from "./workspace.ts";
import { CcbError, throwIfAborted, toCcbError } from "./errors.ts";
import { cutUtf8, DEFAULT_MAX_BYTES, countLines, hashStream, lineSpan, looksBinary, openRegular, readAll, sha256, WHOLE_READ_CAP } from "./fs-read.ts";
import { atomicReplace, currentFile, lexists, versionConflict } from "./fs-write.ts";
import { withWriteLock } from "./fs-lock.ts";
import { walk, type EntryKind } from "./fs-walk.ts";

export interface FileEntry {
  /** Path relative to its root ("/" separators; prefixed with the root name when there are several roots). */
  path: string;
  type: "file" | "directory" | "symlink" | "other";
  size: number;
  /** SHA-256 hex of the bytes, files only (omitted for directories, files above the hashing cap and hard-linked files). */
  version?: string;
  mtimeMs: number;
  /** Set when the file has several hard links (it cannot be read through ccb). */
  hardlinked?: boolean;
}

export interface ListOptions {
  path?: string;
  recursive?: boolean;
  /** Levels to descend (1 = direct children). Implies recursive when above 1. */
  depth?: number;
  include?: string[];
  exclude?: string[];
  /** Default true. */
  respectGitignore?: boolean;
  /** Default true for listing (`.git` is skipped while .gitignore is honoured). */
  includeHidden?: boolean;
  /** Default 1000. */
  limit?: number;
  /** Default true: files up to 1 MiB get a version. */
  withVersions?: boolean;
  signal?: AbortSignal;
}
export interface ListResult {
  /** Absolute path of the workspace root the listing lies in. */
  root: string;
  /** Display path of the listed directory. */
  dir: string;
  entries: FileEntry[];
  truncated: boolean;
}

export interface ReadOptions {
  /** 1-based first line (inclusive). */
  startLine?: number;
  /** 1-based last line (inclusive). */
  endLine?: number;
  /** Byte range, exclusive of end. */
  byteOffset?: number;
  byteLength?: number;
  /** Cap on the returned content (default 256 KiB); beyond it the content is cut and `truncated` set. */
  maxBytes?: number;
  /** Default: UTF-8 for text, BINARY_FILE error for binary files (ask for base64 to get their bytes). */
  encoding?: "utf8" | "base64" | "latin1" | "utf16le";
  signal?: AbortSignal;
}
export interface ReadResult {
  path: string;
  abs: string;
  /** Version of the whole file's bytes (not of the range). */
  version: string;
  size: number;
  content: string;
  encoding: string;
  binary: boolean;
  truncated: boolean;
  totalLines?: number;
  range?: { startLine?: number; endLine?: number; byteOffset?: number; byteLength?: number };
  /** Where to continue when truncated. */
  next?: { startLine?: number; byteOffset: number };
}

export interface WriteOptions {
  /** SHA-256 of the bytes the caller last saw; null means "must not exist yet". */
  expectedVersion?: string | null;
  encoding?: "utf8" | "base64";
  createParents?: boolean;
  signal?: AbortSignal;
}
export interface WriteResult { path: string; abs: string; version: string; previousVersion: string | null; size: number; created: boolean }

const LIST_HASH_CAP = 1024 * 1024;
const LIST_HASH_BUDGET = 64 * 1024 * 1024;

/**
 * The file tools never change anything inside a `.git` folder: hooks, config and rebase todo
 * lists there are programs git runs. Repositories are changed through git_run (or a terminal).
 */
function refuseGitInternals(r: ResolvedPath, display: string): void {
  if (r.rel.split("/").includes(".git")) {
    throw new CcbError("PERMISSION_DENIED", `${display} is inside a .git folder; the file tools do not change git's own files.`, {
      hint: "Use git_run (e.g. git config, git update-ref) to change the repository.",
    });
  }
}

function isInside(child: string, parent: string): boolean {
  return child === parent || child.startsWith(parent.endsWith(sep) ? parent : parent + sep);
}

/** Run `fn` over `items` with at most `n` in flight. */
async function pool<T>(items: readonly T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let i = 0;
  const worker = async () => {
    while (i < items.length) await fn(items[i++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
}

export class FileService {
  constructor(readonly workspace: Workspace, readonly options: { lockTimeoutMs?: number } = {}) {}

  async list(options: ListOptions): Promise<ListResult> {
    const ws = this.workspace;
    const r = await ws.resolve(options.path ?? ".", { mustExist: true });
    const st = await lstat(r.abs).catch((e) => Promise.reject(toCcbError(e, options.path)));
    const limit = options.limit ?? 1000;
    const found: Array<{ abs: string; rel: string; kind: EntryKind }> = [];
    let truncated = false;
    if (!st.isDirectory()) {
      found.push({ abs: r.abs, rel: r.rel, kind: st.isFile() ? "file" : "other" });
    } else {
      const maxDepth = options.depth ?? (options.recursive ? undefined : 1);
      const hasIncludes = (options.include ?? []).some((g) => g.trim() !== "");
      for await (const e of walk(r.root, r.rel, {
        include: options.include,
        exclude: options.exclude,
        respectGitignore: options.respectGitignore ?? true,
        includeHidden: options.includeHidden ?? true,
        maxDepth,
        signal: options.signal,
      })) {
        if (hasIncludes && !e.included) continue;
        if (found.length >= limit) {
          truncated = true;
          break;
        }
        found.push({ abs: e.abs, rel: e.rel, kind: e.kind });
      }
    }
    const entries: FileEntry[] = new Array(found.length);
    let budget = LIST_HASH_BUDGET;
    const withVersions = options.withVersions ?? true;
    await pool(found.map((f, i) => ({ ...f, i })), 16, async (f) => {
      throwIfAborted(options.signal);
      const entry: FileEntry = { path: ws.displayRel(r.root, f.rel), type: f.kind, size: 0, mtimeMs: 0 };
      entries[f.i] = entry;
      const s = await lstat(f.abs).catch(() => undefined);
      if (!s) return;
      entry.mtimeMs = s.mtimeMs;
      if (s.isDirectory()) return;
      entry.size = s.size;
      if (!s.isFile()) return;
      if (s.nlink > 1) {
        entry.hardlinked = true;
        return;
      }
      if (withVersions && s.size <= LIST_HASH_CAP && budget >= s.size) {
        budget -= s.size;
        entry.version = await hashFile(f.abs).catch(() => undefined);
        if (entry.version === undefined) delete entry.version;
      }
    });
    entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return { root: r.root, dir: ws.display(r), entries, truncated };
  }

  async read(path: string, options: ReadOptions = {}): Promise<ReadResult> {
    const r = await this.workspace.resolve(path, { mustExist: true });
    const display = this.workspace.display(r);
    const lineMode = options.startLine !== undefined || options.endLine !== undefined;
    const byteMode = options.byteOffset !== undefined || options.byteLength !== undefined;
    if (lineMode && byteMode) {
      throw new CcbError("INVALID_ARGUMENT", "Give either a line range or a byte range, not both.", { hint: "Use startLine/endLine for text, byteOffset/byteLength for raw bytes." });
    }
    const startLine = options.startLine ?? 1;
    if (lineMode && (startLine < 1 || (options.endLine !== undefined && options.endLine < startLine))) {
      throw new CcbError("INVALID_ARGUMENT", `Bad line range ${startLine}-${options.endLine}.`, { hint: "Lines are 1-based and endLine must be >= startLine." });
    }
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    const { fh, st } = await openRegular(r.abs, display);
    try {
      let whole: Buffer | undefined;
      let version: string;
      let size: number;
      let slice: Buffer;
      let start: number;
      if (st.size > WHOLE_READ_CAP) {
        if (lineMode) {
          throw new CcbError("TOO_LARGE", `${display} is ${st.size} bytes, too large for a line range.`, { hint: `Read it by byte range (byteOffset/byteLength) instead; line ranges work on files up to ${WHOLE_READ_CAP} bytes.` });
        }
        ({ version, size } = await hashStream(fh, options.signal));
        start = Math.min(options.byteOffset ?? 0, size);
        const len = Math.min(options.byteLength ?? maxBytes + 1, maxBytes + 1, size - start);
        slice = Buffer.alloc(len);
        const { bytesRead } = await fh.read(slice, 0, len, start);
        slice = slice.subarray(0, bytesRead);
      } else {
        whole = await readAll(fh, st.size, options.signal);
        version = sha256(whole);
        size = whole.length;
        if (lineMode) {
          const span = lineSpan(whole, startLine, options.endLine ?? Number.POSITIVE_INFINITY);
          start = span.start;
          slice = whole.subarray(span.start, span.end);
        } else {
          start = Math.min(options.byteOffset ?? 0, size);
          const end = options.byteLength === undefined ? size : Math.min(size, start + options.byteLength);
          slice = whole.subarray(start, end);
        }
      }
      const binary = looksBinary(whole ?? slice);
      const encoding = options.encoding ?? "utf8";
      if (binary && options.encoding === undefined) {
        throw new CcbError("BINARY_FILE", `${display} looks binary (${size} bytes, version ${version}).`, {
          hint: 'Pass encoding: "base64" (with byteOffset/byteLength for large files) to get its bytes.',
          details: { path: display, version, size },
        });
      }
      let truncated = false;
      if (slice.length > maxBytes) {
        slice = encoding === "utf8" ? cutUtf8(slice, maxBytes) : slice.subarray(0, maxBytes);
        truncated = true;
      }
      const result: ReadResult = {
        path: display,
        abs: r.abs,
        version,
        size,
        content: slice.toString(encoding),
        encoding,
        binary,
        truncated,
      };
      if (whole && !binary) result.totalLines = countLines(whole);
      const endsWithNewline = slice.length > 0 && slice[slice.length - 1] === 10;
      if (lineMode) {
        const lines = countLines(slice);
        result.range = { startLine, endLine: lines === 0 ? startLine - 1 : startLine + lines - 1, byteOffset: start, byteLength: slice.length };
      } else if (byteMode || truncated) {
        result.range = { byteOffset: start, byteLength: slice.length };
      }
      if (truncated) {
        result.next = { byteOffset: start + slice.length };
        if (lineMode && endsWithNewline && result.range?.endLine !== undefined) result.next.startLine = result.range.endLine + 1;
        else if (!lineMode && whole && endsWithNewline && start === 0) result.next.startLine = countLines(slice) + 1;
      }
      return result;
    } finally {
      await fh.close();
    }
  }

  async write(path: string, content: string | Uint8Array, options: WriteOptions = {}): Promise<WriteResult> {
    const ws = this.workspace;
    const r = await ws.resolve(path);
    const display = ws.display(r);
    if (ws.isRoot(r)) throw new CcbError("IS_DIRECTORY", `${display} is a workspace root.`, { hint: "Write to a file path inside it." });
    refuseGitInternals(r, display);
    const data = typeof content === "string" ? Buffer.from(content, options.encoding === "base64" ? "base64" : "utf8") : content;
    await this.#ensureParent(r, display, options.createParents ?? false);
    return withWriteLock(
      r.abs,
      async () => {
        const cur = await currentFile(r.abs, display, options.signal);
        const curVersion = cur?.version ?? null;
        if (options.expectedVersion !== undefined && options.expectedVersion !== curVersion) {
          throw versionConflict(display, options.expectedVersion, curVersion);
        }
        await atomicReplace(r.abs, data, cur, options.signal);
        return { path: display, abs: r.abs, version: sha256(data), previousVersion: curVersion, size: data.length, created: cur === null };
      },
      { signal: options.signal, timeoutMs: this.options.lockTimeoutMs },
    ).catch((err) => Promise.reject(toCcbError(err, display)));
  }

  async delete(path: string, options: { recursive?: boolean; expectedVersion?: string; signal?: AbortSignal } = {}): Promise<{ path: string; deleted: "file" | "directory" }> {
    const ws = this.workspace;
    const r = await ws.resolve(path, { mustExist: true, followFinal: false });
    const display = ws.display(r);
    refuseGitInternals(r, display);
    if (ws.containsRoot(r.abs)) {
      throw new CcbError("INVALID_ARGUMENT", `Refusing to delete ${display}: it is a workspace root.`, { hint: "Delete the entries inside it instead." });
    }
    try {
      const st = await lstat(r.abs);
      if (st.isDirectory()) {
        if (!options.recursive) {
          throw new CcbError("IS_DIRECTORY", `${display} is a directory.`, { hint: "Pass recursive: true to delete it with everything inside." });
        }
        if (options.expectedVersion !== undefined) {
          throw new CcbError("INVALID_ARGUMENT", "expectedVersion applies to files, not directories.", { hint: "Omit expectedVersion when deleting a directory." });
        }
        throwIfAborted(options.signal);
        await rm(r.abs, { recursive: true });
        return { path: display, deleted: "directory" };
      }
      if (options.expectedVersion === undefined) {
        await unlink(r.abs);
      } else {
        await withWriteLock(
          r.abs,
          async () => {
            const cur = await currentFile(r.abs, display, options.signal);
            if (cur?.version !== options.expectedVersion) throw versionConflict(display, options.expectedVersion ?? null, cur?.version ?? null);
            await unlink(r.abs);
          },
          { signal: options.signal, timeoutMs: this.options.lockTimeoutMs },
        );
      }
      return { path: display, deleted: "file" };
    } catch (err) {
      throw toCcbError(err, display);
    }
  }

  async move(from: string, to: string, options: { overwrite?: boolean; createParents?: boolean; signal?: AbortSignal } = {}): Promise<{ from: string; to: string; version?: string }> {
    const ws = this.workspace;
    const src = await ws.resolve(from, { mustExist: true, followFinal: false });
    const dst = await ws.resolve(to, { followFinal: false });
    const fromDisplay = ws.display(src);
    const toDisplay = ws.display(dst);
    refuseGitInternals(src, fromDisplay);
    refuseGitInternals(dst, toDisplay);
    if (ws.containsRoot(src.abs)) throw new CcbError("INVALID_ARGUMENT", `Refusing to move ${fromDisplay}: it is (or contains) a workspace root.`, { hint: "Move the entries inside it instead." });
    if (ws.containsRoot(dst.abs)) throw new CcbError("INVALID_ARGUMENT", `Refusing to replace ${toDisplay}: it is (or contains) a workspace root.`, { hint: "Choose a destination inside a root." });
    if (src.abs === dst.abs) throw new CcbError("INVALID_ARGUMENT", "Source and destination are the same.", { hint: "Give a different destination." });
    if (isInside(dst.abs, src.abs)) throw new CcbError("INVALID_ARGUMENT", `Cannot move ${fromDisplay} into itself.`, { hint: "Choose a destination outside the source directory." });
    throwIfAborted(options.signal);
    try {
      const sst = await lstat(src.abs);
      await this.#ensureParent(dst, toDisplay, options.createParents ?? false);
      const dstat = await lstat(dst.abs).catch(() => undefined);
      if (dstat && !options.overwrite) {
        throw new CcbError("ALREADY_EXISTS", `${toDisplay} already exists.`, { hint: "Pass overwrite: true to replace it, or choose another destination." });
      }
      if (dstat?.isDirectory() && !sst.isDirectory()) {
        throw new CcbError("IS_DIRECTORY", `${toDisplay} is a directory; a file cannot replace it.`, { hint: `Move to a path inside it, e.g. ${toDisplay}/<name>.` });
      }
      if (dstat && !dstat.isDirectory() && sst.isDirectory()) {
        throw new CcbError("NOT_DIRECTORY", `${toDisplay} is a file; a directory cannot replace it.`, { hint: "Delete it first or choose another destination." });
      }
      if (dstat?.isDirectory()) await rm(dst.abs, { recursive: true });
      await moveEntry(src.abs, dst.abs, !sst.isDirectory() && !dstat);
      const result: { from: string; to: string; version?: string } = { from: fromDisplay, to: toDisplay };
      if (sst.isFile() && sst.nlink === 1 && sst.size <= WHOLE_READ_CAP) {
        const v = await hashFile(dst.abs).catch(() => undefined);
        if (v) result.version = v;
      }
      return result;
    } catch (err) {
      throw toCcbError(err, fromDisplay);
    }
  }

  async #ensureParent(r: ResolvedPath, display: string, createParents: boolean): Promise<void> {
    const parent = dirname(r.abs);
    const st = await lstat(parent).catch(() => undefined);
    if (st?.isDirectory()) return;
    if (st) throw new CcbError("NOT_DIRECTORY", `The parent of ${display} is not a directory.`, { hint: "Choose a path whose parent is a directory." });
    if (!createParents) {
      throw new CcbError("NOT_FOUND", `The parent directory of ${display} does not exist.`, { hint: "Pass createParents: true to create missing directories." });
    }
    await mkdir(parent, { recursive: true });
    // Re-check confinement: nothing may have been swapped in while creating.
    await this.workspace.resolve(parent, { mustExist: true });
  }
}

/** SHA-256 of a regular file, without following a final symlink. */
export async function hashFile(abs: string): Promise<string> {
  const fh = await open(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new Error("not a file");
    return st.size > WHOLE_READ_CAP ? (await hashStream(fh)).version : sha256(await readAll(fh, st.size));
  } finally {
    await fh.close();
  }
}

/** Rename; without overwrite, files go through link()+unlink() so an appearing destination is never replaced. */
async function moveEntry(from: string, to: string, noReplace: boolean): Promise<void> {
  try {
    if (noReplace) {
      await link(from, to);
      await unlink(from);
    } else {
      await rename(from, to);
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "EXDEV" && !(noReplace && (code === "EPERM" || code === "ENOTSUP"))) throw err;
    if (noReplace && (await lexists(to))) throw err;
    await cp(from, to, { recursive: true, errorOnExist: true, force: false, verbatimSymlinks: true });
    await rm(from, { recursive: true });
  }
}
