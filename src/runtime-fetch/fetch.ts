import { createHash, type Hash } from "node:crypto";
import { createReadStream } from "node:fs";
import { open, stat, truncate } from "node:fs/promises";
import { CcbError, throwIfAborted } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";

export interface Expected {
  size: number;
  sha256: string;
}

interface ProgressEvent {
  received: number;
  total: number;
}

export interface DownloadOptions {
  url: string;
  /** A file name private to this fetch. If it already holds the first bytes (an earlier interrupted download), they are resumed. */
  dest: string;
  expected: Expected;
  signal?: AbortSignal | undefined;
  onProgress?: ((p: ProgressEvent) => void) | undefined;
  /** Abort when no bytes arrive for this long (default 60 s). */
  idleTimeoutMs?: number | undefined;
  log: Logger;
}

export interface DownloadResult {
  bytes: number;
  sha256: string;
  /** Bytes reused from an interrupted earlier download. */
  resumedBytes: number;
  finalUrl: string;
}

/** Thrown for failures after which the partial file is worth keeping (a dropped connection). */
export class ResumableError extends CcbError {}

function integrityError(
  what: "download" | "archive",
  expected: Expected,
  actual: { size: number; sha256?: string },
): CcbError {
  const tail = `the ${what} was tampered with or truncated; nothing was extracted`;
  if (actual.size !== expected.size) {
    return new CcbError(
      "INTEGRITY_FAILED",
      `Size mismatch: expected ${expected.size} bytes got ${actual.size} — ${tail}.`,
      {
        details: { expectedSize: expected.size, actualSize: actual.size },
      },
    );
  }
  return new CcbError(
    "INTEGRITY_FAILED",
    `SHA-256 mismatch: expected ${expected.sha256} got ${actual.sha256} — ${tail}.`,
    {
      details: { expectedSha256: expected.sha256, actualSha256: actual.sha256 },
    },
  );
}

/** Feed the first `length` bytes of a file into a hash. */
async function hashPrefix(file: string, length: number, hash: Hash): Promise<void> {
  if (length === 0) return;
  for await (const chunk of createReadStream(file, { start: 0, end: length - 1 })) hash.update(chunk as Buffer);
}

async function sizeOf(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch {
    return 0;
  }
}

/**
 * Download `url` into `dest`, hashing every byte as it is written. Resumes with an HTTP Range
 * request when `dest` already holds a prefix (a server answering 200 instead restarts from zero).
 * Throws INTEGRITY_FAILED when the size or SHA-256 does not match (the caller deletes `dest`), and
 * a ResumableError when the connection breaks (the caller keeps `dest` for the next run).
 */
export async function downloadVerified(o: DownloadOptions): Promise<DownloadResult> {
  throwIfAborted(o.signal);
  let have = await sizeOf(o.dest);
  if (have > o.expected.size) {
    await truncate(o.dest, 0);
    have = 0;
  }
  let hash = createHash("sha256");
  await hashPrefix(o.dest, have, hash);
  let resumedBytes = have;
  let finalUrl = o.url;

  if (have < o.expected.size) {
    const idle = new AbortController();
    const onAbort = () => idle.abort(o.signal?.reason);
    o.signal?.addEventListener("abort", onAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => idle.abort(new Error("idle timeout")), o.idleTimeoutMs ?? 60_000);
    };
    try {
      arm();
      const headers: Record<string, string> = { "accept-encoding": "identity", "user-agent": "ccb-runtime-fetch" };
      if (have > 0) headers.range = `bytes=${have}-`;
      let res: Response;
      try {
        res = await fetch(o.url, { headers, redirect: "follow", signal: idle.signal });
      } catch (err) {
        throw networkError(o, err, have);
      }
      finalUrl = res.url || o.url;
      if (have > 0 && res.status === 206 && res.headers.get("content-range")?.startsWith(`bytes ${have}-`)) {
        o.log.info(`resuming the download at ${have} of ${o.expected.size} bytes`);
      } else if (have > 0 && (res.status === 206 || res.status === 416)) {
        // A range we did not ask for, or the partial file is not a prefix: start over without one.
        await res.body?.cancel().catch(() => undefined);
        await truncate(o.dest, 0);
        return downloadVerified(o);
      } else if (res.status === 200) {
        if (have > 0) {
          o.log.info("the server does not resume downloads; starting over");
          have = 0;
          resumedBytes = 0;
          hash = createHash("sha256");
        }
      } else {
        await res.body?.cancel().catch(() => undefined);
        throw httpError(o.url, res.status);
      }
      const announced = Number(res.headers.get("content-length") ?? Number.NaN);
      if (Number.isFinite(announced) && have + announced !== o.expected.size) {
        await res.body?.cancel().catch(() => undefined);
        throw integrityError("download", o.expected, { size: have + announced });
      }
      if (!res.body) throw integrityError("download", o.expected, { size: have });
      const fh = await open(o.dest, have > 0 ? "a" : "w", 0o600);
      try {
        o.onProgress?.({ received: have, total: o.expected.size });
        const reader = res.body.getReader();
        for (;;) {
          let step: Awaited<ReturnType<typeof reader.read>>;
          try {
            step = await reader.read();
          } catch (err) {
            throw networkError(o, err, have);
          }
          if (step.done) break;
          arm();
          const chunk = step.value;
          if (have + chunk.byteLength > o.expected.size) {
            await reader.cancel().catch(() => undefined);
            throw integrityError("download", o.expected, { size: have + chunk.byteLength });
          }
          hash.update(chunk);
          await fh.write(chunk);
          have += chunk.byteLength;
          o.onProgress?.({ received: have, total: o.expected.size });
        }
      } finally {
        await fh.close();
      }
    } finally {
      clearTimeout(timer);
      o.signal?.removeEventListener("abort", onAbort);
    }
  }

  const sha256 = hash.digest("hex");
  if (have !== o.expected.size || sha256 !== o.expected.sha256) {
    throw integrityError("download", o.expected, { size: have, sha256 });
  }
  return { bytes: have, sha256, resumedBytes, finalUrl };
}

