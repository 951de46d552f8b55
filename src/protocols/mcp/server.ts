import { randomBytes } from "node:crypto";
import { getUiCapability } from "@modelcontextprotocol/ext-apps/server";
import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  type ClientCapabilities,
  ProtocolError,
  Server,
  type ServerContext,
  type Tool,
} from "@modelcontextprotocol/server";
import type { Caller } from "../../core/checkpoints/index.ts";
import type { Core } from "../../core/core.ts";
import { liveClientsOf } from "../../core/live-clients.ts";
import type { Logger } from "../../core/log.ts";
import { maskDeep } from "../../core/secret-vault.ts";
import { CCB_VERSION } from "../../core/version.ts";
import { workspaceTools } from "../../tools/catalog.ts";
import {
  type AnyToolDef,
  catalogOf,
  inputSchema,
  type Parsed,
  parseArguments,
  runTool,
  type ToolCatalog,
} from "../../tools/kernel.ts";
import type { AppState } from "./app/app-state.ts";
import { MCP_APP_MIME, registerWorkbenchApp } from "./app/resource.ts";
import { appToolMeta, checkAppToolReady, linkAppTool } from "./app/tool-link.ts";
import { RpcCode } from "./edge.ts";
import { mcpHintNames, toolErrorResult } from "./errors.ts";
import { progressReporter } from "./progress.ts";

export interface McpServerOptions {
  core: Core;
  /** Defaults to the workspace tool registry. */
  tools?: readonly AnyToolDef[];
  log?: Logger;
  /** The MCP App of a `ccb serve` configured with a workbench (its resource, and vscode_open linked to it). */
  app?: AppState | undefined;
  /**
   * This server answers one stateless request (2026-07-28 over HTTP): its client is listed among
   * the connected ones while it keeps making requests, until `idleMs` without one.
   */
  perRequest?: { idleMs: number };
}

const INSTRUCTIONS =
  "ccb gives you a confined workspace: files (fs_*), search (fs_search), terminals (terminal_*), git (git_*), " +
  "and the live editor (editor_*, diagnostics_get, vscode_*, extensions_*) when a workbench is connected. " +
  "Every path is relative to the workspace root (or absolute inside a root). Call workspace_status first to see the roots " +
  "and whether the editor bridge is connected. Failed calls return isError results whose text says what to do next.";

/**
 * The MCP front end of the core: a factory of SDK `Server`s, one per serving unit (a stdio
 * connection, a 2025-era HTTP session, or one 2026-07-28 HTTP request), each listing every tool
 * of the registry and dispatching `tools/call` to it. The same factory serves both protocol eras:
 * what the 2025 era learnt once from `initialize` (the client's capabilities), the 2026 era reads
 * from each request's `_meta` envelope, so every decision below is made per request.
 *
 * It uses the SDK's protocol-level `Server` rather than `McpServer.registerTool`: `McpServer`
 * turns an unknown tool and invalid arguments into `isError` results, whereas ccb answers both
 * with a JSON-RPC InvalidParams (-32602) error that says what is wrong, and maps every failure of a
 * known tool exactly once (errors.ts). Tool input schemas are the tools' own zod schemas.
 */
