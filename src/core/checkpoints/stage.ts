import { createHash } from "node:crypto";
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readlinkSync,
  readSync,
  realpathSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { join, sep } from "node:path";
import { deflateSync } from "node:zlib";
import { type Dir, lstatAt, openDirAt, openDirPath, PROC_FD } from "../files/safe/dir.ts";
import type { ShadowRepo } from "./shadow.ts";

/**
 * Putting changed paths into a shadow index without git ever reading the workspace by path.
 *
 * `git add` opens each file by its path below the root; a directory of the root swapped for a
 * symlink to somewhere else between git's check and its open (a race another process can win)
 * would make it record what lies outside. Here every path is opened the way the file service
 * does (core/files/safe/dir.ts): each directory component relative to the previous handle with
 * `O_NOFOLLOW`, the file itself `O_NOFOLLOW` and fstat-verified. git then hashes the already open
 * file through `/proc/<our pid>/fd/<n>` (one `hash-object --stdin-paths` for a batch of them),
 * which names that open file and nothing else, and the entries go in with one
 * `update-index --index-info`. A path whose directory is not a real directory at that moment is
 * recorded as gone: whatever is recorded is some state of the inside, never of the outside.
 * Without /proc (macOS, BSD) the handle's path is used, as the file service does there.
 *
 * A few paths (a tool call's, a one-file change found by a scan) are read whole through that same
 * handle and hashed here instead: their blob ids are git's (SHA-1 of `blob <size>\0` and the
 * content) and the blobs are written as git's own loose objects (zlib, `objects/xx/…`, written to
 * a temporary file and renamed), which saves a git process per record.
 */

const BINARY_PROBE = 8000;
const O_FILE = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/** Files held open at once while git hashes them. */
const BATCH = 2000;
const ZERO = "0".repeat(40);

/** Paths hashed here rather than by a `git hash-object` (more than this: one git for the batch). */
const HASH_HERE = 64;

type Entry =
  | { rel: string; kind: "gone" }
  | { rel: string; kind: "dir" }
  | { rel: string; kind: "file"; fd: number; exec: boolean }
  | { rel: string; kind: "link"; target: string };

/** An index entry as staged: its mode and blob id, or `mode` null when the path is not recorded (gone, a directory, over the limits). */
export type Staged = { rel: string; mode: "100644" | "100755" | "120000"; oid: string } | { rel: string; mode: null };

/** A path's index entry as one comparable string ("<mode> <oid>"), or null when it has none. */
export function entryKey(s: Staged): string | null {
  return s.mode === null ? null : `${s.mode} ${s.oid}`;
}

/** What `rel` is now, looked up beneath `root` without following any symlink; undefined when it is not recordable. */
function look(root: string, rel: string, maxBytes: number): Entry | undefined {
  const parts = rel.split("/");
  const name = parts.pop() as string;
  let dir: Dir | undefined;
  try {
    try {
      dir = openDirPath(root);
      for (const p of parts) {
        const child = openDirAt(dir, p);
        dir.close();
        dir = child;
      }
    } catch {
      return { rel, kind: "gone" }; // a component is missing, a symlink or not a directory
    }
    let st: ReturnType<typeof lstatAt>;
    try {
      st = lstatAt(dir, name);
    } catch {
      return { rel, kind: "gone" };
    }
    if (!st) return { rel, kind: "gone" };
    if (st.isSymbolicLink()) {
      try {
        return { rel, kind: "link", target: readlinkSync(dir.at(name), "utf8") };
      } catch {
        return { rel, kind: "gone" };
      }
    }
    if (st.isDirectory()) return { rel, kind: "dir" }; // what is below it is listed on its own
    if (!st.isFile()) return undefined;
    let fd: number;
    try {
      fd = openSync(dir.at(name), O_FILE);
    } catch {
      return { rel, kind: "gone" };
    }
    const fst = fstatSync(fd);
    if (!fst.isFile() || fst.size > maxBytes || looksBinary(fd, fst.size)) {
      closeSync(fd);
      return undefined;
    }
    return { rel, kind: "file", fd, exec: (fst.mode & 0o111) !== 0 };
  } finally {
    dir?.close();
  }
}

