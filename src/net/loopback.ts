import { isIP } from "node:net";

/**
 * The one definition of "loopback" for every listener and check: `localhost`, the IPv4 loopback
 * block 127.0.0.0/8 and `::1` (with or without brackets). Names such as `127.0.0.1.evil.com` are not.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, "");
  if (h === "localhost" || h === "::1") return true;
  return isIP(h) === 4 && h.startsWith("127.");
}

/** The names a loopback client uses in a Host header (and that NO_PROXY should list). */
export const LOOPBACK_NAMES: readonly string[] = ["127.0.0.1", "localhost", "::1"];

/** `host` as it appears in a Host header or URL authority: IPv6 literals in brackets. */
export function hostForUrl(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}

/** A bind address that listens on every interface. */
export function isWildcardHost(host: string): boolean {
  return host === "0.0.0.0" || host === "::" || host === "[::]";
}
