import type { Workspace } from "./workspace.ts";
import { CcbError } from "./errors.ts";

// OWNER: files helper. Skeleton: signatures are the contract other parts code against.

export interface FileEntry {
  /** Path relative to its root ("/" separators). */
  path: string;
  type: "file" | "directory" | "symlink" | "other";
  size: number;
  /** SHA-256 hex of the bytes, files only (omitted for directories and files above the hashing cap). */
  version?: string;
  mtimeMs: number;
}

export interface ListOptions {
  path?: string;
  recursive?: boolean;
  depth?: number;
  include?: string[];
  exclude?: string[];
  respectGitignore?: boolean;
  includeHidden?: boolean;
  limit?: number;
  withVersions?: boolean;
  signal?: AbortSignal;
}
export interface ListResult { root: string; entries: FileEntry[]; truncated: boolean }

export interface ReadOptions {
  /** 1-based first line (inclusive). */
  startLine?: number;
  /** 1-based last line (inclusive). */
  endLine?: number;
  /** Byte range, exclusive of end. */
  byteOffset?: number;
  byteLength?: number;
  maxBytes?: number;
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
}

export interface WriteOptions {
  /** SHA-256 of the bytes the caller last saw; null means "must not exist yet". */
  expectedVersion?: string | null;
  encoding?: "utf8" | "base64";
  createParents?: boolean;
  signal?: AbortSignal;
}
export interface WriteResult { path: string; abs: string; version: string; previousVersion: string | null; size: number; created: boolean }

export class FileService {
  constructor(readonly workspace: Workspace) {}

  async list(_options: ListOptions): Promise<ListResult> {
    throw new CcbError("UNSUPPORTED", "not implemented yet");
  }
  async read(_path: string, _options?: ReadOptions): Promise<ReadResult> {
    throw new CcbError("UNSUPPORTED", "not implemented yet");
  }
  async write(_path: string, _content: string | Uint8Array, _options?: WriteOptions): Promise<WriteResult> {
    throw new CcbError("UNSUPPORTED", "not implemented yet");
  }
  async delete(_path: string, _options?: { recursive?: boolean; expectedVersion?: string; signal?: AbortSignal }): Promise<{ path: string; deleted: "file" | "directory" }> {
    throw new CcbError("UNSUPPORTED", "not implemented yet");
  }
  async move(_from: string, _to: string, _options?: { overwrite?: boolean; signal?: AbortSignal }): Promise<{ from: string; to: string }> {
    throw new CcbError("UNSUPPORTED", "not implemented yet");
  }
}