/**
 * Whether a tool that writes `rel` beneath `root` can only change that path: true unless some
 * component of it is a symlink that leads into a root (or nowhere yet), through which the file
 * service would write somewhere else inside. A symlink that leads outside every root does not count:
 * the file service refuses to write through it, and so the path stays the only one that can change
 * (a directory swapped for such a link between this look and the write changes nothing else).
 */
export function plainPath(root: string, rel: string, roots: readonly string[]): boolean {
  const parts = rel.split("/");
  let dir: Dir | undefined;
  try {
    dir = openDirPath(root);
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i] as string;
      const st = lstatAt(dir, p);
      if (!st) return true; // made with its parents: nothing to follow yet
      if (st.isSymbolicLink()) return !leadsInside(join(root, ...parts.slice(0, i + 1)), roots);
      if (i === parts.length - 1 || !st.isDirectory()) return true;
      const child = openDirAt(dir, p);
      dir.close();
      dir = child;
    }
    return true;
  } catch {
    return false;
  } finally {
    dir?.close();
  }
}

function leadsInside(link: string, roots: readonly string[]): boolean {
  let real: string;
  try {
    real = realpathSync(link);
  } catch {
    return true; // dangling: it may lead inside once its target exists
  }
  return roots.some((r) => real === r || real.startsWith(r.endsWith(sep) ? r : `${r}${sep}`));
}

function looksBinary(fd: number, size: number): boolean {
  const buf = Buffer.alloc(Math.min(BINARY_PROBE, size));
  let n = 0;
  try {
    n = readSync(fd, buf, 0, buf.length, 0);
  } catch {
    return true;
  }
  return buf.subarray(0, n).includes(0);
}

/**
 * What `rel` is now as an index entry, its blob written to the store (the few paths of a tool call):
 * "dir" when it is a directory (its files are not looked at here).
 */
export function snapshot(repo: ShadowRepo, rel: string, maxBytes: number): Staged | "dir" {
  const e = look(repo.root, rel, maxBytes);
  if (!e || e.kind === "gone") return { rel, mode: null };
  if (e.kind === "dir") return "dir";
  if (e.kind === "link") return { rel, mode: "120000", oid: writeBlob(repo.gitDir, Buffer.from(e.target, "utf8")) };
  try {
    const data = readAll(e.fd, maxBytes);
    if (!data) return { rel, mode: null }; // it grew past the limit since the fstat
    return { rel, mode: e.exec ? "100755" : "100644", oid: writeBlob(repo.gitDir, data) };
  } finally {
    closeSync(e.fd);
  }
}

/** The whole content of an open file, or undefined when it is larger than `max`. */
function readAll(fd: number, max: number): Buffer | undefined {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const buf = Buffer.allocUnsafe(Math.min(max + 1 - total, 64 * 1024) || 1);
    const n = readSync(fd, buf, 0, buf.length, total);
    if (n === 0) break;
    chunks.push(buf.subarray(0, n));
    total += n;
    if (total > max) return undefined;
  }
  return Buffer.concat(chunks, total);
}

/** Whether the store's objects are SHA-1 (git's default and every store ccb made): blobs can be hashed here. */
export function sha1Store(gitDir: string): boolean {
  try {
    return !/^\s*objectformat\s*=/im.test(readFileSync(join(gitDir, "config"), "utf8"));
  } catch {
    return false;
  }
}

