import { isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { CcbError, throwIfAborted, toCcbError } from "../errors.ts";
import { assertSingleLink } from "../workspace.ts";
import type { Dir } from "./safe/dir.ts";

/** Files up to this size are read whole (line ranges need that); larger ones only by byte range. */
export const WHOLE_READ_CAP = 64 * 1024 * 1024;
/** Default cap on the content returned by one read. */
export const DEFAULT_MAX_BYTES = 256 * 1024;

export function sha256(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Files up to this size are opened, read and closed synchronously (see readSmallRegular). */
export const SYNC_READ_MAX = 256 * 1024;

const O_READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

function openRefused(err: unknown, display: string): CcbError {
  if ((err as NodeJS.ErrnoException).code === "ELOOP") {
    return new CcbError("PATH_OUTSIDE_WORKSPACE", `Refusing to follow a symlink swapped in at ${display}.`, {
      hint: "Retry; the path changed while it was being read.",
    });
  }
  return toCcbError(err, display);
}

/** Throws unless `st` is a regular file with one link. */
function assertReadable(st: Stats, display: string): void {
  if (st.isDirectory()) {
    throw new CcbError("IS_DIRECTORY", `Is a directory: ${display}`, { hint: "Use {{list}} to see its entries." });
  }
  if (!st.isFile()) {
    throw new CcbError("INVALID_ARGUMENT", `Not a regular file: ${display}`, {
      hint: "Only regular files can be read (not FIFOs, sockets or devices).",
    });
  }
  assertSingleLink(st, display);
}

/**
 * Open entry `name` of the verified directory handle `dir` for reading, without following a
 * symlink and without blocking on FIFOs; fstat-verified as a regular file with one link before
 * any byte is read.
 */
export async function openRegular(dir: Dir, name: string, display: string): Promise<{ fh: FileHandle; st: Stats }> {
  let fh: FileHandle;
  try {
    fh = await open(dir.at(name), O_READ);
  } catch (err) {
    throw openRefused(err, display);
  }
  try {
    const st = await fh.stat();
    assertReadable(st, display);
    return { fh, st };
  } catch (err) {
    await fh.close();
    throw err;
  }
}

/**
 * The whole content of entry `name` of `dir` when it is a regular file with one link of at most
 * `max` bytes (by fstat), opened as openRegular does and read synchronously: a small read costs a
 * few microseconds of system calls, where the asynchronous open/fstat/read/read/close are five
 * round trips through the thread pool. Undefined when the file is larger (use openRegular then).
 * Reads until end of file, so a file that grew since fstat is read whole.
 */
export function readSmallRegular(dir: Dir, name: string, display: string, max = SYNC_READ_MAX): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(dir.at(name), O_READ);
  } catch (err) {
    throw openRefused(err, display);
  }
  try {
    const st = fstatSync(fd);
    assertReadable(st, display);
    if (st.size > max) return undefined;
    const chunks: Buffer[] = [];
    let buf = Buffer.allocUnsafe(st.size + 1);
    let total = 0;
    for (;;) {
      if (total === buf.length) {
        chunks.push(buf);
        buf = Buffer.allocUnsafe(Math.max(buf.length, 64 * 1024));
        total = 0;
      }
      const n = readSync(fd, buf, total, buf.length - total, null);
      if (n === 0) break;
      total += n;
    }
    chunks.push(buf.subarray(0, total));
    return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
  } finally {
    closeSync(fd);
  }
}

/** Read the whole file (size known from fstat; tolerates growth while reading). */
export async function readAll(fh: FileHandle, size: number, signal?: AbortSignal): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  let buf = Buffer.allocUnsafe(Math.max(size, 1) + 1);
  for (;;) {
    throwIfAborted(signal);
    if (total === buf.length) {
      chunks.push(buf);
      buf = Buffer.allocUnsafe(1024 * 1024);
      total = 0;
    }
    const { bytesRead } = await fh.read(buf, total, buf.length - total, null);
    if (bytesRead === 0) break;
    total += bytesRead;
  }
  chunks.push(buf.subarray(0, total));
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
}

/** SHA-256 of a file too large to hold, streaming. */
export async function hashStream(fh: FileHandle, signal?: AbortSignal): Promise<{ version: string; size: number }> {
  const hash = createHash("sha256");
  const buf = Buffer.allocUnsafe(4 * 1024 * 1024);
  let size = 0;
  let pos = 0;
  for (;;) {
    throwIfAborted(signal);
    const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
    if (bytesRead === 0) break;
    hash.update(buf.subarray(0, bytesRead));
    pos += bytesRead;
    size += bytesRead;
  }
  return { version: hash.digest("hex"), size };
}

/** Binary heuristic: a NUL byte in the first 8 KiB, or bytes that are not valid UTF-8. */
export function looksBinary(data: Uint8Array): boolean {
  const head = data.subarray(0, 8192);
  if (head.includes(0)) return true;
  return !isUtf8(data);
}

/** Number of lines: newline count, plus one for a last line without a newline. */
export function countLines(data: Uint8Array): number {
  if (data.length === 0) return 0;
  let n = 0;
  let i = -1;
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  while ((i = b.indexOf(10, i + 1)) !== -1) n++;
  return data[data.length - 1] === 10 ? n : n + 1;
}

/** Byte offsets [start, end) of lines `startLine..endLine` (1-based, inclusive). */
export function lineSpan(data: Buffer, startLine: number, endLine: number): { start: number; end: number } {
  const start = skipLines(data, 0, startLine - 1);
  return { start, end: skipLines(data, start, endLine - startLine + 1) };
}

/** The offset `count` lines after `pos` (past each line's newline), or the end of `data`. */
function skipLines(data: Buffer, pos: number, count: number): number {
  for (let n = 0; n < count && pos < data.length; n++) {
    const nl = data.indexOf(10, pos);
    if (nl === -1) return data.length;
    pos = nl + 1;
  }
  return pos;
}

/** Cut `data` to at most `max` bytes, not inside a UTF-8 sequence (and at a line end when one is near). */
export function cutUtf8(data: Buffer, max: number): Buffer {
  if (data.length <= max) return data;
  let end = max;
  while (end > 0 && ((data[end] as number) & 0xc0) === 0x80) end--;
  const nl = data.lastIndexOf(10, end - 1);
  if (nl >= 0 && end - nl < 4096) end = nl + 1;
  return data.subarray(0, end);
}
