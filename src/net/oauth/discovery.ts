import { CcbError } from "../../core/errors.ts";
import { isLoopbackHost } from "../loopback.ts";

/** What ccb needs from an authorization server's metadata (RFC 8414 / OpenID Connect Discovery). */
export interface IssuerMetadata {
  /** The issuer identifier, exactly as configured and as the metadata echoes it. */
  issuer: string;
  /** Where its signing keys are published (JWT access tokens). */
  jwksUri?: string | undefined;
  /** RFC 7662 introspection (opaque access tokens), when it offers one. */
  introspectionEndpoint?: string | undefined;
}

const FETCH_TIMEOUT_MS = 10_000;

/**
 * An issuer given to --oauth-issuer: an https URL (http only on loopback, for local identity
 * providers), no query or fragment. Returned as given (issuer identifiers compare as strings).
 */
export function checkIssuerUrl(value: string, what = "--oauth-issuer"): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new CcbError("CONFIG_INVALID", `${what} ${JSON.stringify(value)} is not a URL.`, {
      hint: "Give the issuer identifier of your identity provider, e.g. https://login.example.com/realms/dev",
    });
  }
  if (u.search || u.hash || u.username || u.password) {
    throw new CcbError("CONFIG_INVALID", `${what} must not carry a query, fragment or credentials.`);
  }
  if (u.protocol !== "https:" && !(u.protocol === "http:" && isLoopbackHost(u.hostname))) {
    throw new CcbError("CONFIG_INVALID", `${what} ${u.origin} must be https (http only on loopback).`);
  }
  return value;
}

/**
 * The metadata URLs of an issuer, in the order the MCP authorization spec has clients try them:
 * RFC 8414 (path inserted after the well-known segment), then OpenID Connect Discovery (inserted,
 * then appended). For an issuer without a path the first two are the plain well-known URLs.
 */
export function metadataUrls(issuer: string): string[] {
  const u = new URL(issuer);
  const path = u.pathname.replace(/\/+$/, "");
  if (!path) {
    return [`${u.origin}/.well-known/oauth-authorization-server`, `${u.origin}/.well-known/openid-configuration`];
  }
  return [
    `${u.origin}/.well-known/oauth-authorization-server${path}`,
    `${u.origin}/.well-known/openid-configuration${path}`,
    `${u.origin}${path}/.well-known/openid-configuration`,
  ];
}

/**
 * Fetch an issuer's metadata: the first of its well-known documents that answers, whose `issuer`
 * must equal the configured one exactly (RFC 8414 section 3.3: else the document speaks for another
 * server). Throws CONFIG_INVALID, naming the issuer and what went wrong, when none answers.
 */
export async function discoverIssuer(issuer: string, fetchImpl: typeof fetch = fetch): Promise<IssuerMetadata> {
  const tried: string[] = [];
  for (const url of metadataUrls(issuer)) {
    let res: Response;
    try {
      res = await fetchImpl(url, {
        headers: { accept: "application/json" },
        redirect: "error",
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      });
    } catch (err) {
      tried.push(`${url}: ${reason(err)}`);
      continue;
    }
    if (!res.ok) {
      tried.push(`${url}: HTTP ${res.status}`);
      await res.body?.cancel().catch(() => {});
      continue;
    }
    let doc: Record<string, unknown>;
    try {
      doc = (await res.json()) as Record<string, unknown>;
    } catch {
      tried.push(`${url}: not JSON`);
      continue;
    }
    if (doc.issuer !== issuer) {
      throw new CcbError(
        "CONFIG_INVALID",
        `The metadata of --oauth-issuer ${issuer} names another issuer (${String(doc.issuer).slice(0, 200)}).`,
        {
          hint: "Give the issuer identifier exactly as your identity provider publishes it (trailing slash included).",
        },
      );
    }
    const jwksUri = optionalUrl(doc.jwks_uri, "jwks_uri", issuer);
    const introspectionEndpoint = optionalUrl(doc.introspection_endpoint, "introspection_endpoint", issuer);
    return { issuer, jwksUri, introspectionEndpoint };
  }
  throw new CcbError("CONFIG_INVALID", `Cannot reach the authorization server ${issuer}: ${tried.join("; ")}.`, {
    hint: "Check --oauth-issuer (CCB_OAUTH_ISSUER) and that this machine can reach it; ccb reads its metadata and keys at startup.",
  });
}

function optionalUrl(value: unknown, field: string, issuer: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw new CcbError("CONFIG_INVALID", `${issuer}: ${field} is not a string.`);
  return checkIssuerUrl(value, `The ${field} of ${issuer}`);
}

function reason(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ?? cause?.message ?? err.message;
  }
  return String(err);
}