/** git's id of a blob, and the blob written as a loose object when the store lacks it. */
function writeBlob(gitDir: string, data: Buffer): string {
  const header = Buffer.from(`blob ${data.length}\0`, "utf8");
  const oid = createHash("sha1").update(header).update(data).digest("hex");
  const dir = join(gitDir, "objects", oid.slice(0, 2));
  const file = join(dir, oid.slice(2));
  if (existsSync(file)) return oid;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = join(dir, `tmp_obj_ccb_${process.pid}_${oid.slice(2, 10)}`);
  try {
    writeFileSync(tmp, deflateSync(Buffer.concat([header, data])), { mode: 0o444, flag: "wx" });
    renameSync(tmp, file);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // not made
    }
    if (!existsSync(file)) throw err;
  }
  return oid;
}

/** `update-index --index-info` lines (`-z`) that set these entries: mode 0 removes one. */
export function indexInfo(entries: readonly Staged[]): string {
  return entries.map((e) => (e.mode === null ? `0 ${ZERO}\t${e.rel}\0` : `${e.mode} ${e.oid}\t${e.rel}\0`)).join("");
}

/**
 * Set the shadow index entries of `rels` to what they are now: added or updated, removed when gone,
 * removed too when over the limits (large, binary, not a file: unrecorded, as if ignored). git
 * hashes them in batches (each file held open only for its batch) and the index is written once.
 */
export async function stagePaths(
  repo: ShadowRepo,
  rels: readonly string[],
  maxBytes: number,
  /** Entries set first (the entries of `rels` follow and win). */
  before: readonly Staged[] = [],
): Promise<Staged[]> {
  const staged =
    rels.length <= HASH_HERE && sha1Store(repo.gitDir)
      ? rels.map((rel) => {
          const s = snapshot(repo, rel, maxBytes);
          return s === "dir" ? { rel, mode: null } : s;
        })
      : await hashByGit(repo, rels, maxBytes);
  if (staged.length + before.length === 0) return staged;
  // --index-info adds, replaces (a file where a directory was, and back) and, with mode 0, removes.
  await repo.git(["update-index", "-z", "--index-info"], { input: indexInfo([...before, ...staged]) });
  return staged;
}

/** Many paths: git hashes the open files in batches (each file held open only for its batch). */
async function hashByGit(repo: ShadowRepo, rels: readonly string[], maxBytes: number): Promise<Staged[]> {
  const tmp = join(repo.gitDir, "ccb-links");
  const out: Staged[] = [];
  for (let i = 0; i < rels.length; i += BATCH) {
    const entries = rels
      .slice(i, i + BATCH)
      .map((rel) => look(repo.root, rel, maxBytes) ?? { rel, kind: "gone" as const });
    try {
      const hashed = entries.filter((e) => e.kind === "file" || e.kind === "link");
      let shas: string[] = [];
      if (hashed.length > 0) {
        const names = hashed.map((e, k) => {
          if (e.kind === "file") return PROC_FD ? `/proc/${process.pid}/fd/${e.fd}` : join(repo.root, e.rel);
          // A link is recorded as its target text (git's way), hashed from a private file.
          mkdirSync(tmp, { recursive: true, mode: 0o700 });
          const f = join(tmp, String(k));
          writeFileSync(f, e.kind === "link" ? e.target : "", { mode: 0o600 });
          return f;
        });
        const r = await repo.git(["hash-object", "-w", "--no-filters", "--stdin-paths"], {
          input: `${names.join("\n")}\n`,
        });
        shas = r.stdout.toString("utf8").trim().split("\n");
        if (shas.length !== hashed.length || !shas.every((s) => /^[0-9a-f]{40,64}$/.test(s)))
          throw new Error("git hash-object did not name every file");
      }
      let k = 0;
      for (const e of entries) {
        if (e.kind === "file") out.push({ rel: e.rel, mode: e.exec ? "100755" : "100644", oid: shas[k++] as string });
        else if (e.kind === "link") out.push({ rel: e.rel, mode: "120000", oid: shas[k++] as string });
        else out.push({ rel: e.rel, mode: null });
      }
    } finally {
      for (const e of entries) if (e.kind === "file") closeSync(e.fd);
    }
  }
  return out;
}
