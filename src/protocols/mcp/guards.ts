import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isIP } from "node:net";

/** Pure request guards of the HTTP gateway: Host (DNS rebinding), Origin, bearer token. */

const LOOPBACK_NAMES = ["127.0.0.1", "localhost", "[::1]"];

export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "");
  if (h === "localhost" || h === "::1") return true;
  return isIP(h) === 4 && h.startsWith("127.");
}

/** `host` as it appears in a Host header / URL authority: IPv6 literals in brackets. */
export function hostForUrl(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}

/**
 * The Host headers a server bound to `boundHost:port` answers: the loopback names with the port,
 * the bound host with the port, plus any extra `host[:port]` the embedder allows (e.g. a public URL).
 */
export class HostAllowList {
  readonly #allowed = new Set<string>();
  #port = 0;
  #boundHost: string;
  readonly #extra: string[] = [];
  readonly #defaultPort: number;

  constructor(boundHost: string, tls: boolean) {
    this.#boundHost = boundHost;
    this.#defaultPort = tls ? 443 : 80;
  }

  /** Called once the port is known (port 0 binds a free one). */
  setPort(port: number): void {
    this.#port = port;
    this.#rebuild();
  }

  /** Also accept this `host` or `host:port` (lower-cased; without a port, the server's port). */
  allow(hostOrAuthority: string): void {
    this.#extra.push(hostOrAuthority.toLowerCase());
    this.#rebuild();
  }

  #rebuild(): void {
    this.#allowed.clear();
    const names = [...LOOPBACK_NAMES, hostForUrl(this.#boundHost).toLowerCase()];
    for (const n of names) {
      if (n === "[::]" || n === "0.0.0.0") continue;
      this.#allowed.add(`${n}:${this.#port}`);
    }
    for (const e of this.#extra) this.#allowed.add(hasPort(e) ? e : `${e}:${this.#port}`);
  }

  /** Whether a Host header value is acceptable. A missing Host is not. */
  check(hostHeader: string | undefined): boolean {
    if (!hostHeader) return false;
    const h = hostHeader.trim().toLowerCase();
    const authority = hasPort(h) ? h : `${h}:${this.#defaultPort}`;
    return this.#allowed.has(authority);
  }

  /** Origins of pages served by this server itself (same origin is never a cross-site request). */
  sameOrigins(scheme: "http" | "https"): string[] {
    return [...this.#allowed].map((a) => `${scheme}://${a}`);
  }
}

function hasPort(authority: string): boolean {
  return /:\d+$/.test(authority) && !/^\[[^\]]*\]$/.test(authority);
}

/** Normalise an Origin value for comparison (scheme and host lower-cased, default ports dropped). */
export function normaliseOrigin(origin: string): string {
  try {
    const u = new URL(origin);
    return `${u.protocol}//${u.host}`.toLowerCase();
  } catch {
    return origin.trim().toLowerCase();
  }
}

/** Constant-time bearer check: parse `Authorization: Bearer <token>`, compare after a length check. */
export function bearerMatches(authorization: string | undefined, expected: string): boolean {
  if (!authorization) return false;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
  if (!m) return false;
  const given = Buffer.from(m[1] as string, "utf8");
  const want = Buffer.from(expected, "utf8");
  if (given.length !== want.length) return false;
  return timingSafeEqual(given, want);
}

/** A JSON-RPC error as an HTTP response (id null: the request was not read or not trusted). */
export function sendJsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } });
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...headers });
  res.end(body);
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), "cache-control": "no-store", ...headers });
  res.end(body);
}

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`Request body too large: the limit is ${limit} bytes.`);
  }
}

/** Read a request body up to `limit` bytes; rejects with BodyTooLargeError beyond it. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"]);
    if (Number.isFinite(declared) && declared > limit) {
      reject(new BodyTooLargeError(limit));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      if (err) reject(err);
      else resolve(Buffer.concat(chunks, size));
    };
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        finish(new BodyTooLargeError(limit));
        return;
      }
      chunks.push(c);
    };
    const onEnd = () => finish();
    const onError = (e: Error) => finish(e);
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
}
