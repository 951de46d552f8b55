import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../core/log.ts";
import { identityOf, refuseInsufficientScope } from "../../net/oauth/guard.ts";
import type { AnyToolDef } from "../../tools/kernel.ts";
import { APP_TOOL } from "./app/tool-link.ts";

/**
 * The OAuth scopes of ccb's MCP endpoint, and what each lets a token do:
 * - `ccb:read`: the session itself (initialize, ping, notifications, logging level; server/discover
 *   and subscriptions/listen of the 2026-07-28 era), listings and reads (tools/list, resources,
 *   prompts, a task's state), and the tools annotated `readOnlyHint: true` except the
 *   App's tool (vscode_open hands the host a one-time link into the live workbench, which can run
 *   terminals: as much as everything);
 * - `ccb:write`: everything (it includes `ccb:read`).
 * A token with neither gets nothing. The static --auth-token and loopback without auth are not
 * scoped (everything).
 */
export const SCOPE_READ = "ccb:read";
export const SCOPE_WRITE = "ccb:write";
export const SCOPES: readonly string[] = [SCOPE_READ, SCOPE_WRITE];

/** Requests a `ccb:read` token may send (tools/call is decided per tool). */
const READ_METHODS = new Set([
  "initialize",
  "ping",
  "tools/list",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "resources/subscribe",
  "resources/unsubscribe",
  "prompts/list",
  "prompts/get",
  "completion/complete",
  "logging/setLevel",
  // the 2026-07-28 era: discovery and the notification stream of a stateless client
  "server/discover",
  "subscriptions/listen",
  // a task's state and result (starting one took the scope of its tool; cancelling one needs ccb:write)
  "tasks/get",
  "tasks/list",
  "tasks/result",
]);

/** The scope one JSON-RPC message needs. Responses and notifications need only `ccb:read`. */
export function scopeNeeded(message: unknown, tools: readonly AnyToolDef[]): string {
  if (typeof message !== "object" || message === null) return SCOPE_READ;
  const m = message as { method?: unknown; id?: unknown; params?: { name?: unknown } };
  if (typeof m.method !== "string" || m.id === undefined) return SCOPE_READ;
  if (m.method === "tools/call") {
    const name = m.params?.name;
    const def = tools.find((t) => t.name === name);
    // An unknown tool is answered by the server (InvalidParams) and runs nothing.
    if (!def) return SCOPE_READ;
    return def.annotations.readOnlyHint === true && def.name !== APP_TOOL ? SCOPE_READ : SCOPE_WRITE;
  }
  return READ_METHODS.has(m.method) ? SCOPE_READ : SCOPE_WRITE;
}

/** Whether `granted` covers `needed` (`ccb:write` includes `ccb:read`). */
export function scopeCovers(granted: readonly string[], needed: string): boolean {
  return granted.includes(needed) || (needed === SCOPE_READ && granted.includes(SCOPE_WRITE));
}

/**
 * Before dispatch: when the request came in with an OAuth access token (the gateway verified it),
 * refuse a message (or batch) that needs a scope the token lacks with 403 insufficient_scope naming
 * the scope. Returns true when it answered. Requests without an OAuth identity are not scoped.
 * Tool calls are logged with who made them (`sub`, client id), allowed or refused; never the token.
 */
export function refuseByScope(
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  tools: readonly AnyToolDef[],
  log?: Logger,
): boolean {
  const identity = identityOf(req);
  if (!identity) return false;
  const who = `sub=${identity.extra.sub ?? "-"} client=${identity.clientId || "-"}`;
  for (const message of Array.isArray(body) ? body : [body]) {
    const needed = scopeNeeded(message, tools);
    const what = describe(message);
    const isCall = (message as { method?: unknown })?.method === "tools/call";
    if (scopeCovers(identity.scopes, needed)) {
      if (isCall) log?.info(`oauth: ${who} calls ${what}`);
      continue;
    }
    log?.info(`oauth: ${who} refused ${what} (needs ${needed})`);
    const id = (message as { id?: unknown }).id;
    refuseInsufficientScope(
      req,
      res,
      needed,
      `Forbidden: ${what} needs the OAuth scope ${needed}; this token has ${identity.scopes.join(" ") || "none"}.`,
      typeof id === "string" || typeof id === "number" ? id : null,
    );
    return true;
  }
  return false;
}

function describe(message: unknown): string {
  const m = message as { method?: unknown; params?: { name?: unknown } };
  if (m?.method === "tools/call" && typeof m.params?.name === "string")
    return `the tool ${m.params.name.slice(0, 100)}`;
  return typeof m?.method === "string" ? m.method.slice(0, 100) : "this request";
}
