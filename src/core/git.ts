import type { Workspace } from "./workspace.ts";
import { CcbError } from "./errors.ts";

// OWNER: git helper. Skeleton: signatures are the contract other parts code against.

export interface GitStatusEntry { path: string; index: string; worktree: string; origPath?: string }
export interface GitStatus {
  repo: string;
  branch: string | null;
  upstream: string | null;
  ahead: number;
  behind: number;
  entries: GitStatusEntry[];
  clean: boolean;
}
export interface GitRunResult { exitCode: number; stdout: string; stderr: string; truncated: boolean }

export class GitService {
  constructor(readonly workspace: Workspace) {}

  async status(_options?: { path?: string; signal?: AbortSignal }): Promise<GitStatus> {
    throw new CcbError("UNSUPPORTED", "not implemented yet");
  }
  async diff(_options?: { path?: string; paths?: string[]; staged?: boolean; maxBytes?: number; signal?: AbortSignal }): Promise<{ diff: string; truncated: boolean }> {
    throw new CcbError("UNSUPPORTED", "not implemented yet");
  }
  async run(_args: string[], _options?: { cwd?: string; timeoutMs?: number; maxBytes?: number; signal?: AbortSignal }): Promise<GitRunResult> {
    throw new CcbError("UNSUPPORTED", "not implemented yet");
  }
}
