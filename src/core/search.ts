import type { Workspace } from "./workspace.ts";
import { CcbError } from "./errors.ts";

// OWNER: search helper. Skeleton: signatures are the contract other parts code against.

export interface SearchOptions {
  query: string;
  /** Treat query as a regular expression (default false: literal). */
  regex?: boolean;
  caseSensitive?: boolean;
  /** Folder or file to search (default: all roots). */
  path?: string;
  include?: string[];
  exclude?: string[];
  respectGitignore?: boolean;
  includeHidden?: boolean;
  contextLines?: number;
  maxResults?: number;
  signal?: AbortSignal;
}
export interface SearchMatch {
  path: string;
  line: number;
  column: number;
  text: string;
  before?: string[];
  after?: string[];
}
export interface SearchResult {
  matches: SearchMatch[];
  /** True when maxResults (or another cap) cut the result: callers must say so. */
  truncated: boolean;
  filesSearched?: number;
  engine: "ripgrep" | "js";
}

export class SearchService {
  constructor(readonly workspace: Workspace, readonly options: { rgPath?: string | null } = {}) {}

  async search(_options: SearchOptions): Promise<SearchResult> {
    throw new CcbError("UNSUPPORTED", "not implemented yet");
  }
}
