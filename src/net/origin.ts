/** Normalise an Origin value for comparison (scheme and host lower-cased, default ports dropped). */
export function normaliseOrigin(origin: string): string {
  try {
    const u = new URL(origin);
    return `${u.protocol}//${u.host}`.toLowerCase();
  } catch {
    return origin.trim().toLowerCase();
  }
}

/**
 * What a listener does with a browser `Origin` header:
 * - `none`: its clients are not browsers; any Origin is refused (a web page cannot drive it);
 * - `same`: no Origin, the listener's own origin (an allowed Host with the listener's scheme), or one
 *   of `allow()` (exact `scheme://host[:port]`);
 * - `any`: pages of any origin may connect (an MCP App runs at its host's origin); only allowed with
 *   an active credential, which is then the whole protection.
 */
export type OriginPolicy = { kind: "none" } | { kind: "same"; allow?: () => readonly string[] } | { kind: "any" };

export function originAllowed(
  policy: OriginPolicy,
  origin: string | undefined,
  own: { scheme: "http" | "https"; authorities: readonly string[]; extra?: readonly string[] },
): boolean {
  if (origin === undefined || policy.kind === "any") return true;
  if (policy.kind === "none") return false;
  const o = normaliseOrigin(origin);
  const same = own.authorities.map((a) => normaliseOrigin(`${own.scheme}://${a}`));
  const listed = [...(policy.allow?.() ?? []), ...(own.extra ?? [])].map(normaliseOrigin);
  return same.includes(o) || listed.includes(o);
}
