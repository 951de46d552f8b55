import { lstatSync, unlinkSync } from "node:fs";
import { sep } from "node:path";
import { CcbError, throwIfAborted, toCcbError } from "../errors.ts";
import type { Workspace } from "../workspace.ts";
import { lockTargetAt, withWriteLock } from "./path-lock.ts";
import {
  countLines,
  cutUtf8,
  DEFAULT_MAX_BYTES,
  hashStream,
  lineSpan,
  looksBinary,
  openRegular,
  readAll,
  readSmallRegular,
  sha256,
  WHOLE_READ_CAP,
} from "./read.ts";
import { type Dir, openDirAt, openDirBeneath } from "./safe/dir.ts";
import { assertNoRepoInside } from "./safe/gitdir.ts";
import type { Located } from "./safe/locate.ts";
import { sweepStaleTemps } from "./safe/private.ts";
import { hashAt, moveAt, removeTree } from "./safe/tree.ts";
import { type EntryKind, walk } from "./walk.ts";
import { atomicReplace, currentFile, hardlinkedVersion, versionConflict } from "./write.ts";

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
export interface WriteResult {
  path: string;
  abs: string;
  version: string;
  previousVersion: string | null;
  size: number;
  created: boolean;
}

const LIST_HASH_CAP = 1024 * 1024;
const LIST_HASH_BUDGET = 64 * 1024 * 1024;

/**
 * The file tools never change anything inside a `.git` folder or any directory git treats as a
 * repository (files/safe/gitdir.ts): hooks, config and rebase todo lists there are programs git
 * runs. Repositories are changed through git_run (or a terminal). The resolver enforces this on
 * the resolved components (`gitGuard`); this lexical check refuses before anything is created.
 */
