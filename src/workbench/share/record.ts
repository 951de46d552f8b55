import { createHash, randomBytes } from "node:crypto";
import { realpathSync } from "node:fs";
import { chmod, lstat, mkdir, readdir, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { z } from "zod";
import { CcbError } from "../../core/errors.ts";
import { acquireLockFile } from "../../core/lock-file.ts";
import { pidRunning } from "../../core/pid.ts";
import { stateDir } from "../../util/paths.ts";

/**
 * The discovery record of a shared workbench: `<state>/ccb/workbenches/<key>.json`, mode 0600 in a
 * 0700 folder owned by the user (checked, never followed through a symlink). `key` is a hash of the
 * real paths of the roots, in order, so every front end for the same roots finds the same record.
 * It says how to reach the owner's loopback gateway and the attach secret.
 */

export const ShareRecord = z.object({
  /** 2: the secret is proven on the attach channel (handshake.ts), never sent; 1 sent it as a bearer token. */
  version: z.literal(2),
  /** Distinguishes one publication from the next (a stale record is removed only if it is still this one). */
  instance: z.string().min(16),
  pid: z.number().int().positive(),
  frontEnd: z.string(),
  roots: z.array(z.string()).min(1),
  /** The owner's loopback gateway, e.g. http://127.0.0.1:43123. */
  gatewayUrl: z.string().regex(/^http:\/\/127\.0\.0\.1:\d+$/),
  /** The attach secret: both sides prove they know it (handshake.ts); it never leaves this file and the owner's memory. */
  secret: z.string().min(32),
  startedAt: z.number(),
});
export type ShareRecord = z.infer<typeof ShareRecord>;

/** The attach channel, also asked for the status and a fresh one-time link (`ccb workbench status`, `link`). */
export const ATTACH_PATH = "/workbench/attach";

/** The real paths of the roots (a root that does not exist yet keeps its absolute path). */
export function realRoots(roots: readonly string[]): string[] {
  return roots.map((r) => {
    const abs = resolve(r);
    try {
      return realpathSync(abs);
    } catch {
      return abs;
    }
  });
}

export function shareKey(roots: readonly string[]): string {
  return createHash("sha256")
    .update(JSON.stringify(realRoots(roots)))
    .digest("hex")
    .slice(0, 32);
}

export function recordsDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDir(env), "workbenches");
}

export function recordPath(key: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(recordsDir(env), `${key}.json`);
}

/** Create (0700) and check the records folder: a directory, owned by this user, nobody else may enter. */
export async function ensureRecordsDir(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const dir = recordsDir(env);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const st = await lstat(dir);
  const uid = process.getuid?.();
  if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) {
    throw new CcbError("PERMISSION_DENIED", `The workbench records folder ${dir} is not a directory owned by you.`, {
      hint: `Remove ${dir} and retry.`,
    });
  }
  if ((st.mode & 0o077) !== 0) await chmod(dir, 0o700);
  return dir;
}

/** The record of `key`, or undefined when there is none or it is unreadable/malformed. */
export async function readRecord(key: string, env: NodeJS.ProcessEnv = process.env): Promise<ShareRecord | undefined> {
  let text: string;
  try {
    const path = recordPath(key, env);
    const st = await lstat(path);
    const uid = process.getuid?.();
    if (!st.isFile() || (uid !== undefined && st.uid !== uid)) return undefined;
    text = await readFile(path, "utf8");
  } catch {
    return undefined;
  }
  try {
    const r = ShareRecord.safeParse(JSON.parse(text));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

/** Write the record atomically (a 0600 temp file renamed into place). Call with the share lock held. */
export async function writeRecord(
  key: string,
  record: ShareRecord,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const dir = await ensureRecordsDir(env);
  const tmp = join(dir, `.${key}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  await writeFile(tmp, `${JSON.stringify(record)}\n`, { mode: 0o600, flag: "wx" });
  await chmod(tmp, 0o600);
  await rename(tmp, recordPath(key, env));
}

/** Remove the record of `key` if it is still the publication `instance`. */
export async function removeRecord(key: string, instance: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const cur = await readRecord(key, env);
  if (cur?.instance === instance) await unlink(recordPath(key, env)).catch(() => undefined);
}

/**
 * Whether the record's owner runs: it exists and is neither a zombie (dead, its parent has not
 * reaped it: a suspended `ccb ide` that spawned the host) nor stopped (SIGSTOP, Ctrl-Z). A dead or
 * stopped owner's port may be someone else's by now; the handshake (handshake.ts) refuses such a
 * listener anyway, this spares the attempt and lets a front end start a new host at once.
 */
export function ownerAlive(record: ShareRecord): boolean {
  return pidRunning(record.pid);
}

/** Whether a live front end publishes a workbench for `roots` (one file read; for attach-only front ends that look again). */
export async function workbenchPublished(
  roots: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<boolean> {
  const record = await readRecord(shareKey(roots), env);
  return record !== undefined && ownerAlive(record);
}

/** Every readable record (for `ccb workbench status`), with its key. */
export async function listRecords(
  env: NodeJS.ProcessEnv = process.env,
): Promise<Array<{ key: string; record: ShareRecord }>> {
  let names: string[];
  try {
    names = await readdir(recordsDir(env));
  } catch {
    return [];
  }
  const out: Array<{ key: string; record: ShareRecord }> = [];
  for (const n of names.sort()) {
    const m = /^([0-9a-f]{32})\.json$/.exec(n);
    if (!m) continue;
    const record = await readRecord(m[1] as string, env);
    if (record) out.push({ key: m[1] as string, record });
  }
  return out;
}

/**
 * The lock around check-then-publish of one record: `<key>.lock` beside it, created atomically
 * (a fully written temp file linked into place: EEXIST while held). A lock whose holder pid is
 * gone, or older than `staleMs`, is broken. Living beside the records (not in a temp folder) makes
 * every front end of the user meet the same lock whatever its TMPDIR.
 */
export async function lockRecord(
  key: string,
  env: NodeJS.ProcessEnv = process.env,
  o: { timeoutMs?: number; staleMs?: number } = {},
): Promise<() => Promise<void>> {
  const dir = await ensureRecordsDir(env);
  const lockPath = join(dir, `${key}.lock`);
  return acquireLockFile(lockPath, {
    timeoutMs: o.timeoutMs ?? 60_000,
    staleMs: o.staleMs ?? 30_000,
    timeoutError: () =>
      new CcbError("TIMEOUT", "Timed out waiting for the lock of the shared workbench record.", {
        hint: `Retry; if it persists, remove ${lockPath}.`,
      }),
  });
}
