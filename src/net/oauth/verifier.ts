import { createHash } from "node:crypto";
import {
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
} from "jose";
import type { IssuerMetadata } from "./discovery.ts";

/**
 * The identity of a request that presented a valid access token, in the shape the MCP SDK's
 * transports hand on to request handlers (`req.auth`, the SDK's AuthInfo). `token` is the secret
 * itself: never log it.
 */
export interface OAuthIdentity {
  token: string;
  clientId: string;
  scopes: string[];
  /** Seconds since the epoch. */
  expiresAt?: number;
  resource?: URL;
  extra: { sub?: string | undefined; iss: string };
}

export type TokenVerdict = { ok: true; identity: OAuthIdentity } | { ok: false; reason: string };

/** Asymmetric signature algorithms only: never `none`, never HMAC (whose "key" could be a public key). */
export const ALLOWED_ALGORITHMS: readonly string[] = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
];

/** Seconds of clock difference tolerated on `exp`, `nbf` and `iat`. */
export const CLOCK_TOLERANCE_S = 30;
/** A JWKS refetch on an unknown `kid` happens at most this often per issuer (jose's cooldown). */
export const DEFAULT_JWKS_COOLDOWN_MS = 30_000;
/**
 * A key set older than this is fetched again before the next token is checked with it, so a key
 * the issuer removed (rotated out, compromised) stops working within a minute of its removal.
 */
export const JWKS_MAX_AGE_MS = 60_000;
/**
 * Introspection requests (tokens not in the cache) a client may cause per minute, and all clients
 * together: a client sending token after made-up token cannot make ccb flood the issuer. A client
 * is the address the request came from (behind a reverse proxy, the proxy: then the shared bound
 * is the per-address one).
 */
export const INTROSPECTIONS_PER_CLIENT_PER_MINUTE = 30;
export const INTROSPECTIONS_PER_MINUTE = 300;
/** How long an introspection answer is reused (capped by the token's `exp`). */
const INTROSPECTION_CACHE_MS = 30_000;
const INTROSPECTION_CACHE_SIZE = 1_000;

/** JWT access token types accepted in the `typ` header (RFC 9068 `at+jwt`, and plain JWT of IdPs that use it). */
const TOKEN_TYPES = new Set([undefined, "jwt", "at+jwt", "application/at+jwt"]);

export interface VerifierOptions {
  issuers: readonly IssuerMetadata[];
  /** The `aud` a token must carry: this resource's canonical URL, or --oauth-audience. */
  audience: () => string;
  /** RFC 7662 introspection of opaque tokens at the first issuer offering it (client credentials of ccb there). */
  introspection?: { clientId: string; clientSecret: string } | undefined;
  jwksCooldownMs?: number;
  fetch?: typeof fetch;
}

/**
 * Checks access tokens for one resource: JWTs with jose against the keys of the issuer their `iss`
 * names (only configured issuers: a token never chooses where keys are fetched from), opaque tokens
 * by introspection when configured. Keys are cached per issuer for at most JWKS_MAX_AGE_MS and
 * refetched on an unknown `kid`, at most once per cooldown.
 */
export class AccessTokenVerifier {
  readonly #keys = new Map<string, JWTVerifyGetKey>();
  readonly #options: VerifierOptions;
  readonly #introspectAt: IssuerMetadata | undefined;
  readonly #introspected = new Map<string, { verdict: TokenVerdict; until: number }>();
  readonly #budget = new IntrospectionBudget();