export function createMcpServer(options: McpServerOptions): Server {
  const tools = options.tools ?? workspaceTools;
  const log = options.log ?? options.core.log.child("mcp");
  const catalog = catalogOf(tools);
  const list = mcpToolList(tools);
  const hintNames = mcpHintNames((name) => catalog.get(name) !== undefined);
  // The MCP App (ui://ccb/workbench.html) is offered by a serve configured with a workbench, from
  // its start; without one, tools do not point hosts at a resource that is not there. The
  // extension is declared in the capabilities (server/discover and initialize alike).
  const app = options.app?.offered() ? options.app : undefined;
  const server = new Server(
    { name: "ccb", title: "ccb workspace", version: CCB_VERSION },
    {
      // logging (2025 era): the SDK answers logging/setLevel and filters what is sent per session.
      // The 2026-07-28 revision deprecates it: there ccb logs to its stderr / --log-file only.
      capabilities: {
        tools: { listChanged: false },
        logging: {},
        ...(app ? { extensions: { [UI_EXTENSION]: { mimeTypes: [MCP_APP_MIME] } } } : {}),
      },
      instructions: INSTRUCTIONS,
    },
  );
  server.onerror = (err) => log.debug(`protocol: ${err.message}`);
  /** This serving unit's id: the session of a stdio connection, which has no session id of its own. */
  const unit = randomBytes(6).toString("hex");
  // Named among the clients connected to this process (the person's "Agent changes" view) from its
  // initialize until its connection closes. A 2026-07-28 client sends no initialize: it is named by
  // its requests' clientInfo, from its first request until its connection closes (stdio) or, over
  // stateless HTTP, until it has made none for `perRequest.idleMs`.
  const live = liveClientsOf(options.core);
  let leave: (() => void) | undefined;
  server.oninitialized = () => {
    leave?.();
    const name = server.getClientVersion()?.name;
    leave = live.add({
      frontEnd: "mcp",
      client: name || "unnamed MCP client",
      session: server.transport?.sessionId ?? unit,
    });
  };
  const connectionKey = `mcp ${unit}`;
  server.onclose = () => {
    leave?.();
    live.end(connectionKey);
  };
  const seen = (ctx: ServerContext) => {
    if (!ctx.mcpReq.envelope) return;
    const caller = callerOf(server, ctx, unit);
    if (options.perRequest)
      live.seen(
        `mcp http ${caller.client}\u0000${caller.identity ?? ""}`,
        { frontEnd: "mcp", client: caller.client },
        options.perRequest.idleMs,
      );
    else live.seen(connectionKey, { frontEnd: "mcp", client: caller.client, session: unit });
  };

  if (app) registerWorkbenchApp(server, app);
  const linked = app ? list.map(linkAppTool) : list;
  server.setRequestHandler("tools/list", (_request, ctx) => {
    seen(ctx);
    return { tools: app && offersApp(ctx) ? linked : list };
  });

  // The SDK checks every tools/call against the spec's schema (after the edge did: stdio.ts,
  // http.ts); the params schema below is the one further check, the tool's own arguments.
  server.setRequestHandler("tools/call", { params: toolCall(catalog) }, async (call, ctx): Promise<CallToolResult> => {
    const { name, def, parsed } = call;
    seen(ctx);
    if (!def) {
      throw new ProtocolError(
        RpcCode.InvalidParams,
        `Unknown tool "${truncate(name, 100)}". Call tools/list to see the available tools.`,
      );
    }
    if (!parsed.ok) throw new ProtocolError(RpcCode.InvalidParams, parsed.message);
    const progress = progressReporter(ctx, name);
    try {
      if (app) checkAppToolReady(name, app, options.core);
      const result = await runTool(def, parsed.args, {
        core: options.core,
        signal: ctx.mcpReq.signal,
        log,
        caller: callerOf(server, ctx, unit),
        ...(progress ? { progress: progress.report } : {}),
      });
      const meta = app ? { ...result.meta, ...appToolMeta(name, app) } : result.meta;
      // Tool results leave for the model here: every current secret value is masked.
      return maskDeep({
        content: [{ type: "text", text: result.text }],
        ...(result.structured ? { structuredContent: result.structured } : {}),
        ...(meta && Object.keys(meta).length > 0 ? { _meta: meta } : {}),
      });
    } catch (err) {
      const result = toolErrorResult(err, name, hintNames);
      const code = (result.structuredContent as { error: { code: string } }).error.code;
      // A 2025-era client hears of an unexpected failure through MCP logging as well; the
      // 2026-07-28 revision has no logging, and the failure is in ccb's own log either way.
      if (code === "INTERNAL" && !ctx.mcpReq.envelope) {
        void server
          .sendLoggingMessage(
            { level: "error", logger: "ccb", data: `tool ${name} failed unexpectedly` },
            ctx.sessionId,
          )
          .catch(() => {});
      }
      return maskDeep(result);
    } finally {
      progress?.stop();
      // Both eras cancel through this signal (notifications/cancelled, or the HTTP request closed).
      if (ctx.mcpReq.signal.aborted) log.debug(`tools/call ${name}: cancelled by the client`);
    }
  });
  return server;
}

