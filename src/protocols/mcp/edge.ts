import {
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
  PROTOCOL_VERSION_META_KEY,
  specTypeSchemas,
  type Transport,
  type TransportSendOptions,
} from "@modelcontextprotocol/server";
import { formatIssues } from "../../tools/kernel.ts";
import { echoedId, errorResponse, idMember, isJsonRpcId, JsonRpcCode, type JsonRpcId } from "../../util/jsonrpc.ts";

/**
 * The protocol revisions of the stateless era (no handshake; every request carries its version and
 * the client's capabilities in `params._meta`) that ccb serves, newest first. The 2025-era versions
 * (`initialize` handshake) are the SDK's SUPPORTED_PROTOCOL_VERSIONS.
 */
export const MODERN_PROTOCOL_VERSIONS = ["2026-07-28"] as const;

/** JSON-RPC error codes ccb answers at the edge (JSON-RPC 2.0 and MCP 2026-07-28). */
export const RpcCode = {
  ...JsonRpcCode,
  /** MCP 2026-07-28: the request names a protocol version this server does not speak. */
  UnsupportedProtocolVersion: -32022,
} as const;

interface Issue {
  path: readonly PropertyKey[];
  message: string;
}
/** The SDK's spec schemas, by their Standard Schema face (synchronous). */
interface SpecSchema {
  "~standard": {
    validate(value: unknown): { issues?: readonly { path?: readonly unknown[]; message: string }[] } | Promise<unknown>;
  };
}

/** The issues of `value` against one of the SDK's spec schemas (undefined when it conforms). */
export function specIssues(schema: SpecSchema, value: unknown): Issue[] | undefined {
  const result = schema["~standard"].validate(value);
  if (result instanceof Promise) return undefined;
  const issues = (result as { issues?: readonly { path?: readonly unknown[]; message: string }[] }).issues;
  if (!issues) return undefined;
  return issues.map((i) => ({
    message: i.message,
    path: (i.path ?? []).map((p) =>
      typeof p === "object" && p !== null && "key" in p ? (p as { key: PropertyKey }).key : (p as PropertyKey),
    ),
  }));
}

/** The requests ccb answers, by method: their params are validated here, before dispatch, in both eras. */
const REQUEST_SCHEMAS = new Map<string, SpecSchema>([
  ["initialize", specTypeSchemas.InitializeRequest],
  ["server/discover", specTypeSchemas.DiscoverRequest],
  ["ping", specTypeSchemas.PingRequest],
  ["tools/list", specTypeSchemas.ListToolsRequest],
  ["tools/call", specTypeSchemas.CallToolRequest],
  ["resources/list", specTypeSchemas.ListResourcesRequest],
  ["resources/read", specTypeSchemas.ReadResourceRequest],
  ["logging/setLevel", specTypeSchemas.SetLevelRequest],
] as Array<[string, SpecSchema]>);

/**
 * Methods of the 2025 era that the stateless era removed: a request claiming a 2026 version is not
 * validated against their schemas, so it is answered as the SDK answers every method it does not
 * serve (-32601; on HTTP, 404), not as a call with bad params.
 */
const REMOVED_IN_STATELESS_ERA = new Set(["initialize", "ping", "logging/setLevel"]);

