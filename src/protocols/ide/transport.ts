import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { RawData, WebSocket } from "ws";

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
      message = JSONRPCMessageSchema.parse(JSON.parse(raw.toString("utf8")));
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

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.#closed || this.#ws.readyState !== this.#ws.OPEN) {
        reject(new Error("connection closed"));
        return;
      }
      this.#ws.send(JSON.stringify(message), (err) => (err ? reject(err) : resolve()));
    });
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
