import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { newToken, tokensEqual } from "../util/secrets.ts";
import { type Credential, credentialMatches } from "./credentials.ts";

/** The query parameter of a one-time link. */
export const ONE_TIME_QUERY = "ccb_ott";

export interface BrowserSessionOptions {
  /** Cookie paths: the cookie is sent only below these (e.g. `/ide/<key>`, `/app`, `/session.json`). */
  paths: () => readonly string[];
  /** Mark the cookie Secure (the browser reaches the listener over https). */
  secure: () => boolean;
  /** How long an unused one-time token stays valid (default 10 minutes). */
  ttlMs?: number;
  /** Unused one-time tokens kept at most (the oldest goes first; default 64). */
  maxPending?: number;
}

/**
 * A browser's way in: a one-time token in a printed link is exchanged (once) for an `HttpOnly`,
 * `SameSite=Strict` cookie holding this session's 256-bit secret, scoped to the given paths. The
 * cookie then authenticates every request below them, WebSocket upgrades included.
 */
export class BrowserSession {
  /** Per-listener name: cookies ignore ports, so two ccb instances on one host must not collide. */
  readonly cookieName = `ccb_${randomBytes(4).toString("hex")}`;
  readonly #secret = newToken(32);
  readonly #pending: Array<{ token: string; expires: number }> = [];
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

  get pending(): number {
    this.#prune();
    return this.#pending.length;
  }

  /**
   * Answer a GET carrying `?ccb_ott=`: a valid token sets the cookie and redirects to the same URL
   * without it (so the token leaves the address bar and history); an invalid one gets 401, unless
   * the browser already holds the cookie (a link opened twice in the same browser).
   */
  exchange(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const token = url.searchParams.get(ONE_TIME_QUERY) ?? "";
    const valid = req.method === "GET" && this.consume(token);
    if (!valid && req.method === "GET" && credentialMatches(req, url, [this.credential])) {
      url.searchParams.delete(ONE_TIME_QUERY);
      res
        .writeHead(302, {
          location: `${url.pathname}${url.search}`,
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
    url.searchParams.delete(ONE_TIME_QUERY);
    const flags = `HttpOnly; SameSite=Strict${this.#o.secure() ? "; Secure" : ""}`;
    const cookies = this.#o.paths().map((p) => `${this.cookieName}=${this.#secret}; Path=${p}; ${flags}`);
    res
      .writeHead(302, {
        location: `${url.pathname}${url.search}`,
        "set-cookie": cookies,
        "cache-control": "no-store",
        "referrer-policy": "no-referrer",
      })
      .end();
  }

  #prune(): void {
    const now = Date.now();
    while (this.#pending.length > 0 && (this.#pending[0] as { expires: number }).expires <= now) this.#pending.shift();
  }
}