function refuseGitInternals(input: string, rel: string, display: string): void {
  if (input.split(/[/\\]/).includes(".git") || rel.split("/").includes(".git")) {
    throw new CcbError(
      "PERMISSION_DENIED",
      `${display} is inside a .git folder; the file tools do not change git's own files.`,
      {
        hint: "Use {{git}} (e.g. git config, git update-ref) to change the repository.",
      },
    );
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

function notFound(input: string): CcbError {
  return new CcbError("NOT_FOUND", `No such file or directory: ${input}`, {
    hint: "Check the path; {{list}} shows what exists.",
  });
}

function parentProblem(l: Located, display: string): CcbError {
  if (l.missingParent === "not-directory")
    return new CcbError("NOT_DIRECTORY", `The parent of ${display} is not a directory.`, {
      hint: "Choose a path whose parent is a directory.",
    });
  return new CcbError("NOT_FOUND", `The parent directory of ${display} does not exist.`, {
    hint: "Pass createParents: true to create missing directories.",
  });
}

/** Close the handles of `l` after `fn`, mapping system errors once. */
async function using<T>(l: Located, display: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toCcbError(err, display);
  } finally {
    l.close();
  }
}

/**
 * The file tools' operations. Every path is resolved by `Workspace.locate` to a verified handle
 * on its directory (files/safe/locate.ts); reads, writes, temp files, renames and deletions then go
 * through that handle, never through the path again.
 */
export class FileService {
  constructor(
    readonly workspace: Workspace,
    readonly options: { lockTimeoutMs?: number } = {},
  ) {
    sweepStaleTemps();
  }

  async list(options: ListOptions): Promise<ListResult> {
    const ws = this.workspace;
    const l = ws.locate(options.path ?? ".");
    const found: Array<{ rel: string; kind: EntryKind }> = [];
    const limit = options.limit ?? 1000;
    let truncated = false;
    await using(l, options.path ?? ".", async () => {
      const st = l.self?.st ?? l.st;
      if (!st) throw notFound(options.path ?? ".");
      if (!st.isDirectory()) {
        found.push({ rel: l.rel, kind: st.isFile() ? "file" : "other" });
        return;
      }
      const maxDepth = options.depth ?? (options.recursive ? undefined : 1);
      const hasIncludes = (options.include ?? []).some((g) => g.trim() !== "");
      for await (const e of walk(l.root, l.rel, {
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
        found.push({ rel: e.rel, kind: e.kind });
      }
    });
    const entries: FileEntry[] = found.map((f) => ({
      path: ws.displayRel(l.root, f.rel),
      type: f.kind,
      size: 0,
      mtimeMs: 0,
    }));
    // Metadata through a handle on each parent directory (opened once per directory).
    const byParent = new Map<string, number[]>();
    found.forEach((f, i) => {
      const cut = f.rel.lastIndexOf("/");
      const parent = cut < 0 ? "" : f.rel.slice(0, cut);
      const list = byParent.get(parent);
      if (list) list.push(i);
      else byParent.set(parent, [i]);
    });
    let budget = LIST_HASH_BUDGET;
    const withVersions = options.withVersions ?? true;
    await pool([...byParent], 8, async ([parentRel, idx]) => {
      let dir: Dir;
      try {
        dir = openDirBeneath(l.root, parentRel);
      } catch {
        return; // swapped or vanished: no metadata
      }
      try {
        for (const i of idx) {
          throwIfAborted(options.signal);
          const f = found[i] as { rel: string };
          const entry = entries[i] as FileEntry;
          const name = f.rel.slice(f.rel.lastIndexOf("/") + 1);
          let s: ReturnType<typeof lstatSync>;
          try {
            s = lstatSync(dir.at(name));
          } catch {
            continue;
          }
          entry.mtimeMs = s.mtimeMs;
          if (s.isDirectory()) continue;
          entry.size = s.size;
          if (!s.isFile()) continue;
          if (s.nlink > 1) {
            entry.hardlinked = true;
            continue;
          }
          if (withVersions && s.size <= LIST_HASH_CAP && budget >= s.size) {
            budget -= s.size;
            const v = await hashAt(dir, name);
            if (v !== undefined) entry.version = v;
          }
        }
      } finally {
        dir.close();
      }
    });
    entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return { root: l.root, dir: ws.displayRel(l.root, l.rel), entries, truncated };
  }

  async read(path: string, options: ReadOptions = {}): Promise<ReadResult> {
    const lineMode = options.startLine !== undefined || options.endLine !== undefined;
    const byteMode = options.byteOffset !== undefined || options.byteLength !== undefined;
    if (lineMode && byteMode) {
      throw new CcbError("INVALID_ARGUMENT", "Give either a line range or a byte range, not both.", {
        hint: "Use startLine/endLine for text, byteOffset/byteLength for raw bytes.",
      });
    }
    const startLine = options.startLine ?? 1;
    if (lineMode && (startLine < 1 || (options.endLine !== undefined && options.endLine < startLine))) {
      throw new CcbError("INVALID_ARGUMENT", `Bad line range ${startLine}-${options.endLine}.`, {
        hint: "Lines are 1-based and endLine must be >= startLine.",
      });
    }
    const l = this.workspace.locate(path);
    const display = this.workspace.displayRel(l.root, l.rel);
    return using(l, display, async () => {
      if (l.self || l.st?.isDirectory())
        throw new CcbError("IS_DIRECTORY", `Is a directory: ${display}`, { hint: "Use {{list}} to see its entries." });
      if (!l.st || !l.parent) throw notFound(path);
      throwIfAborted(options.signal);
      // Small files (most reads) in one synchronous step; larger ones through the thread pool.
      const small = readSmallRegular(l.parent, l.name, display);
      if (small) return await this.#readOpen(small, display, l.abs, options, lineMode, byteMode, startLine);
      const { fh, st } = await openRegular(l.parent, l.name, display);
      try {
        return await this.#readOpen({ fh, size: st.size }, display, l.abs, options, lineMode, byteMode, startLine);
      } finally {
        await fh.close();
      }
    });
  }

  /** `src`: the whole content already read, or an open file of `size` bytes. */
  async #readOpen(
    src: Buffer | { fh: import("node:fs/promises").FileHandle; size: number },
    display: string,
    abs: string,
    options: ReadOptions,
    lineMode: boolean,
    byteMode: boolean,
    startLine: number,
  ): Promise<ReadResult> {
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    let whole: Buffer | undefined;
    let version: string;
    let size: number;
    let slice: Buffer;
    let start: number;
    const fileSize = Buffer.isBuffer(src) ? src.length : src.size;
    if (!Buffer.isBuffer(src) && fileSize > WHOLE_READ_CAP) {
      const fh = src.fh;
      if (lineMode) {
        throw new CcbError("TOO_LARGE", `${display} is ${fileSize} bytes, too large for a line range.`, {
          hint: `Read it by byte range (byteOffset/byteLength) instead; line ranges work on files up to ${WHOLE_READ_CAP} bytes.`,
        });
      }
      ({ version, size } = await hashStream(fh, options.signal));
      start = Math.min(options.byteOffset ?? 0, size);
      const len = Math.min(options.byteLength ?? maxBytes + 1, maxBytes + 1, size - start);
      slice = Buffer.alloc(len);
      const { bytesRead } = await fh.read(slice, 0, len, start);
      slice = slice.subarray(0, bytesRead);
    } else {
      whole = Buffer.isBuffer(src) ? src : await readAll(src.fh, fileSize, options.signal);
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
      abs,
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
      result.range = {
        startLine,
        endLine: lines === 0 ? startLine - 1 : startLine + lines - 1,
        byteOffset: start,
        byteLength: slice.length,
      };
    } else if (byteMode || truncated) {
      result.range = { byteOffset: start, byteLength: slice.length };
    }
    if (truncated) {
      result.next = { byteOffset: start + slice.length };
      if (lineMode && endsWithNewline && result.range?.endLine !== undefined)
        result.next.startLine = result.range.endLine + 1;
      else if (!lineMode && whole && endsWithNewline && start === 0) result.next.startLine = countLines(slice) + 1;
    }
    return result;
  }

  async write(path: string, content: string | Uint8Array, options: WriteOptions = {}): Promise<WriteResult> {
    const ws = this.workspace;
    refuseGitInternals(path, "", path);
    const l = ws.locate(path, { createParents: options.createParents ?? false, gitGuard: true });
    const display = ws.displayRel(l.root, l.rel);
    const data =
      typeof content === "string" ? Buffer.from(content, options.encoding === "base64" ? "base64" : "utf8") : content;
    return using(l, display, async () => {
      if (l.self)
        throw new CcbError("IS_DIRECTORY", `${display} is a workspace root.`, {
          hint: "Write to a file path inside it.",
        });
      refuseGitInternals(path, l.rel, display);
      const parent = l.parent;
      if (!parent) throw parentProblem(l, display);
      return withWriteLock(
        lockTargetAt(parent, l.name, display),
        async () => {
          const cur = await currentFile(parent, l.name, display, options.signal);
          if (cur && cur.version === null && options.expectedVersion !== undefined) throw hardlinkedVersion(display);
          const curVersion = cur?.version ?? null;
          if (options.expectedVersion !== undefined && options.expectedVersion !== curVersion) {
            throw versionConflict(display, options.expectedVersion, curVersion);
          }
          await atomicReplace(parent, l.name, data, cur, options.signal);
          return {
            path: display,
            abs: l.abs,
            version: sha256(data),
            previousVersion: curVersion,
            size: data.length,
            created: cur === null,
          };
        },
        { signal: options.signal, timeoutMs: this.options.lockTimeoutMs },
      );
    });
  }

  async delete(
    path: string,
    options: { recursive?: boolean; expectedVersion?: string; signal?: AbortSignal } = {},
  ): Promise<{ path: string; deleted: "file" | "directory" }> {
    const ws = this.workspace;
    refuseGitInternals(path, "", path);
    const l = ws.locate(path, { followFinal: false, gitGuard: true });
    const display = ws.displayRel(l.root, l.rel);
    return using(l, display, async () => {
      refuseGitInternals(path, l.rel, display);
      if (l.self || ws.containsRoot(l.abs)) {
        throw new CcbError("INVALID_ARGUMENT", `Refusing to delete ${display}: it is a workspace root.`, {
          hint: "Delete the entries inside it instead.",
        });
      }
      const parent = l.parent;
      if (!l.st || !parent) throw notFound(path);
      if (l.st.isDirectory()) {
        if (!options.recursive) {
          throw new CcbError("IS_DIRECTORY", `${display} is a directory.`, {
            hint: "Pass recursive: true to delete it with everything inside.",
          });
        }
        if (options.expectedVersion !== undefined) {
          throw new CcbError("INVALID_ARGUMENT", "expectedVersion applies to files, not directories.", {
            hint: "Omit expectedVersion when deleting a directory.",
          });
        }
        throwIfAborted(options.signal);
        removeTree(parent, l.name, display, options.signal);
        return { path: display, deleted: "directory" as const };
      }
      if (options.expectedVersion === undefined) {
        unlinkSync(parent.at(l.name));
      } else {
        await withWriteLock(
          lockTargetAt(parent, l.name, display),
          async () => {
            const cur = await currentFile(parent, l.name, display, options.signal);
            if (cur && cur.version === null) throw hardlinkedVersion(display);
            if (cur?.version !== options.expectedVersion)
              throw versionConflict(display, options.expectedVersion ?? null, cur?.version ?? null);
            unlinkSync(parent.at(l.name));
          },
          { signal: options.signal, timeoutMs: this.options.lockTimeoutMs },
        );
      }
      return { path: display, deleted: "file" as const };
    });
  }

  async move(
    from: string,
    to: string,
    options: { overwrite?: boolean; createParents?: boolean; signal?: AbortSignal } = {},
  ): Promise<{ from: string; to: string; version?: string }> {
    const ws = this.workspace;
    refuseGitInternals(from, "", from);
    refuseGitInternals(to, "", to);
    const src = ws.locate(from, { followFinal: false, gitGuard: true });
    const fromDisplay = ws.displayRel(src.root, src.rel);
    return using(src, fromDisplay, async () => {
      let dst = ws.locate(to, { followFinal: false, gitGuard: true });
      try {
        const toDisplay = ws.displayRel(dst.root, dst.rel);
        refuseGitInternals(from, src.rel, fromDisplay);
        refuseGitInternals(to, dst.rel, toDisplay);
        if (!src.st && !src.self) throw notFound(from);
        if (src.self || ws.containsRoot(src.abs))
          throw new CcbError(
            "INVALID_ARGUMENT",
            `Refusing to move ${fromDisplay}: it is (or contains) a workspace root.`,
            { hint: "Move the entries inside it instead." },
          );
        if (dst.self || ws.containsRoot(dst.abs))
          throw new CcbError(
            "INVALID_ARGUMENT",
            `Refusing to replace ${toDisplay}: it is (or contains) a workspace root.`,
            { hint: "Choose a destination inside a root." },
          );
        if (src.abs === dst.abs)
          throw new CcbError("INVALID_ARGUMENT", "Source and destination are the same.", {
            hint: "Give a different destination.",
          });
        if (isInside(dst.abs, src.abs))
          throw new CcbError("INVALID_ARGUMENT", `Cannot move ${fromDisplay} into itself.`, {
            hint: "Choose a destination outside the source directory.",
          });
        throwIfAborted(options.signal);
        const sp = src.parent as Dir;
        const sst = src.st as NonNullable<Located["st"]>;
        if (sst.isDirectory()) {
          const d = openDirAt(sp, src.name);
          try {
            assertNoRepoInside(d, fromDisplay);
          } finally {
            d.close();
          }
        }
        if (dst.missingParent === "missing" && options.createParents) {
          dst.close();
          dst = ws.locate(to, { followFinal: false, gitGuard: true, createParents: true });
        }
        const dp = dst.parent;
        if (!dp) throw parentProblem(dst, toDisplay);
        const dstat = dst.st;
        if (dstat && !options.overwrite) {
          throw new CcbError("ALREADY_EXISTS", `${toDisplay} already exists.`, {
            hint: "Pass overwrite: true to replace it, or choose another destination.",
          });
        }
        if (dstat?.isDirectory() && !sst.isDirectory()) {
          throw new CcbError("IS_DIRECTORY", `${toDisplay} is a directory; a file cannot replace it.`, {
            hint: `Move to a path inside it, e.g. ${toDisplay}/<name>.`,
          });
        }
        if (dstat && !dstat.isDirectory() && sst.isDirectory()) {
          throw new CcbError("NOT_DIRECTORY", `${toDisplay} is a file; a directory cannot replace it.`, {
            hint: "Delete it first or choose another destination.",
          });
        }
        if (dstat?.isDirectory()) removeTree(dp, dst.name, toDisplay, options.signal);
        try {
          moveAt(sp, src.name, dp, dst.name, !sst.isDirectory() && !dstat);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === "EXDEV") {
            throw new CcbError("UNSUPPORTED", `${fromDisplay} and ${toDisplay} are on different file systems.`, {
              hint: "Copy its content to a new file ({{read}} then {{write}}, or {{terminal}}) and delete the original.",
            });
          }
          throw err;
        }
        const result: { from: string; to: string; version?: string } = { from: fromDisplay, to: toDisplay };
        if (sst.isFile() && sst.nlink === 1 && sst.size <= WHOLE_READ_CAP) {
          const v = await hashAt(dp, dst.name);
          if (v) result.version = v;
        }
        return result;
      } finally {
        dst.close();
      }
    });
  }
}
