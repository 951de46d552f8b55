import { createHash, randomBytes } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, normalize, sep } from "node:path";
import { brotliCompressSync, brotliDecompressSync, constants as zlib } from "node:zlib";

/**
 * The asset pack of the compiled binary: ccb's own code (split into lazily loaded chunks) and the
 * files it reads at run time (the VS Code bridge extension), embedded in the executable and
 * unpacked on first use into `<cache>/assets/<pack sha-256>/`, every file verified by its SHA-256.
 *
 * Layout: "CCBPACK1", u32 LE header length, header JSON {files:[{path,size,sha256}]}, then the
 * brotli-compressed concatenation of the files in header order. The header stays uncompressed so a
 * start-up can verify an unpacked folder without decompressing anything.
 */
const MAGIC = "CCBPACK1";
const MARKER = ".ccb-pack.json";

export interface PackFile {
  path: string;
  size: number;
  sha256: string;
}
export interface PackHeader {
  files: PackFile[];
}

const sha256 = (b: Uint8Array): string => createHash("sha256").update(b).digest("hex");

/** Build a pack (used by scripts/compile.mjs through the bundled build helper). */
export function createPack(files: Array<{ path: string; data: Uint8Array }>): Buffer {
  const header: PackHeader = {
    files: files.map((f) => ({ path: checkPath(f.path), size: f.data.byteLength, sha256: sha256(f.data) })),
  };
  const json = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(4);
  len.writeUInt32LE(json.length);
  const body = brotliCompressSync(Buffer.concat(files.map((f) => f.data)), {
    params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_LGWIN]: 24 },
  });
  return Buffer.concat([Buffer.from(MAGIC), len, json, body]);
}

export function readPackHeader(pack: Uint8Array): { header: PackHeader; bodyOffset: number } {
  const buf = Buffer.from(pack.buffer, pack.byteOffset, pack.byteLength);
  if (buf.subarray(0, MAGIC.length).toString("latin1") !== MAGIC) throw new Error("not a ccb asset pack");
  const len = buf.readUInt32LE(MAGIC.length);
  const start = MAGIC.length + 4;
  const header = JSON.parse(buf.subarray(start, start + len).toString("utf8")) as PackHeader;
  for (const f of header.files) checkPath(f.path);
  return { header, bodyOffset: start + len };
}

/** The pack's identity: the SHA-256 of its header, which names every file's SHA-256. */
export function packId(pack: Uint8Array): string {
  const { bodyOffset } = readPackHeader(pack);
  return sha256(pack.subarray(0, bodyOffset));
}

function checkPath(p: string): string {
  const n = normalize(p);
  if (isAbsolute(p) || n !== p || n.split(sep).includes("..") || p === "" || p.startsWith(".ccb"))
    throw new Error(`bad asset path ${JSON.stringify(p)}`);
  return p;
}

/** True when every file of the header is in dir with the right size and SHA-256. */
export function verifyDir(dir: string, header: PackHeader): boolean {
  if (!existsSync(join(dir, MARKER))) return false;
  for (const f of header.files) {
    let data: Buffer;
    try {
      data = readFileSync(join(dir, f.path));
    } catch {
      return false;
    }
    if (data.length !== f.size || sha256(data) !== f.sha256) return false;
  }
  return true;
}

/** What the marker file holds: the header, and each file's inode, size and mtime when it was last hashed. */
interface Marker extends PackHeader {
  seen?: Array<[ino: number, size: number, mtimeMs: number]>;
}

function statsOf(dir: string, header: PackHeader): Marker["seen"] {
  return header.files.map((f) => {
    const st = lstatSync(join(dir, f.path));
    return [st.ino, st.size, st.mtimeMs];
  });
}

/**
 * True when the marker names the same files as `header` and every file still has the inode, size
 * and modification time it had when it was hashed: a stat per file instead of reading and hashing
 * the pack's megabytes at every start. A file written since (any write moves its mtime) or
 * replaced (a new inode) fails this, and the folder is then verified by SHA-256 again.
 */
