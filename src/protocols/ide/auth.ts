import type { EdgePolicy } from "../../net/policy.ts";

/** The header Claude Code sends its token in. */
export const AUTH_HEADER = "x-claude-code-ide-authorization";

/**
 * The IDE socket's edge policy, checked by the gateway on the HTTP upgrade request BEFORE any
 * WebSocket handshake (a client that fails gets a plain HTTP error, never a 101, so no JSON-RPC is
 * processed for it): loopback Host, no Origin at all (the CLI sends none; any Origin is a browser),
 * the token in its header (constant-time), the `mcp` subprotocol.
 */
export function idePolicy(authToken: string, maxFrameBytes: number): EdgePolicy {
  return {
    name: "ide",
    origin: { kind: "none" },
    auth: [{ places: [{ in: "header", name: AUTH_HEADER }], expected: () => authToken }],
    subprotocol: "mcp",
    maxFrameBytes,
    style: "text",
    messages: {
      ORIGIN_REFUSED: "browser origin refused",
      HOST_REFUSED: "foreign host refused",
      TOKEN_MISSING: "missing or wrong auth token",
      TOKEN_WRONG: "missing or wrong auth token",
    },
  };
}
