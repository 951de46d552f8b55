import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../core/log.ts";
import { errorResponse, ServerErrorCode } from "../../util/jsonrpc.ts";
import { sendJson } from "../respond.ts";
import type { AccessTokenVerifier, OAuthIdentity } from "./verifier.ts";

/** The path of RFC 9728's well-known document; a resource with a path gets it appended. */
export const PRM_PATH = "/.well-known/oauth-protected-resource";

export type OAuthCheck =
  | { ok: true; identity: OAuthIdentity }
  | { ok: false; given: boolean; reason: string; challenge: string };

export interface OAuthGuardOptions {
  verifier: AccessTokenVerifier;
  /** The origin clients reach this server at (the public URL, else the listener's URL); read per request. */
  base: () => string;
  /** The protected path (e.g. "/mcp"): the resource identifier is base + path. */
  path: string;
  /** The authorization servers to publish (the trusted issuers). */
  issuers: readonly string[];
  /** The scopes this resource understands, broadest last. */
  scopes: readonly string[];
  /** What a token must carry to get anything at all (named in the 401 challenge). */
  challengeScope: string;
  /** A name for the metadata document. */
  name: string;
  log: Logger;
}

/**
 * The OAuth 2.1 resource-server credential of an EdgePolicy (`policy.oauth`): the gateway asks it
 * to check the `Authorization: Bearer` token of a request (only there: never in a query or a body),
 * and it builds the RFC 6750 / RFC 9728 challenges and the Protected Resource Metadata document.
 * Identities are logged by `sub` and client id, never by token.
 */
export class OAuthGuard {
  readonly #o: OAuthGuardOptions;
  readonly #seen = new Set<string>();
  readonly #reasons = new Set<string>();

  constructor(options: OAuthGuardOptions) {
    this.#o = options;
  }

  /** The resource identifier (RFC 8707/9728): what tokens must be issued for. */
  resource(): string {
    return `${this.#o.base()}${this.#o.path}`;
  }

  /** The URL of this resource's metadata document (RFC 9728 section 3.1: the path goes after the well-known segment). */
  metadataUrl(): string {
    return `${this.#o.base()}${PRM_PATH}${this.#o.path}`;
  }

  /** The Protected Resource Metadata document (RFC 9728 section 2). */
  document(): Record<string, unknown> {
    return {
      resource: this.resource(),
      authorization_servers: [...this.#o.issuers],
      scopes_supported: [...this.#o.scopes],
      bearer_methods_supported: ["header"],
      resource_name: this.#o.name,
    };
  }

  /** A `WWW-Authenticate` value: no token / a bad one (401), or a scope too small (403). */
  challenge(kind: "missing" | "invalid" | { insufficientScope: string }, description?: string): string {
    const parts = [`resource_metadata="${this.metadataUrl()}"`];
    if (kind === "missing") parts.push(`scope="${this.#o.challengeScope}"`);
    else if (kind === "invalid") parts.push(`error="invalid_token"`);
    else parts.push(`error="insufficient_scope"`, `scope="${kind.insufficientScope}"`);
    if (description) parts.push(`error_description="${description.replace(/["\\]/g, "")}"`);
    return `Bearer ${parts.join(", ")}`;
  }

  /** Check the request's bearer token; the identity is logged once per subject and client. */
  async check(req: IncomingMessage): Promise<OAuthCheck> {
    const header = single(req.headers.authorization);
    if (header === undefined)
      return { ok: false, given: false, reason: "no token", challenge: this.challenge("missing") };
    const m = /^Bearer[ \t]+([A-Za-z0-9\-._~+/]+=*)[ \t]*$/i.exec(header);
    if (!m) return this.#refused("not a Bearer token");
    let verdict: Awaited<ReturnType<AccessTokenVerifier["verify"]>>;
    try {
      verdict = await this.#o.verifier.verify(m[1] as string, req.socket.remoteAddress ?? "-");
    } catch (err) {
      // A check that cannot complete refuses (the gateway never sees an exception from here).
      verdict = { ok: false, reason: `check failed: ${err instanceof Error ? err.message : String(err)}` };
    }
    if (!verdict.ok) return this.#refused(verdict.reason);
    const id = verdict.identity;
    const who = `sub=${id.extra.sub ?? "-"} client=${id.clientId || "-"} iss=${id.extra.iss}`;
    if (!this.#seen.has(who)) {
      if (this.#seen.size > 10_000) this.#seen.clear();
      this.#seen.add(who);
      this.#o.log.info(`oauth: signed in ${who} scopes=${id.scopes.join(" ") || "-"}`);
    }
    return { ok: true, identity: id };
  }

  #refused(reason: string): OAuthCheck {
    // Each distinct reason once at info (a misconfigured audience shows up at once), then debug.
    if (!this.#reasons.has(reason) && this.#reasons.size < 100) {
      this.#reasons.add(reason);
      this.#o.log.info(`oauth: refused an access token (${reason})`);
    } else this.#o.log.debug(`oauth: refused an access token (${reason})`);
    return { ok: false, given: true, reason, challenge: this.challenge("invalid", reason) };
  }
}

const identities = new WeakMap<IncomingMessage, { identity: OAuthIdentity; guard: OAuthGuard }>();

/**
 * Record the verified identity of a request: as `req.auth` (where the MCP SDK's HTTP transports
 * read it and hand it to request handlers as `authInfo`) and for insufficientScope().
 */
export function attachIdentity(req: IncomingMessage, identity: OAuthIdentity, guard: OAuthGuard): void {
  identities.set(req, { identity, guard });
  (req as IncomingMessage & { auth?: OAuthIdentity }).auth = identity;
}

/** The OAuth identity the gateway verified for this request, if it came in with an access token. */
export function identityOf(req: IncomingMessage): OAuthIdentity | undefined {
  return identities.get(req)?.identity;
}

/**
 * Answer 403 with `WWW-Authenticate: Bearer error="insufficient_scope", scope="<needed>"` (the MCP
 * authorization spec's step-up challenge) and a JSON-RPC error body saying what is missing.
 */
export function refuseInsufficientScope(
  req: IncomingMessage,
  res: ServerResponse,
  needed: string,
  message: string,
  id: string | number | null = null,
): void {
  const guard = identities.get(req)?.guard;
  const headers: Record<string, string> = guard
    ? { "www-authenticate": guard.challenge({ insufficientScope: needed }, message) }
    : {};
  sendJson(res, 403, errorResponse(id, ServerErrorCode.NotAuthorized, message, { scope: needed }), headers);
}

function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? (v.length === 1 ? v[0] : undefined) : v;
}
