import { createHash, randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { newToken, tokensEqual } from "../util/secrets.ts";
import { type Credential, credentialMatches } from "./credentials.ts";

/** The query parameter of a one-time link. */
export const ONE_TIME_QUERY = "ccb_ott";

/**
 * The first path segment of an address that carries a frame capability: `/s/<capability>/<path>`
 * (the gateway checks and strips it: src/net/gateway.ts).
 */
export const CAPABILITY_SEGMENT = "s";

/** Frame capabilities kept at most per session (the oldest goes first). */
const MAX_FRAMES = 256;

export interface BrowserSessionOptions {
  /**
   * The cookie's one path: an unguessable per-gateway prefix (`/ide/<key>`). Cookies ignore ports,
   * so a fixed path (`/app`) would be sent to a page on any other loopback port that asks its own
   * origin for it; below a secret prefix, nobody who does not know it can ask.
   */
  path: () => string;
  /** Where a one-time link used at `pathname` lands (e.g. `/app` → `/ide/<key>/__ccb/app`); default: where it was. */
  landing?: (pathname: string) => string;
  /** Mark the cookie Secure (the browser reaches the listener over https). */
  secure: () => boolean;
  /** How long an unused one-time token stays valid (default 10 minutes). */
  ttlMs?: number;
  /** Unused one-time tokens kept at most (the oldest goes first; default 64). */
  maxPending?: number;
}

/** Whether a request is the navigation of a frame (fetch metadata: Chromium, Firefox, Safari send it to trustworthy origins). */
function isFrameNavigation(req: IncomingMessage): boolean {
  const dest = req.headers["sec-fetch-dest"];
  return dest === "iframe" || dest === "frame";
}

/**
 * Fetch metadata of a request whose credential is the session cookie: only the gateway's own pages
 * (`same-origin`) or the person (`none`: typed, bookmarked, reloaded; a top-level navigation) may use
 * it. A page on another loopback port is `same-site` (ports do not make sites, so `SameSite=Strict`
 * lets the cookie go there): refused, as is any other site. Without the header (programs, old
 * browsers) the other checks decide.
 */
export function fetchSiteAllowed(req: IncomingMessage): boolean {
  const site = req.headers["sec-fetch-site"];
  if (site === undefined || site === "same-origin") return true;
  return site === "none" && req.headers["sec-fetch-mode"] === "navigate" && !isFrameNavigation(req);
}

/** Sent with every answer whose credential is the cookie: only the gateway's own pages may frame it. */
export const FRAME_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": "frame-ancestors 'self'",
  "x-frame-options": "SAMEORIGIN",
};

/**
 * The page a top-level navigation from another site (a file, a link in an MCP host, a page on
 * another loopback port) gets for a valid one-time link: it holds the cookie and continues to
 * `target` from the gateway's own origin, so that request is `same-origin` (a redirect would keep
 * the other site as its initiator: refused, and `SameSite=Strict` would not send the cookie).
 */
const CONTINUE_SCRIPT = `location.replace(document.getElementById("go").href);`;
const CONTINUE_CSP = `default-src 'none'; script-src 'sha256-${createHash("sha256").update(CONTINUE_SCRIPT).digest("base64")}'; frame-ancestors 'none'`;
function continuePage(target: string): string {
  const href = target.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  return `<!doctype html><html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><title>ccb workbench</title></head>
<body><a id="go" href="${href}">Continue to the workbench</a><script>${CONTINUE_SCRIPT}</script></body></html>`;
}

/**
 * A browser's way in: a one-time token in a printed link is exchanged (once) for an `HttpOnly`,
 * `SameSite=Strict` cookie holding this session's 256-bit secret, named after this instance and
 * scoped to its unguessable prefix. The cookie then authenticates every request below it, WebSocket
 * upgrades included, from the gateway's own pages only (fetchSiteAllowed, FRAME_HEADERS).
 *
 * A frame gets no cookie: a browser does not send a `SameSite=Strict` cookie in a frame whose
 * ancestors are another site (every MCP host frames the App from its own site), and third-party
 * cookies are blocked more and more. When the exchange is a frame's navigation, it mints a frame
 * capability instead (256 bits, compared in constant time, valid while this session lives) and
 * redirects to the same address below `/s/<capability>`: the workbench's relative URLs carry it on
 * every subresource and WebSocket. It exists only after a valid one-time token was used up.
 */
