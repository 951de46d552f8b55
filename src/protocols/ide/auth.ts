import { timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

/**
 * The checks that run on the HTTP upgrade request, BEFORE any WebSocket handshake: a client that
 * fails them gets a plain HTTP error and never a 101, so no JSON-RPC is ever processed for it.
 */

export const AUTH_HEADER = "x-claude-code-ide-authorization";

export type UpgradeVerdict = { ok: true } | { ok: false; status: 400 | 401 | 403 | 426; reason: string };

/** Constant-time token comparison, after a length check. */
export function tokenMatches(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  const a = Buffer.from(presented, "utf8");
  const b = Buffer.from(expected, "utf8");
  if (a.length !== b.length) return false;
  return timingSafeEqual(a, b);
}

/** Hosts a loopback client may name: 127.0.0.1, localhost, [::1], with our port or none. */
export function hostAllowed(host: string | undefined, port: number): boolean {
  if (host === undefined) return false;
  const h = host.toLowerCase();
  for (const name of ["127.0.0.1", "localhost", "[::1]"]) {
    if (h === name || h === `${name}:${port}`) return true;
  }
  return false;
}

function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? (v.length === 1 ? v[0] : undefined) : v;
}

export function verifyUpgrade(headers: IncomingHttpHeaders, expectedToken: string, port: number): UpgradeVerdict {
  // The CLI sends no Origin; any Origin means a browser (or something pretending to be one).
  if (headers.origin !== undefined) return { ok: false, status: 403, reason: "browser origin refused" };
  if (!hostAllowed(single(headers.host), port)) return { ok: false, status: 403, reason: "foreign host refused" };
  if (!tokenMatches(single(headers[AUTH_HEADER]), expectedToken)) return { ok: false, status: 401, reason: "missing or wrong auth token" };
  const protocols = (single(headers["sec-websocket-protocol"]) ?? "").split(",").map((p) => p.trim());
  if (!protocols.includes("mcp")) return { ok: false, status: 400, reason: "the mcp subprotocol is required" };
  return { ok: true };
}
