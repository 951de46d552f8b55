import { DEFAULT_NEGOTIATED_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/server";
import { z } from "zod";
import { maskDeep } from "../../core/secret-vault.ts";
import { argumentErrorText, catalogOf, formatIssues, inputSchema, toolFailure } from "../../tools/kernel.ts";
import { errorResponse, idMember, isJsonRpcId, JsonRpcCode, type JsonRpcId } from "../../util/jsonrpc.ts";
import { CLAUDE_HINT_NAMES } from "./hint-names.ts";

/**
 * The JSON-RPC 2.0 / MCP subset the Claude Code IDE protocol uses, over one connection:
 * `initialize`, `ping`, `tools/list`, `tools/call`, `notifications/initialized`,
 * `notifications/cancelled`; any other notification (`ide_connected`, `log_event`, ...) is accepted
 * silently, any other request gets -32601. Every inbound message is validated with zod before
 * dispatch; tool arguments against each tool's schema. (The SDK's McpServer does the same with
 * more work per call: about 37 us of CPU against 24 us here, measured in-process under load; the
 * IDE socket is meant to stay close to a raw WebSocket round trip.)
 */

const Id = z.union([z.string(), z.number().int()]);
const Envelope = z.object({
  jsonrpc: z.literal("2.0"),
  id: Id.optional(),
  method: z.string().optional(),
  params: z.record(z.string(), z.unknown()).optional(),
  result: z.unknown().optional(),
  error: z.unknown().optional(),
});
const InitializeParams = z.object({
  protocolVersion: z.string(),
  capabilities: z.record(z.string(), z.unknown()).optional(),
  clientInfo: z.object({ name: z.string(), version: z.string() }).loose().optional(),
});
const CallParams = z.object({
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()).optional(),
  _meta: z.record(z.string(), z.unknown()).optional(),
});
const CancelledParams = z.object({ requestId: Id, reason: z.string().optional() });

export interface RpcTool {
  name: string;
  description: string;
  input: z.ZodObject;
}

export interface RpcHandlers<T extends RpcTool> {
  tools: readonly T[];
  serverInfo: { name: string; version: string };
  /** Run a tool with parsed arguments; a thrown error becomes an isError result via `toolError`. */
  callTool(tool: T, args: unknown, signal: AbortSignal): Promise<Record<string, unknown>>;
  toolError(message: string): Record<string, unknown>;
  onInitialized(): void;
  onNotification(method: string, params: Record<string, unknown> | undefined): void;
  onRequest?(method: string, toolName: string | undefined): void;
}

/** A tool as the IDE's tools/list shows it (name, description, the kernel's input schema). */
function ideEntry(t: RpcTool): { name: string; description: string; inputSchema: Record<string, unknown> } {
  return { name: t.name, description: t.description, inputSchema: inputSchema(t.input) };
}

/** tools/list entries in the IDE's shape, built once per tool list. */
export function ideToolList(tools: readonly RpcTool[]): unknown[] {
  return catalogOf(tools).list(ideEntry);
}

/** Issues of a JSON-RPC envelope or params: every one, the whole value named "(root)". */
const ROOT = { root: "(root)", max: Number.POSITIVE_INFINITY };

export class RpcSession<T extends RpcTool> {
  readonly #send: (text: string) => void;
  /** The client's name from `initialize` (its `clientInfo`), once it said. */
  clientName: string | undefined;
  readonly #h: RpcHandlers<T>;
  readonly #byName: Map<string, T>;
  readonly #inflight = new Map<string | number, AbortController>();
  #closed = false;

  constructor(send: (text: string) => void, handlers: RpcHandlers<T>) {
    this.#send = send;
    this.#h = handlers;
    this.#byName = new Map(handlers.tools.map((t) => [t.name, t]));
  }

