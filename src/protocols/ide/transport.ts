import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  JSONRPCErrorResponseSchema,
  JSONRPCResultResponseSchema,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import type { RawData, WebSocket } from "ws";

/**
 * The envelope check of one inbound JSON-RPC message. Requests are then validated with zod by the
 * SDK against the schema of their method (initialize, tools/list, tools/call) and tool arguments
 * against each tool's schema, so the full JSONRPCMessage union (about 12 us a message) is not
 * parsed twice; notifications without a handler are dropped unread.
 */
export function parseJsonRpc(value: unknown): JSONRPCMessage {
  const v = value as Record<string, unknown> | null;
  if (v === null || typeof v !== "object" || Array.isArray(v) || v.jsonrpc !== "2.0") throw new Error("not a JSON-RPC 2.0 object");
  if ("method" in v) {
    if (typeof v.method !== "string") throw new Error("method must be a string");
    if ("id" in v && typeof v.id !== "string" && typeof v.id !== "number") throw new Error("id must be a string or a number");
    if ("params" in v && (v.params === null || typeof v.params !== "object")) throw new Error("params must be an object");
    return v as unknown as JSONRPCMessage;
  }
  if ("error" in v) return JSONRPCErrorResponseSchema.parse(v) as JSONRPCMessage;
  return JSONRPCResultResponseSchema.parse(v) as JSONRPCMessage;
}

/**
 * The MCP SDK's Transport over one accepted WebSocket (one transport per connection). Each text
 * frame is one JSON-RPC message, validated with the SDK's schema before it reaches the server.
 */
export class WebSocketServerTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined;
  /** Every inbound message before dispatch (the server uses it to see `notifications/initialized`). */
  onraw?: ((message: JSONRPCMessage) => void) | undefined;

  readonly #ws: WebSocket;
  #closed = false;

  constructor(ws: WebSocket) {
    this.#ws = ws;
  }

  async start(): Promise<void> {
    this.#ws.on("message", (data: RawData, isBinary: boolean) => this.#receive(data, isBinary));
    this.#ws.on("close", () => this.#finish());
    this.#ws.on("error", (err) => this.onerror?.(err));
  }

  #receive(data: RawData, isBinary: boolean): void {
    if (isBinary) {
      this.onerror?.(new Error("binary frame ignored"));
      return;
    }
    let message: JSONRPCMessage;
    try {
      const raw = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      message = parseJsonRpc(JSON.parse(raw.toString("utf8")));
    } catch (err) {
      this.#sendParseError();
      this.onerror?.(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    this.onraw?.(message);
    this.onmessage?.(message);
  }

  #sendParseError(): void {
    if (this.#ws.readyState !== this.#ws.OPEN) return;
    this.#ws.send(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error: not a JSON-RPC message" } }));
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed || this.#ws.readyState !== this.#ws.OPEN) throw new Error("connection closed");
    // Write errors surface as a socket 'error'/'close' (onerror/onclose), not per message.
    this.#ws.send(JSON.stringify(message));
  }

  async close(): Promise<void> {
    if (this.#ws.readyState === this.#ws.OPEN || this.#ws.readyState === this.#ws.CONNECTING) this.#ws.close(1000);
    this.#finish();
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.();
  }
}