export class BrowserSession {
  /** Names this instance: cookies ignore ports, so two gateways (or a dead one and its successor) never share one. */
  readonly cookieName = `ccb_${randomBytes(8).toString("hex")}`;
  readonly #secret = newToken(32);
  readonly #pending: Array<{ token: string; expires: number }> = [];
  #frames: string[] = [];
  readonly #o: BrowserSessionOptions;

  constructor(options: BrowserSessionOptions) {
    this.#o = options;
  }

  /** The cookie as a credential of an edge policy. */
  get credential(): Credential {
    return { places: [{ in: "cookie", name: this.cookieName }], expected: () => this.#secret };
  }

  /** A fresh one-time token. */
  mint(): string {
    this.#prune();
    const token = newToken(32);
    this.#pending.push({ token, expires: Date.now() + (this.#o.ttlMs ?? 10 * 60_000) });
    while (this.#pending.length > (this.#o.maxPending ?? 64)) this.#pending.shift();
    return token;
  }

  /** `url` with a fresh one-time token added to its query. */
  link(url: string): string {
    const u = new URL(url);
    u.searchParams.set(ONE_TIME_QUERY, this.mint());
    return u.toString();
  }

  /** Use up a one-time token; true when it was valid (each pending token is compared in constant time). */
  consume(token: string): boolean {
    this.#prune();
    let hit = -1;
    this.#pending.forEach((p, i) => {
      if (tokensEqual(token, p.token)) hit = i;
    });
    if (hit < 0) return false;
    this.#pending.splice(hit, 1);
    return true;
  }

  /** Whether `capability` is one this session minted for a frame (compared in constant time with each). */
  frameAllowed(capability: string): boolean {
    let ok = false;
    for (const f of this.#frames) if (tokensEqual(capability, f)) ok = true;
    return ok;
  }

  /** How many frame capabilities are valid. */
  get frames(): number {
    return this.#frames.length;
  }

  /** End every frame capability (the workbench they open is gone). */
  revokeFrames(): void {
    this.#frames = [];
  }

  get pending(): number {
    this.#prune();
    return this.#pending.length;
  }

  /**
   * Answer a GET carrying `?ccb_ott=`: a valid token sets the cookie and redirects to its landing
   * without it (so the token leaves the address bar and history); a navigation from another site
   * gets a page that continues there from the gateway's origin instead (continuePage). An invalid
   * token gets 401, unless the browser already holds the cookie (a link opened twice in the same
   * browser). A frame's navigation gets a frame capability in the path instead of the cookie.
   */
  exchange(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const token = url.searchParams.get(ONE_TIME_QUERY) ?? "";
    const valid = req.method === "GET" && this.consume(token);
    url.searchParams.delete(ONE_TIME_QUERY);
    const frame = isFrameNavigation(req);
    const landing = `${this.#o.landing?.(url.pathname) ?? url.pathname}${url.search}`;
    if (
      !valid &&
      req.method === "GET" &&
      !frame &&
      fetchSiteAllowed(req) &&
      credentialMatches(req, url, [this.credential])
    ) {
      res
        .writeHead(302, {
          ...FRAME_HEADERS,
          location: landing,
          "cache-control": "no-store",
          "referrer-policy": "no-referrer",
        })
        .end();
      return;
    }
    if (!valid) {
      res
        .writeHead(401, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" })
        .end(
          "This one-time link was already used or has expired. Ask ccb for a new one (vscode_open, or the URL ccb prints).\n",
        );
      return;
    }
    if (frame) {
      const capability = newToken(32);
      this.#frames.push(capability);
      while (this.#frames.length > MAX_FRAMES) this.#frames.shift();
      res
        .writeHead(302, {
          location: `/${CAPABILITY_SEGMENT}/${capability}${landing}`,
          "cache-control": "no-store",
          "referrer-policy": "no-referrer",
        })
        .end();
      return;
    }
    const flags = `HttpOnly; SameSite=Strict${this.#o.secure() ? "; Secure" : ""}`;
    const headers = {
      ...FRAME_HEADERS,
      "set-cookie": `${this.cookieName}=${this.#secret}; Path=${this.#o.path()}; ${flags}`,
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
    };
    if (fetchSiteAllowed(req)) {
      res.writeHead(302, { ...headers, location: landing }).end();
      return;
    }
    res
      .writeHead(200, {
        ...headers,
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": CONTINUE_CSP,
      })
      .end(continuePage(landing));
  }

  #prune(): void {
    const now = Date.now();
    while (this.#pending.length > 0 && (this.#pending[0] as { expires: number }).expires <= now) this.#pending.shift();
  }
}
