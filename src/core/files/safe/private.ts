import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, readdirSync, unlinkSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { CcbError } from "../../errors.ts";
import { pidAlive } from "../../pid.ts";

/**
 * ccb's private scratch folders, outside every workspace: `<tmpdir>/ccb-<uid>/{locks,tmp}`, mode
 * 0700 and owned by the user (checked, never followed through a symlink). Write locks live in
 * `locks/` (so every ccb process of the user finds the same lock for the same file) and temp
 * files of atomic writes in `tmp/` when it is on the target's file system (rename needs that).
 * Temp files are named `<host>-<pid>-<random>`; those of processes that died (kill -9 during a
 * write) are removed when the next file service starts.
 */

const HOST = createHash("sha256").update(hostname()).digest("hex").slice(0, 8);
const made = new Map<string, string>();

/** Make `p` (0700) if missing; whether it is a directory of this user's with no access for others, not a symlink. */
export function ownedPrivateDir(p: string): boolean {
  mkdirSync(p, { recursive: true, mode: 0o700 });
  const st = lstatSync(p);
  const uid = process.getuid?.();
  return st.isDirectory() && (uid === undefined || st.uid === uid) && (st.mode & 0o077) === 0;
}

function ensureOwnedDir(p: string): void {
  if (!ownedPrivateDir(p)) {
    throw new CcbError(
      "PERMISSION_DENIED",
      `ccb's private folder ${p} is not a directory owned by you with mode 0700.`,
      {
        hint: `Remove ${p} (or set TMPDIR to another folder) and retry.`,
      },
    );
  }
}

export function privateDir(sub: "locks" | "tmp"): string {
  const hit = made.get(sub);
  if (hit) return hit;
  const base = join(tmpdir(), `ccb-${process.getuid?.() ?? "user"}`);
  ensureOwnedDir(base);
  const dir = join(base, sub);
  ensureOwnedDir(dir);
  made.set(sub, dir);
  return dir;
}

export function tempName(random: string): string {
  return `${HOST}-${process.pid}-${random}`;
}

let swept = false;

/** Remove temp files left by dead ccb processes of this host (once per process). */
export function sweepStaleTemps(): void {
  if (swept) return;
  swept = true;
  let dir: string;
  try {
    dir = privateDir("tmp");
  } catch {
    return;
  }
  for (const name of readdirSync(dir)) {
    const m = /^([0-9a-f]{8})-(\d+)-[0-9a-f]+$/.exec(name);
    if (!m || m[1] !== HOST || pidAlive(Number(m[2]))) continue;
    try {
      unlinkSync(join(dir, name));
    } catch {
      // raced with another sweeper
    }
  }
}