  /** One inbound text frame. */
  receive(text: string): void {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      this.#error(null, JsonRpcCode.ParseError, "Parse error: not JSON");
      return;
    }
    const env = Envelope.safeParse(json);
    if (!env.success) {
      const id = idMember(json);
      this.#error(
        isJsonRpcId(id) ? id : null,
        JsonRpcCode.InvalidRequest,
        `Invalid JSON-RPC message: ${formatIssues(env.error.issues, ROOT)}`,
      );
      return;
    }
    const m = env.data;
    if (m.method === undefined) return; // a response: we send no requests
    if (m.id === undefined) {
      this.#notification(m.method, m.params);
      return;
    }
    void this.#request(m.id, m.method, m.params);
  }

  /** The connection ended: cancel everything still running. */
  close(): void {
    this.#closed = true;
    for (const c of this.#inflight.values()) c.abort();
    this.#inflight.clear();
  }

  /** Send a notification to the client. */
  notify(method: string, params: Record<string, unknown>): void {
    if (!this.#closed) this.#send(JSON.stringify({ jsonrpc: "2.0", method, params }));
  }

  #notification(method: string, params: Record<string, unknown> | undefined): void {
    if (method === "notifications/initialized") this.#h.onInitialized();
    else if (method === "notifications/cancelled") {
      const p = CancelledParams.safeParse(params);
      if (p.success) this.#inflight.get(p.data.requestId)?.abort();
    } else this.#h.onNotification(method, params);
  }

  async #request(id: string | number, method: string, params: Record<string, unknown> | undefined): Promise<void> {
    switch (method) {
      case "initialize": {
        this.#h.onRequest?.(method, undefined);
        const p = InitializeParams.safeParse(params ?? {});
        if (!p.success)
          return this.#error(
            id,
            JsonRpcCode.InvalidParams,
            `Invalid initialize params: ${formatIssues(p.error.issues, ROOT)}`,
          );
        this.clientName = p.data.clientInfo?.name || undefined;
        const v = p.data.protocolVersion;
        const protocolVersion = SUPPORTED_PROTOCOL_VERSIONS.includes(v) ? v : DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
        return this.#result(id, { protocolVersion, capabilities: { tools: {} }, serverInfo: this.#h.serverInfo });
      }
      case "ping":
        return this.#result(id, {});
      case "tools/list":
        this.#h.onRequest?.(method, undefined);
        return this.#result(id, { tools: ideToolList(this.#h.tools) });
      case "tools/call":
        return this.#call(id, params);
      default:
        this.#h.onRequest?.(method.slice(0, 100), undefined);
        return this.#error(id, JsonRpcCode.MethodNotFound, `Method not found: ${method}`);
    }
  }

  async #call(id: string | number, params: Record<string, unknown> | undefined): Promise<void> {
    const p = CallParams.safeParse(params ?? {});
    if (!p.success)
      return this.#error(
        id,
        JsonRpcCode.InvalidParams,
        `Invalid tools/call params: ${formatIssues(p.error.issues, ROOT)}`,
      );
    this.#h.onRequest?.("tools/call", p.data.name);
    const tool = this.#byName.get(p.data.name);
    if (!tool) return this.#error(id, JsonRpcCode.InvalidParams, `Tool ${p.data.name} not found`);
    const args = tool.input.safeParse(p.data.arguments ?? {});
    if (!args.success) return this.#result(id, this.#h.toolError(argumentErrorText(tool.name, args.error)));
    const controller = new AbortController();
    this.#inflight.set(id, controller);
    try {
      const result = await this.#h.callTool(tool, args.data, controller.signal);
      if (!controller.signal.aborted) this.#result(id, result);
    } catch (err) {
      if (!controller.signal.aborted)
        this.#result(id, this.#h.toolError(toolFailure(tool.name, err).toUserText(CLAUDE_HINT_NAMES)));
    } finally {
      if (this.#inflight.get(id) === controller) this.#inflight.delete(id);
    }
  }

  #result(id: string | number, result: unknown): void {
    // Tool results leave for the model here: every current secret value is masked.
    if (!this.#closed) this.#send(JSON.stringify({ jsonrpc: "2.0", id, result: maskDeep(result) }));
  }

  #error(id: JsonRpcId | null, code: number, message: string): void {
    if (!this.#closed) this.#send(JSON.stringify(errorResponse(id, code, message)));
  }
}
