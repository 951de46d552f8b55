import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  type JSONRPCMessage,
  type JSONRPCRequest,
  ListToolsRequestSchema,
  PingRequestSchema,
  SetLevelRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { formatIssues } from "../../tools/kernel.ts";

interface Issue {
  path: readonly PropertyKey[];
  message: string;
}
interface RequestSchema {
  safeParse(value: unknown): { success: true } | { success: false; error: { issues: readonly Issue[] } };
}

/** The requests ccb answers, by method: their params are validated here, before dispatch. */
const REQUEST_SCHEMAS = new Map<string, RequestSchema>([
  ["initialize", InitializeRequestSchema],
  ["ping", PingRequestSchema],
  ["tools/list", ListToolsRequestSchema],
  ["tools/call", CallToolRequestSchema],
  ["logging/setLevel", SetLevelRequestSchema],
] as Array<[string, RequestSchema]>);

/**
 * Connect `server` to `transport`, then validate every inbound request of a known method at the
 * edge: bad params get a JSON-RPC InvalidParams (-32602) error saying which field is wrong, in
 * one place, instead of the SDK's InternalError (-32603) carrying a raw schema dump.
 */
export async function connectValidated(server: Server, transport: Transport): Promise<void> {
  await server.connect(transport);
  const next = transport.onmessage;
  if (!next) throw new Error("the MCP server did not attach to the transport");
  transport.onmessage = (message: JSONRPCMessage, extra) => {
    // The transport has validated the message as JSON-RPC: a request is one with a method and an id
    // (a structural test here instead of a second schema parse of every message).
    if (isRequest(message)) {
      const schema = REQUEST_SCHEMAS.get(message.method);
      const parsed = schema?.safeParse(message);
      if (parsed && !parsed.success) {
        const reply = {
          jsonrpc: "2.0" as const,
          id: message.id,
          error: {
            code: ErrorCode.InvalidParams,
            message: `Invalid params for ${message.method}: ${formatIssues(parsed.error.issues, { root: "params", under: "params", max: 5 })}`,
          },
        };
        void transport.send(reply, { relatedRequestId: message.id }).catch(() => {});
        return;
      }
    }
    next(message, extra);
  };
}

function isRequest(message: JSONRPCMessage): message is JSONRPCRequest {
  return "method" in message && "id" in message;
}
