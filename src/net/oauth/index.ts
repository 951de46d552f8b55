import { CcbError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import { checkIssuerUrl, discoverIssuer } from "./discovery.ts";
import { OAuthGuard } from "./guard.ts";
import { AccessTokenVerifier } from "./verifier.ts";

export type { OAuthGuard } from "./guard.ts";
export { mountProtectedResourceMetadata } from "./metadata.ts";

/** How a listener is made an OAuth 2.1 resource server (serve's --oauth-* flags). */
export interface OAuthOptions {
  /** Trusted authorization servers (issuer identifiers). */
  issuers: readonly string[];
  /** The `aud` tokens must carry; default the resource identifier (base + path). */
  audience?: string | undefined;
  /** ccb's client credentials at the (first) issuer offering RFC 7662 introspection, for opaque tokens. */
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  /** Least time between two JWKS fetches caused by an unknown `kid` (default 30 s). */
  jwksCooldownMs?: number | undefined;
}

/**
 * Read every issuer's metadata (a startup error names the one that cannot be reached or is
 * misconfigured) and return the guard an EdgePolicy uses as its `oauth` credential.
 */
export async function openResourceServer(
  o: OAuthOptions & {
    base: () => string;
    path: string;
    scopes: readonly string[];
    challengeScope: string;
    name: string;
    log: Logger;
    fetch?: typeof fetch;
  },
): Promise<OAuthGuard> {
  if (o.issuers.length === 0) throw new CcbError("CONFIG_INVALID", "--oauth-issuer needs at least one issuer URL.");
  const issuers = [...new Set(o.issuers.map((i) => checkIssuerUrl(i)))];
  if (Boolean(o.clientId) !== Boolean(o.clientSecret)) {
    throw new CcbError(
      "CONFIG_INVALID",
      "Token introspection needs both --oauth-client-id (CCB_OAUTH_CLIENT_ID) and the secret in CCB_OAUTH_CLIENT_SECRET (or CCB_OAUTH_CLIENT_SECRET_FILE).",
    );
  }
  if (o.audience !== undefined && o.audience.trim() === "") {
    throw new CcbError("CONFIG_INVALID", "--oauth-audience must not be empty.");
  }
  const metadata = await Promise.all(issuers.map((i) => discoverIssuer(i, o.fetch)));
  const introspection =
    o.clientId && o.clientSecret ? { clientId: o.clientId, clientSecret: o.clientSecret } : undefined;
  if (introspection && !metadata.some((m) => m.introspectionEndpoint)) {
    throw new CcbError(
      "CONFIG_INVALID",
      "Introspection client credentials are set, but no --oauth-issuer publishes an introspection_endpoint.",
    );
  }
  if (!introspection && !metadata.some((m) => m.jwksUri)) {
    throw new CcbError(
      "CONFIG_INVALID",
      "No --oauth-issuer publishes a jwks_uri, so JWT access tokens cannot be checked.",
      {
        hint: "For opaque tokens, give ccb client credentials for introspection (--oauth-client-id, CCB_OAUTH_CLIENT_SECRET).",
      },
    );
  }
  let guard: OAuthGuard | undefined;
  const verifier = new AccessTokenVerifier({
    issuers: metadata,
    audience: () => o.audience ?? (guard as OAuthGuard).resource(),
    introspection,
    ...(o.jwksCooldownMs !== undefined ? { jwksCooldownMs: o.jwksCooldownMs } : {}),
    ...(o.fetch ? { fetch: o.fetch } : {}),
  });
  guard = new OAuthGuard({
    verifier,
    base: o.base,
    path: o.path,
    issuers,
    scopes: o.scopes,
    challengeScope: o.challengeScope,
    name: o.name,
    log: o.log,
  });
  return guard;
}