export function statVerifyDir(dir: string, header: PackHeader): boolean {
  let marker: Marker;
  try {
    marker = JSON.parse(readFileSync(join(dir, MARKER), "utf8")) as Marker;
  } catch {
    return false;
  }
  const seen = marker.seen;
  if (
    !Array.isArray(seen) ||
    !Array.isArray(marker.files) ||
    marker.files.length !== header.files.length ||
    seen.length !== header.files.length
  )
    return false;
  for (let i = 0; i < header.files.length; i++) {
    const f = header.files[i] as PackFile;
    const m = marker.files[i];
    const s = seen[i];
    if (!m || !s || m.path !== f.path || m.size !== f.size || m.sha256 !== f.sha256) return false;
    try {
      const st = lstatSync(join(dir, f.path));
      if (!st.isFile() || st.ino !== s[0] || st.size !== f.size || st.size !== s[1] || st.mtimeMs !== s[2])
        return false;
    } catch {
      return false;
    }
  }
  return true;
}

/** After a full SHA-256 verification: record the files' stats so the next start can check them by stat. */
function recordVerified(dir: string, header: PackHeader): void {
  const tmp = join(dir, `${MARKER}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`);
  try {
    writeFileSync(tmp, JSON.stringify({ ...header, seen: statsOf(dir, header) } satisfies Marker));
    renameSync(tmp, join(dir, MARKER));
  } catch {
    rmSync(tmp, { force: true });
  }
}

/**
 * Unpack into `<root>/<id>` unless a verified copy is there (checked by stat against the record
 * written when its files were hashed, else by SHA-256). Written beside and renamed into
 * place, so a concurrent start never sees half a folder; a corrupted copy is replaced.
 */
export function materializePack(pack: Uint8Array, root: string): string {
  const { header, bodyOffset } = readPackHeader(pack);
  const dir = join(root, packId(pack));
  if (statVerifyDir(dir, header)) return dir;
  if (verifyDir(dir, header)) {
    recordVerified(dir, header);
    return dir;
  }
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const body = brotliDecompressSync(pack.subarray(bodyOffset));
  const tmp = `${dir}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    let at = 0;
    for (const f of header.files) {
      const data = body.subarray(at, at + f.size);
      at += f.size;
      if (data.length !== f.size || sha256(data) !== f.sha256)
        throw new Error(`asset ${f.path} does not match its SHA-256`);
      mkdirSync(dirname(join(tmp, f.path)), { recursive: true, mode: 0o700 });
      writeFileSync(join(tmp, f.path), data, { mode: 0o600 });
    }
    // Every file was checked against its SHA-256 above: its stats are the record later starts check.
    writeFileSync(join(tmp, MARKER), JSON.stringify({ ...header, seen: statsOf(tmp, header) } satisfies Marker));
    rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(tmp, dir);
    } catch (err) {
      // Another ccb unpacked the same pack meanwhile: use it if it verifies.
      if (!verifyDir(dir, header)) throw err;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  if (!verifyDir(dir, header)) throw new Error(`the unpacked assets in ${dir} do not verify`);
  return dir;
}

/** Unpack into ccb's cache, or a per-user temp folder when the cache cannot be written. */
export function materializeInCache(pack: Uint8Array, cacheRoot: string): string {
  try {
    return materializePack(pack, join(cacheRoot, "assets"));
  } catch (first) {
    const uid = typeof process.getuid === "function" ? process.getuid() : "user";
    try {
      return materializePack(pack, join(tmpdir(), `ccb-${uid}`, "assets"));
    } catch {
      throw new Error(
        `cannot unpack ccb's files into ${join(cacheRoot, "assets")}: ${(first as Error).message}. Set CCB_CACHE_DIR to a writable folder.`,
      );
    }
  }
}

const KEY = Symbol.for("ccb.assets.dir");

/** Set by the compiled binary's entry once its pack is unpacked. */
export function setEmbeddedAssetDir(dir: string): void {
  (globalThis as Record<symbol, unknown>)[KEY] = dir;
}

/** The folder of the unpacked embedded assets (compiled binary only), else undefined. */
export function embeddedAssetDir(): string | undefined {
  const v = (globalThis as Record<symbol, unknown>)[KEY];
  return typeof v === "string" ? v : undefined;
}
