/**
 * JSON-RPC 2.0 pieces every wire of ccb shares (MCP stdio and edge, ACP framing, link, the IDE
 * socket): the error codes, what a request id is, which id an error reply echoes, and the error
 * reply itself. Lines are split by ndjson.ts; an oversized frame's id is read by frame-id.ts.
 */

/** The error codes of JSON-RPC 2.0 (section 5.1). */
export const JsonRpcCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
} as const;

/**
 * The implementation-defined server errors (-32000 to -32099) ccb's HTTP edge answers with, as the
 * MCP SDKs do: a request the edge will not serve, and one without credentials, scope or session.
 */
export const ServerErrorCode = {
  Refused: -32000,
  NotAuthorized: -32001,
} as const;

export type JsonRpcId = string | number;

/** Longest string id echoed in a reply to a message ccb refuses. */
const MAX_ECHOED_ID_CHARS = 256;

/** A request id as JSON-RPC 2.0 defines it: a string or a number. */
export function isJsonRpcId(v: unknown): v is JsonRpcId {
  return typeof v === "string" || (typeof v === "number" && Number.isFinite(v));
}

/**
 * The id an error reply to a refused message carries: its id when that is a string of at most 256
 * characters or a safe integer, else null (as JSON-RPC prescribes when the id cannot be read).
 */
export function echoedId(v: unknown): JsonRpcId | null {
  if (typeof v === "string") return v.length <= MAX_ECHOED_ID_CHARS ? v : null;
  return typeof v === "number" && Number.isSafeInteger(v) ? v : null;
}

/** The `id` member of a parsed message, when it is an object (anything else has none). */
export function idMember(message: unknown): unknown {
  return message !== null && typeof message === "object" && !Array.isArray(message)
    ? (message as { id?: unknown }).id
    : undefined;
}

/** A JSON-RPC error response. */
export function errorResponse(
  id: JsonRpcId | null,
  code: number,
  message: string,
  data?: unknown,
): { jsonrpc: "2.0"; id: JsonRpcId | null; error: { code: number; message: string; data?: unknown } } {
  return { jsonrpc: "2.0", id, error: data === undefined ? { code, message } : { code, message, data } };
}
