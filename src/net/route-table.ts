import { CAPABILITY_SEGMENT, ONE_TIME_QUERY } from "./browser-session.ts";
import type { TokenPlace } from "./credentials.ts";
import type { RouteDescription } from "./gateway.ts";

/**
 * A listener's routes as one table a person can read: every path, what it is (an HTTP method or a
 * WebSocket upgrade), which credentials open it and where each may travel, which origins may use
 * it. Made from the policies the routes declare (Gateway.routes()), the same ones the edge checks
 * and the generated edge test matrix attacks, so the table cannot drift from what runs.
 */

function place(p: TokenPlace): string {
  switch (p.in) {
    case "bearer":
      return "Authorization: Bearer";
    case "header":
      return `header ${p.name}`;
    case "subprotocol":
      return `subprotocol ${p.prefix}…`;
    case "query":
      return `query ?${p.name}=`;
    case "cookie":
      return `cookie ${p.name}`;
  }
}

/** Who may use a route: its active credentials with their places, an OAuth access token, or open. */
export function credentialOf(r: RouteDescription): string {
  const p = r.policy;
  const secrets = p.auth
    .filter((c) => c.expected() !== undefined)
    .map((c) => c.places.map(place).join(" or "))
    .filter((s, i, all) => all.indexOf(s) === i);
  // The cookie's name is per session (ccb_<random>): the table names it by what it is.
  if (p.session)
    secrets.push(
      `the session's cookie (from a one-time link ?${ONE_TIME_QUERY}=), or a frame's \`/${CAPABILITY_SEGMENT}/<capability>\` path`,
    );
  if (p.inBand) secrets.push(`in band: ${p.inBand}`);
  if (p.oauth) secrets.push("OAuth access token (Bearer)");
  return secrets.length > 0 ? secrets.join("; ") : "open";
}

function originOf(r: RouteDescription): string {
  switch (r.policy.origin.kind) {
    case "none":
      return "no browser Origin";
    case "same":
      return "same origin";
    case "any":
      return "any (credential required)";
  }
}

/**
 * The table in Markdown, rows sorted by path. `redact` replaces the secret or random parts of a
 * path (the workbench's `/ide/<key>` prefix) so the table is the same on every run.
 */
export function renderRouteTable(routes: readonly RouteDescription[], redact: (path: string) => string): string {
  const rows = routes
    .map((r) => [
      `\`${redact(r.prefix)}\``,
      r.kind === "upgrade" ? "WebSocket" : r.method === "*" ? "any method" : r.method,
      credentialOf(r),
      originOf(r),
      r.policy.name,
    ])
    .sort((a, b) => (a[0] === b[0] ? (a[1] ?? "").localeCompare(b[1] ?? "") : (a[0] ?? "").localeCompare(b[0] ?? "")));
  const head = ["path", "what", "credential (where it travels)", "origin", "policy"];
  return [
    `| ${head.join(" | ")} |`,
    `| ${head.map(() => "---").join(" | ")} |`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
}
