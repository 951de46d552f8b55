import type { IncomingMessage } from "node:http";
import { tokensEqual } from "../util/secrets.ts";

/** Where a listener looks for its secret. */
export type TokenPlace =
  | { in: "bearer" }
  | { in: "header"; name: string }
  /** A WebSocket subprotocol `<prefix><base64url(token)>` (browsers cannot set headers on a WebSocket). */
  | { in: "subprotocol"; prefix: string }
  | { in: "query"; name: string }
  | { in: "cookie"; name: string };

/** One accepted secret and the places it may travel in; `expected()` undefined switches it off. */
export interface Credential {
  places: readonly TokenPlace[];
  expected: () => string | undefined;
}

/** The values a request presents in one place (several for repeated cookies or subprotocols). */
export function presented(req: IncomingMessage, url: URL, place: TokenPlace): string[] {
  switch (place.in) {
    case "bearer": {
      const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(single(req.headers.authorization) ?? "");
      return m ? [m[1] as string] : [];
    }
    case "header": {
      const v = single(req.headers[place.name.toLowerCase()]);
      return v === undefined ? [] : [v];
    }
    case "subprotocol":
      return offeredSubprotocols(req)
        .filter((p) => p.startsWith(place.prefix))
        .map((p) => Buffer.from(p.slice(place.prefix.length), "base64url").toString("utf8"));
    case "query":
      return url.searchParams.getAll(place.name);
    case "cookie":
      return cookieValues(req, place.name);
  }
}

/** Whether the request carries anything in one of the credential places (for "missing" vs "wrong"). */
export function presentsAny(req: IncomingMessage, url: URL, credentials: readonly Credential[]): boolean {
  return credentials.some((c) =>
    c.places.some(
      (p) => (p.in === "bearer" && req.headers.authorization !== undefined) || presented(req, url, p).length > 0,
    ),
  );
}

/**
 * Whether one active credential matches. Each comparison is constant-time (util/secrets.ts);
 * `undefined` when no credential is active (the route is open).
 */
export function credentialMatches(
  req: IncomingMessage,
  url: URL,
  credentials: readonly Credential[],
): boolean | undefined {
  let active = false;
  let ok = false;
  for (const c of credentials) {
    const want = c.expected();
    if (want === undefined) continue;
    active = true;
    for (const place of c.places)
      for (const given of presented(req, url, place)) if (tokensEqual(given, want)) ok = true;
  }
  return active ? ok : undefined;
}

export function offeredSubprotocols(req: IncomingMessage): string[] {
  const h = req.headers["sec-websocket-protocol"];
  const all = Array.isArray(h) ? h.join(",") : (h ?? "");
  return all
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
}

export function cookieValues(req: IncomingMessage, name: string): string[] {
  const out: string[] = [];
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) out.push(part.slice(eq + 1).trim());
  }
  return out;
}

function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? (v.length === 1 ? v[0] : undefined) : v;
}
