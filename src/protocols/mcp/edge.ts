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
import { errorResponse, isJsonRpcId, JsonRpcCode } from "../../util/jsonrpc.ts";

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
  if (version !== undefined && !(MODERN_PROTOCOL_VERSIONS as readonly string[]).includes(version)) {
    return {
      code: RpcCode.UnsupportedProtocolVersion,
      message: `Unsupported protocol version: ${version.slice(0, 64)}. This server speaks ${MODERN_PROTOCOL_VERSIONS.join(", ")} (stateless) and 2025-11-25 or older (with initialize).`,
      data: { supported: [...MODERN_PROTOCOL_VERSIONS], requested: version.slice(0, 64) },
    };
  }
  const removed = version !== undefined && REMOVED_IN_STATELESS_ERA.has(message.method);
  const schema = removed ? undefined : REQUEST_SCHEMAS.get(message.method);
  const issues = schema ? specIssues(schema, message) : undefined;
  if (issues) {
    return {
      code: RpcCode.InvalidParams,
      message: `Invalid params for ${message.method}: ${formatIssues(issues, { root: "params", under: "params", max: 5 })}`,
    };
  }
  return undefined;
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
 * answering refusals itself, so whatever serves the connection (the SDK's `serveStdio`, a legacy
 * HTTP session) only ever sees requests that passed the edge.
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