/** Copy an offline archive into `dest` while hashing it; the copy (not the user's file) is what gets extracted. */
export async function copyVerified(
  src: string,
  dest: string,
  expected: Expected,
  signal?: AbortSignal,
): Promise<DownloadResult> {
  let size: number;
  try {
    const st = await stat(src);
    if (!st.isFile()) throw new CcbError("INVALID_ARGUMENT", `Not a file: ${src}`);
    size = st.size;
  } catch (err) {
    if (err instanceof CcbError) throw err;
    throw new CcbError("NOT_FOUND", `Cannot read the offline archive ${src}: ${(err as Error).message}`, {
      hint: "Pass the downloaded .tar.gz with --from-file <path>.",
      cause: err,
    });
  }
  if (size !== expected.size) throw integrityError("archive", expected, { size });
  const hash = createHash("sha256");
  let copied = 0;
  const fh = await open(dest, "w", 0o600);
  try {
    for await (const chunk of createReadStream(src, { signal })) {
      const buf = chunk as Buffer;
      hash.update(buf);
      await fh.write(buf);
      copied += buf.byteLength;
    }
  } finally {
    await fh.close();
  }
  const sha256 = hash.digest("hex");
  if (copied !== expected.size || sha256 !== expected.sha256)
    throw integrityError("archive", expected, { size: copied, sha256 });
  return { bytes: copied, sha256, resumedBytes: 0, finalUrl: `file://${src}` };
}

function httpError(url: string, status: number): CcbError {
  if (status === 404) {
    return new CcbError("NOT_FOUND", `The runtime archive is not at ${displayUrl(url)} (HTTP 404).`, {
      hint: "Check the mirror URL: it must serve <mirror>/<release tag>/<asset file name>.",
    });
  }
  return new CcbError("RUNTIME_UNAVAILABLE", `Downloading ${displayUrl(url)} failed with HTTP ${status}.`, {
    hint: "Try again later, use a mirror (--mirror or CCB_RUNTIME_MIRROR) or an offline archive (--from-file).",
  });
}

function networkError(o: DownloadOptions, err: unknown, have: number): CcbError {
  if (o.signal?.aborted) return new CcbError("ABORTED", "The download was cancelled.", { cause: err });
  const cause =
    (err as Error)?.cause instanceof Error
      ? ((err as Error).cause as NodeJS.ErrnoException)
      : (err as NodeJS.ErrnoException);
  const reason = cause?.message;
  const code = cause?.code ?? "";
  // Nothing was received: say why the server could not be reached (no resume to speak of).
  if (
    have === 0 &&
    /^(ENOTFOUND|EAI_AGAIN|EAI_NONAME|EAI_FAIL|ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|UND_ERR_CONNECT_TIMEOUT)$/.test(
      code,
    )
  ) {
    const host = (() => {
      try {
        return new URL(o.url).host;
      } catch {
        return displayUrl(o.url);
      }
    })();
    const what = /^(ENOTFOUND|EAI_)/.test(code)
      ? `the name ${host} could not be resolved (DNS: ${code})`
      : `${host} could not be reached (${code})`;
    return new CcbError("RUNTIME_UNAVAILABLE", `Could not download the runtime: ${what}.`, {
      hint: "Check the network or proxy (HTTPS_PROXY), or use a mirror (--mirror <url>, CCB_RUNTIME_MIRROR) or an archive downloaded elsewhere (--from-file <archive>).",
      details: { unreachable: host },
      cause: err,
    });
  }
  return new ResumableError(
    "RUNTIME_UNAVAILABLE",
    `The download from ${displayUrl(o.url)} was interrupted after ${have} of ${o.expected.size} bytes (${reason ?? String(err)}).`,
    {
      hint: "Run `ccb runtime fetch` again: it resumes. Behind a firewall use --mirror <url> or --from-file <archive>.",
      cause: err,
    },
  );
}

/** A URL for messages and logs: credentials and query strings removed. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    u.search = "";
    return u.toString();
  } catch {
    return "(invalid URL)";
  }
}
