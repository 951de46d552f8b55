import type { IncomingMessage } from "node:http";
import { type BrowserSession, fetchSiteAllowed } from "./browser-session.ts";
import { type Credential, credentialMatches, offeredSubprotocols, presentsAny } from "./credentials.ts";
import type { HostAllowList } from "./hosts.ts";
import type { OAuthGuard } from "./oauth/guard.ts";
import type { OAuthIdentity } from "./oauth/verifier.ts";
import { type OriginPolicy, originAllowed } from "./origin.ts";

/**
 * What a route of a listener requires, declared once next to the route. The gateway
 * (src/net/gateway.ts) runs these checks, in this order, before the handler or any WebSocket
 * upgrade: Host allow-list, tokens in the query refused, Origin, credential, subprotocol. The
 * credential is any one of: a static secret (`auth`), the browser session's cookie (`session`), or
 * an OAuth 2.1 access token for this resource (`oauth`, src/net/oauth). Body and
 * frame caps are enforced by the gateway's body reader and the WebSocket server that use them.
 */
export interface EdgePolicy {
  /** A short name (logs, the generated test matrix). */
  name: string;
  origin: OriginPolicy;
  /** Any one of these grants access; none active (empty, or every `expected()` undefined) = open. */
  auth: readonly Credential[];
  /** Query keys refused outright: a secret in a URL ends up in logs and history. */
  refuseQueryKeys?: readonly string[];
  /**
   * An OAuth resource server: a bearer access token issued for this resource is a credential too
   * (checked after the static secrets; a request that passes with it carries its identity).
   */
  oauth?: OAuthGuard | undefined;
  /**
   * A credential the handler checks inside the protocol, not at the edge (the bridge's token in its
   * first frame, the attach channel's mutual proof), as the route table names it.
   */
  inBand?: string;
  /** A browser session whose one-time link (`?ccb_ott=`) is exchanged for its cookie on GET. */
  session?: BrowserSession | undefined;
  /** The WebSocket subprotocol the client must offer. */
  subprotocol?: string;
  /** Largest request body (HTTP routes reading one). */
  maxBodyBytes?: number;
  /** Largest WebSocket message (upgrade routes). */
  maxFrameBytes?: number;
  /** How refusals of HTTP requests are written (default `json`); upgrades are always refused in plain HTTP. */
  style?: "json" | "jsonrpc" | "text";
  /** Listener-specific wording of a refusal (e.g. which flag to use). */
  messages?: Partial<Record<EdgeRefusal, string>>;
  /** The realm named in `WWW-Authenticate` on 401. */
  realm?: string;
}

export type EdgeRefusal =
  | "HOST_REFUSED"
  | "TOKEN_IN_QUERY"
  | "ORIGIN_REFUSED"
  | "FETCH_SITE_REFUSED"
  | "TOKEN_MISSING"
  | "TOKEN_WRONG"
  | "SUBPROTOCOL_REQUIRED";

export type EdgeVerdict =
  | { ok: true; identity?: OAuthIdentity }
  | {
      ok: false;
      status: 400 | 401 | 403;
      code: EdgeRefusal;
      message: string;
      /** The `WWW-Authenticate` of a 401 when the policy has its own (OAuth's resource_metadata challenge). */
      challenge?: string;
    };

export interface EdgeContext {
  hosts: HostAllowList;
  scheme: "http" | "https";
  /** Origins that are this listener besides its Host names (e.g. the public URL). */
  ownOrigins?: readonly string[];
  /** The request already proved a credential of the route (a browser session's frame capability in its path). */
  authenticated?: boolean;
}

const DEFAULT_QUERY_KEYS = ["token", "access_token", "auth", "authorization", "key"];

/** The query keys an upgrade or API route refuses unless it declares its own list. */
export const TOKEN_QUERY_KEYS: readonly string[] = DEFAULT_QUERY_KEYS;

export async function checkEdge(
  req: IncomingMessage,
  url: URL,
  policy: EdgePolicy,
  ctx: EdgeContext,
): Promise<EdgeVerdict> {
  const v = await rawCheck(req, url, policy, ctx);
  if (v.ok) return v;
  return { ...v, message: policy.messages?.[v.code] ?? v.message };
}

async function rawCheck(req: IncomingMessage, url: URL, policy: EdgePolicy, ctx: EdgeContext): Promise<EdgeVerdict> {
  if (!ctx.hosts.check(single(req.headers.host))) {
    return refuse(
      403,
      "HOST_REFUSED",
      "Forbidden: this Host header is not allowed (DNS-rebinding protection). Connect to the address ccb printed.",
    );
  }
  for (const k of policy.refuseQueryKeys ?? []) {
    if (url.searchParams.has(k)) {
      return refuse(
        400,
        "TOKEN_IN_QUERY",
        "Tokens in the query string are refused (they end up in logs and history). Send the token in a header or subprotocol.",
      );
    }
  }
  const origin = single(req.headers.origin);
  if (
    !originAllowed(policy.origin, origin, {
      scheme: ctx.scheme,
      authorities: ctx.hosts.authorities(),
      extra: ctx.ownOrigins ?? [],
    })
  ) {
    return refuse(
      403,
      "ORIGIN_REFUSED",
      policy.origin.kind === "none"
        ? "Forbidden: browser origins are refused here."
        : `Forbidden: browser Origin ${String(origin).slice(0, 200)} is not allowed.`,
    );
  }
  // The cookie is ambient: only the gateway's own pages, or the person's navigation, may use it.
  if (policy.session && !ctx.authenticated && !fetchSiteAllowed(req)) {
    return refuse(
      403,
      "FETCH_SITE_REFUSED",
      "Forbidden: this workbench address opens only from its own pages or as a link you open (Sec-Fetch-Site).",
    );
  }
  const credentials = [...policy.auth, ...(policy.session ? [policy.session.credential] : [])];
  const match = ctx.authenticated ? true : credentialMatches(req, url, credentials);
  if (policy.origin.kind === "any" && match === undefined && !policy.oauth) {
    return refuse(
      401,
      "TOKEN_MISSING",
      "Unauthorized: this endpoint accepts any origin only with its token, and has none set.",
    );
  }
  let identity: OAuthIdentity | undefined;
  if (match !== true && policy.oauth) {
    const r = await policy.oauth.check(req);
    if (!r.ok) {
      return {
        ...refuse(
          401,
          r.given ? "TOKEN_WRONG" : "TOKEN_MISSING",
          r.given
            ? `Unauthorized: the access token was refused (${r.reason}).`
            : "Unauthorized: this endpoint needs an OAuth access token.",
        ),
        challenge: r.challenge,
      } as EdgeVerdict;
    }
    identity = r.identity;
  } else if (match === false) {
    const given = presentsAny(req, url, credentials);
    return refuse(
      401,
      given ? "TOKEN_WRONG" : "TOKEN_MISSING",
      given ? "Unauthorized: wrong token." : "Unauthorized: this endpoint needs its token.",
    );
  }
  if (policy.subprotocol !== undefined && !offeredSubprotocols(req).includes(policy.subprotocol)) {
    return refuse(400, "SUBPROTOCOL_REQUIRED", `The ${policy.subprotocol} subprotocol is required.`);
  }
  return identity ? { ok: true, identity } : { ok: true };
}

function refuse(status: 400 | 401 | 403, code: EdgeRefusal, message: string): EdgeVerdict {
  return { ok: false, status, code, message };
}

function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? (v.length === 1 ? v[0] : undefined) : v;
}
