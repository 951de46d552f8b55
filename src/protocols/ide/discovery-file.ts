import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { basename, join } from "node:path";
import { z } from "zod";
import { pidAlive } from "../../core/pid.ts";
import { namesIn } from "../../util/paths.ts";

/**
 * The discovery file the Claude Code CLI reads: `${CLAUDE_CONFIG_DIR:-~/.claude}/ide/<port>.lock`.
 * Folder 0700, file 0600, written atomically (exclusive temp file, then rename).
 */

export const IDE_NAME_PREFIX = "ccb";

export interface LockBody {
  pid: number;
  workspaceFolders: string[];
  ideName: string;
  transport: "ws";
  authToken: string;
  runningInWindows: boolean;
}

const LockSchema = z.object({
  pid: z.number().int(),
  workspaceFolders: z.array(z.string()),
  ideName: z.string(),
  transport: z.string().optional(),
  authToken: z.string().optional(),
  runningInWindows: z.boolean().optional(),
});

export function lockDir(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.CLAUDE_CONFIG_DIR && env.CLAUDE_CONFIG_DIR.length > 0 ? env.CLAUDE_CONFIG_DIR : join(homedir(), ".claude");
  return join(base, "ide");
}

export function lockPath(dir: string, port: number): string {
  return join(dir, `${port}.lock`);
}

/**
 * A distinct name per instance, what a person picks from in `claude`'s `/ide`: the folders, then
 * the front end (`ccb ide -- <command>` names its command) and the pid, so two in one folder differ:
 * `ccb (<folder names>) · <front end> · pid <pid>`.
 */
export function ideNameFor(folders: readonly string[], frontEnd?: { label: string; pid: number }): string {
  const names = folders.map((f) => basename(f) || f);
  const base = `${IDE_NAME_PREFIX} (${names.join(", ")})`;
  return frontEnd ? `${base} · ${frontEnd.label} · pid ${frontEnd.pid}` : base;
}

export function isCcbIdeName(name: string): boolean {
  return name === IDE_NAME_PREFIX || name.startsWith(`${IDE_NAME_PREFIX} (`);
}

export function writeLock(dir: string, port: number, body: LockBody): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const target = lockPath(dir, port);
  const tmp = join(dir, `.${port}.lock.${randomBytes(6).toString("hex")}.tmp`);
  writeFileSync(tmp, `${JSON.stringify(body)}\n`, { flag: "wx", mode: 0o600 });
  try {
    chmodSync(tmp, 0o600);
    renameSync(tmp, target);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // already gone
    }
    throw err;
  }
  return target;
}

/** Remove a lock file if it is still ours (same token); quiet when it is gone. */
export function removeLock(path: string, authToken: string): boolean {
  try {
    const body = LockSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
    if (body.success && body.data.authToken !== undefined && body.data.authToken !== authToken) return false;
    unlinkSync(path);
    return true;
  } catch {
    return false;
  }
}

export interface LockEntry {
  port: number;
  path: string;
  body: z.infer<typeof LockSchema>;
  alive: boolean;
}

export function readLocks(dir: string): LockEntry[] {
  const out: LockEntry[] = [];
  for (const name of namesIn(dir)) {
    const m = /^(\d+)\.lock$/.exec(name);
    if (!m) continue;
    const path = join(dir, name);
    try {
      const parsed = LockSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
      if (!parsed.success) continue;
      out.push({ port: Number(m[1]), path, body: parsed.data, alive: pidAlive(parsed.data.pid) });
    } catch {
      // unreadable or half-written: not ours to judge
    }
  }
  return out.sort((a, b) => a.port - b.port);
}

/** Remove ccb's own lock files whose process is gone. Returns the removed paths. */
export function cleanStaleLocks(dir: string): string[] {
  const removed: string[] = [];
  for (const entry of readLocks(dir)) {
    if (entry.alive || !isCcbIdeName(entry.body.ideName)) continue;
    try {
      unlinkSync(entry.path);
      removed.push(entry.path);
    } catch {
      // raced with another cleaner
    }
  }
  return removed;
}

/** ccb's running IDE servers (live pid). */
export function runningServers(dir: string): LockEntry[] {
  return readLocks(dir).filter((e) => e.alive && isCcbIdeName(e.body.ideName));
}