  constructor(options: VerifierOptions) {
    this.#options = options;
    for (const i of options.issuers) {
      if (!i.jwksUri) continue;
      this.#keys.set(
        i.issuer,
        createRemoteJWKSet(new URL(i.jwksUri), {
          cooldownDuration: options.jwksCooldownMs ?? DEFAULT_JWKS_COOLDOWN_MS,
          cacheMaxAge: JWKS_MAX_AGE_MS,
          timeoutDuration: 10_000,
        }),
      );
    }
    this.#introspectAt = options.introspection
      ? options.issuers.find((i) => i.introspectionEndpoint !== undefined)
      : undefined;
  }

  /** Whether opaque tokens can be checked (an issuer offers introspection and ccb has client credentials). */
  get introspects(): boolean {
    return this.#introspectAt !== undefined;
  }

  /** `client`: who presented the token (the request's address), for the introspection budget. */
  async verify(token: string, client = "-"): Promise<TokenVerdict> {
    // A JWT of an issuer whose keys ccb has is checked locally; anything else (opaque tokens, JWTs
    // of an issuer that only offers introspection) is introspected when that is configured.
    if (token.split(".").length === 3 && this.#keys.has(unverifiedIssuer(token) ?? "")) return this.#verifyJwt(token);
    if (this.#introspectAt) return this.#introspect(token, this.#introspectAt, client);
    if (token.split(".").length === 3) return this.#verifyJwt(token);
    return { ok: false, reason: "not a JWT, and no introspection is configured" };
  }

  async #verifyJwt(token: string): Promise<TokenVerdict> {
    let iss: unknown;
    let typ: string | undefined;
    try {
      iss = decodeJwt(token).iss;
      typ = decodeProtectedHeader(token).typ;
    } catch {
      return { ok: false, reason: "malformed JWT" };
    }
    const keys = typeof iss === "string" ? this.#keys.get(iss) : undefined;
    if (!keys) return { ok: false, reason: "issuer not trusted" };
    if (!TOKEN_TYPES.has(typ?.toLowerCase())) return { ok: false, reason: `token type ${typ} is not an access token` };
    try {
      const { payload } = await jwtVerify(token, keys, {
        issuer: iss as string,
        audience: this.#options.audience(),
        algorithms: [...ALLOWED_ALGORITHMS],
        clockTolerance: CLOCK_TOLERANCE_S,
        requiredClaims: ["exp"],
      });
      return { ok: true, identity: identityOf(token, payload, iss as string, this.#options.audience()) };
    } catch (err) {
      return { ok: false, reason: joseReason(err) };
    }
  }

  async #introspect(token: string, at: IssuerMetadata, client: string): Promise<TokenVerdict> {
    const key = createHash("sha256").update(token).digest("hex");
    const now = Date.now();
    const hit = this.#introspected.get(key);
    if (hit && hit.until > now) return hit.verdict;
    if (!this.#budget.take(client, now))
      return { ok: false, reason: "too many tokens to introspect from this client; try again in a minute" };
    const verdict = await this.#askIntrospection(token, at);
    const exp = verdict.ok && verdict.identity.expiresAt ? verdict.identity.expiresAt * 1000 : Infinity;
    if (this.#introspected.size >= INTROSPECTION_CACHE_SIZE) {
      for (const [k, v] of this.#introspected) if (v.until <= now) this.#introspected.delete(k);
      if (this.#introspected.size >= INTROSPECTION_CACHE_SIZE) this.#introspected.clear();
    }
    this.#introspected.set(key, { verdict, until: Math.min(now + INTROSPECTION_CACHE_MS, exp) });
    return verdict;
  }

  async #askIntrospection(token: string, at: IssuerMetadata): Promise<TokenVerdict> {
    const creds = this.#options.introspection as { clientId: string; clientSecret: string };
    // RFC 6749 section 2.3.1: both halves form-encoded before the Basic encoding.
    const basic = Buffer.from(
      `${encodeURIComponent(creds.clientId)}:${encodeURIComponent(creds.clientSecret)}`,
    ).toString("base64");
    let doc: Record<string, unknown>;
    try {
      const res = await (this.#options.fetch ?? fetch)(at.introspectionEndpoint as string, {
        method: "POST",
        headers: {
          authorization: `Basic ${basic}`,
          "content-type": "application/x-www-form-urlencoded",
          accept: "application/json",
        },
        body: new URLSearchParams({ token, token_type_hint: "access_token" }).toString(),
        redirect: "error",
        signal: AbortSignal.timeout(10_000),
      });
      if (!res.ok) return { ok: false, reason: `introspection answered HTTP ${res.status}` };
      doc = (await res.json()) as Record<string, unknown>;
    } catch (err) {
      return { ok: false, reason: `introspection failed: ${err instanceof Error ? err.message : String(err)}` };
    }
    if (doc.active !== true) return { ok: false, reason: "token not active (introspection)" };
    if (doc.iss !== undefined && doc.iss !== at.issuer) return { ok: false, reason: "issuer not trusted" };
    const aud = doc.aud;
    const want = this.#options.audience();
    if (!(aud === want || (Array.isArray(aud) && aud.includes(want)))) {
      return { ok: false, reason: "audience is not this resource (introspection)" };
    }
    const nowS = Date.now() / 1000;
    if (typeof doc.exp === "number" && doc.exp < nowS - CLOCK_TOLERANCE_S) return { ok: false, reason: "expired" };
    if (typeof doc.nbf === "number" && doc.nbf > nowS + CLOCK_TOLERANCE_S)
      return { ok: false, reason: "not yet valid" };
    return { ok: true, identity: identityOf(token, doc as JWTPayload, at.issuer, want) };
  }
}

function unverifiedIssuer(token: string): string | undefined {
  try {
    const iss = decodeJwt(token).iss;
    return typeof iss === "string" ? iss : undefined;
  } catch {
    return undefined;
  }
}

function identityOf(token: string, claims: JWTPayload, iss: string, audience: string): OAuthIdentity {
  const c = claims as Record<string, unknown>;
  const clientId = [c.client_id, c.azp, c.cid, c.appid].find((v) => typeof v === "string") as string | undefined;
  let resource: URL | undefined;
  try {
    resource = new URL(audience);
  } catch {
    resource = undefined;
  }
  return {
    token,
    clientId: clientId ?? "",
    scopes: scopesOf(c),
    ...(typeof c.exp === "number" ? { expiresAt: c.exp } : {}),
    ...(resource ? { resource } : {}),
    extra: { sub: typeof c.sub === "string" ? c.sub : undefined, iss },
  };
}

/** `scope` (RFC 9068/8693: space-separated) or `scp` (a list or string, as some IdPs write it). */
function scopesOf(c: Record<string, unknown>): string[] {
  const raw = c.scope ?? c.scp;
  const list = Array.isArray(raw) ? raw : typeof raw === "string" ? raw.split(" ") : [];
  return list.filter((s): s is string => typeof s === "string" && s.length > 0);
}

function joseReason(err: unknown): string {
  if (err instanceof errors.JWTExpired) return "expired";
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === "nbf") return "not yet valid";
    if (err.claim === "aud") return "audience is not this resource";
    if (err.claim === "iss") return "issuer not trusted";
    return `claim ${err.claim} invalid`;
  }
  if (err instanceof errors.JOSEAlgNotAllowed) return "signing algorithm not allowed";
  if (err instanceof errors.JWKSNoMatchingKey) return "signing key not in the issuer's key set";
  if (err instanceof errors.JWSSignatureVerificationFailed) return "signature invalid";
  if (err instanceof errors.JWKSTimeout) return "the issuer's key set did not answer";
  if (err instanceof errors.JOSEError) return err.code;
  return err instanceof Error ? err.message : String(err);
}

/** Sliding one-minute windows of introspection requests: per client, and for all together. */
class IntrospectionBudget {
  readonly #perClient = new Map<string, number[]>();
  #all: number[] = [];

  take(client: string, now: number): boolean {
    const since = now - 60_000;
    this.#all = this.#all.filter((t) => t > since);
    const mine = (this.#perClient.get(client) ?? []).filter((t) => t > since);
    if (mine.length >= INTROSPECTIONS_PER_CLIENT_PER_MINUTE || this.#all.length >= INTROSPECTIONS_PER_MINUTE) {
      this.#perClient.set(client, mine);
      return false;
    }
    mine.push(now);
    this.#all.push(now);
    this.#perClient.set(client, mine);
    if (this.#perClient.size > 10_000)
      for (const [k, v] of this.#perClient) if (!v.some((t) => t > since)) this.#perClient.delete(k);
    return true;
  }
}