export interface EdgeRefusal {
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

/** The protocol version a request claims in its `_meta` envelope (the stateless era), if any. */
export function claimedVersion(message: unknown): string | undefined {
  const params = (message as { params?: { _meta?: Record<string, unknown> } } | null)?.params;
  const v = params?._meta?.[PROTOCOL_VERSION_META_KEY];
  return typeof v === "string" ? v : undefined;
}

/**
 * The one check of an inbound request before any server sees it, for both eras and both transports:
 * a stateless-era request naming a version ccb does not speak gets -32022 with the versions it
 * does (the SDK checks this only on a connection's first message), and bad params of a known
 * method get -32602 saying which field is wrong, in one text (instead of a raw schema dump).
 */
export function refuseRequest(message: JSONRPCRequest): EdgeRefusal | undefined {
  const version = claimedVersion(message);
  return versionRefusal(version) ?? paramsRefusal(message, requestSchemaOf(message.method, version));
}

/** -32022 for a stateless-era version ccb does not speak (undefined: no claim, or one it speaks). */
function versionRefusal(version: string | undefined): EdgeRefusal | undefined {
  if (version === undefined || (MODERN_PROTOCOL_VERSIONS as readonly string[]).includes(version)) return undefined;
  return {
    code: RpcCode.UnsupportedProtocolVersion,
    message: `Unsupported protocol version: ${version.slice(0, 64)}. This server speaks ${MODERN_PROTOCOL_VERSIONS.join(", ")} (stateless) and 2025-11-25 or older (with initialize).`,
    data: { supported: [...MODERN_PROTOCOL_VERSIONS], requested: version.slice(0, 64) },
  };
}

/** The schema a request of `method` is checked against at the edge, in the era its claim names. */
function requestSchemaOf(method: string, version: string | undefined): SpecSchema | undefined {
  return version !== undefined && REMOVED_IN_STATELESS_ERA.has(method) ? undefined : REQUEST_SCHEMAS.get(method);
}

/** -32602 naming the wrong fields when `message` does not conform to `schema`. */
function paramsRefusal(message: { method: string }, schema: SpecSchema | undefined): EdgeRefusal | undefined {
  const issues = schema ? specIssues(schema, message) : undefined;
  if (!issues) return undefined;
  return {
    code: RpcCode.InvalidParams,
    message: `Invalid params for ${message.method}: ${formatIssues(issues, { root: "params", under: "params", max: 5 })}`,
  };
}

/** What the one pass over an inbound message decided: deliver it, or answer `id` with a refusal. */
export type Admission =
  | { message: JSONRPCMessage; refusal?: undefined }
  | { refusal: EdgeRefusal; id: JsonRpcId | null; frame: boolean };

const NOT_JSON_RPC: EdgeRefusal = {
  code: RpcCode.InvalidRequest,
  message: "Invalid Request: the frame is not a JSON-RPC 2.0 request, notification or response.",
};

/**
 * The one check of a parsed inbound value on a transport that frames messages itself (stdio), in
 * one pass where `specTypeSchemas.JSONRPCMessage` and then `refuseRequest` walked it twice. A
 * request of a method ccb answers, in the plain shape (members `jsonrpc` "2.0", an integer or
 * string `id`, `method`, an object or no `params`), is walked by that method's schema alone, which
 * extends the spec's Request schema (params and `_meta` included). Anything else (a notification,
 * a response, a request of another method, an odd shape), and any request its method's schema
 * refuses, takes the two checks as before, so every answer (-32600 for what is no JSON-RPC
 * message, -32022, -32602) stays exactly what it was. `frame` is true for -32600.
 */
export function admitMessage(value: unknown): Admission {
  if (isPlainRequest(value)) {
    const version = claimedVersion(value);
    const schema = requestSchemaOf(value.method, version);
    if (schema && versionRefusal(version) === undefined && specIssues(schema, value) === undefined) {
      return { message: value };
    }
  }
  if (specIssues(specTypeSchemas.JSONRPCMessage, value)) {
    return { refusal: NOT_JSON_RPC, id: echoedId(idMember(value)), frame: true };
  }
  const refusal = isRequest(value) ? refuseRequest(value) : undefined;
  return refusal && isRequest(value) ? { refusal, id: value.id, frame: false } : { message: value as JSONRPCMessage };
}

const REQUEST_MEMBERS = new Set(["jsonrpc", "id", "method", "params"]);

/** A request in the shape the spec's JSON-RPC envelope admits, checked by hand (the method's schema checks the rest). */
function isPlainRequest(value: unknown): value is JSONRPCRequest {
  if (!isRequest(value) || (value as { jsonrpc?: unknown }).jsonrpc !== "2.0" || !isSpecId(value.id)) return false;
  const params = (value as { params?: unknown }).params;
  if (params !== undefined && (params === null || typeof params !== "object" || Array.isArray(params))) return false;
  for (const key in value) if (!REQUEST_MEMBERS.has(key)) return false;
  return true;
}

/** A request id as the spec's schema has it: a string or a safe integer (zod's int). */
function isSpecId(id: unknown): boolean {
  return typeof id === "string" || Number.isSafeInteger(id);
}

/** A JSON-RPC request (a method and an id), from any parsed value. */
export function isRequest(message: unknown): message is JSONRPCRequest {
  return (
    message !== null &&
    typeof message === "object" &&
    !Array.isArray(message) &&
    typeof (message as { method?: unknown }).method === "string" &&
    isJsonRpcId((message as { id?: unknown }).id)
  );
}

/**
 * A transport that applies `refuseRequest` to every inbound request of the transport it wraps,
 * answering refusals itself, so whatever serves the connection (a 2025-era HTTP session) only ever
 * sees requests that passed the edge. stdio frames and checks each message in one pass instead
 * (`admitMessage` in LineStdioTransport).
 */
export class ValidatingTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  readonly #inner: Transport;
  /** Settles when the wrapped transport has closed (whoever serves the connection is told first). */
  readonly closed: Promise<void>;

  constructor(inner: Transport) {
    this.#inner = inner;
    let closed!: () => void;
    this.closed = new Promise<void>((resolve) => {
      closed = resolve;
    });
    inner.onclose = () => {
      this.onclose?.();
      closed();
    };
    inner.onerror = (err) => this.onerror?.(err);
    inner.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
      const refusal = isRequest(message) ? refuseRequest(message) : undefined;
      if (refusal && isRequest(message)) {
        const reply = errorResponse(message.id, refusal.code, refusal.message, refusal.data) as JSONRPCMessage;
        void inner.send(reply, { relatedRequestId: message.id }).catch(() => {});
        return;
      }
      this.onmessage?.(message, extra);
    };
  }

  get sessionId(): string | undefined {
    return this.#inner.sessionId;
  }

  get hasPerRequestStream(): boolean | undefined {
    return this.#inner.hasPerRequestStream;
  }

  setProtocolVersion(version: string): void {
    this.#inner.setProtocolVersion?.(version);
  }

  setSupportedProtocolVersions(versions: string[]): void {
    this.#inner.setSupportedProtocolVersions?.(versions);
  }

  start(): Promise<void> {
    return this.#inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.#inner.send(message, options);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}