/** A tools/call as the handler gets it: the tool named, and its arguments parsed by the tool's schema. */
interface ToolCall {
  name: string;
  def: AnyToolDef | undefined;
  parsed: Parsed<Record<string, unknown>>;
}

/**
 * The params "schema" of tools/call: it looks the tool up and parses the arguments once, with the
 * tool's own zod schema (the kernel's `parseArguments`). Registered this way, the SDK runs it in
 * place of a second pass of the spec's CallToolRequest schema over a request its `tools/call`
 * wrapper has just checked. It never fails itself: an unknown tool or bad arguments reach the
 * handler, which answers each with its own -32602 text, as the kernel words it.
 */
function toolCall(catalog: ToolCatalog<AnyToolDef>) {
  return {
    "~standard": {
      version: 1 as const,
      vendor: "ccb",
      validate(value: unknown): { value: ToolCall } {
        const params = value as { name: string; arguments?: Record<string, unknown> };
        const def = catalog.get(params.name);
        const parsed = def ? parseArguments(def, params.arguments) : { ok: true as const, args: {} };
        return { value: { name: params.name, def, parsed } };
      },
      types: undefined as unknown as { input: unknown; output: ToolCall },
    },
  };
}

/**
 * Who calls, for the workspace's checkpoints: the client's name from `initialize` (2025 era) or the
 * request's `_meta` envelope (2026-07-28), and its session (the HTTP session, else this serving unit).
 */
function callerOf(server: Server, ctx: ServerContext, unit: string): Caller {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const info = (envelope?.[CLIENT_INFO_META_KEY] as { name?: unknown } | undefined) ?? server.getClientVersion();
  const name = typeof info?.name === "string" && info.name !== "" ? info.name : "unnamed MCP client";
  const auth = ctx.http?.authInfo;
  return {
    frontEnd: "mcp",
    client: name,
    session: ctx.sessionId ?? unit,
    ...(auth ? { identity: `sub=${String(auth.extra?.sub ?? "-")} client=${auth.clientId || "-"}` } : {}),
  };
}

/** The MCP Apps extension (io.modelcontextprotocol/ui). */
const UI_EXTENSION = "io.modelcontextprotocol/ui";

/**
 * Whether the client of this request renders MCP Apps, so the App's tool is listed linked to it.
 * 2026-07-28: the request's own `_meta` capabilities say so (negotiated per request: no state, no
 * race). 2025 era: every client is offered the App, as before (hosts that render no Apps ignore
 * the link).
 */
function offersApp(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope;
  if (!envelope) return true;
  const caps = (envelope as Record<string, unknown>)[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
  return getUiCapability(caps)?.mimeTypes?.includes(MCP_APP_MIME) ?? false;
}

/** A tool as MCP's tools/list shows it (input schemas from the kernel's cache). */
function mcpEntry(def: AnyToolDef): Tool {
  return {
    name: def.name,
    title: def.title,
    description: def.description,
    inputSchema: inputSchema(def.input) as Tool["inputSchema"],
    annotations: { title: def.title, ...def.annotations },
    ...(def.meta ? { _meta: def.meta } : {}),
  };
}

/** The tools/list payload of a tool list, built once per list. */
export function mcpToolList(tools: readonly AnyToolDef[]): Tool[] {
  return catalogOf(tools).list(mcpEntry);
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}
