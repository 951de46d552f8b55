import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { Core } from "../../core/core.ts";
import type { Logger } from "../../core/log.ts";
import { maskDeep } from "../../core/secret-vault.ts";
import { CCB_VERSION } from "../../core/version.ts";
import { workspaceTools } from "../../tools/catalog.ts";
import { type AnyToolDef, catalogOf, inputSchema, parseArguments, runTool } from "../../tools/kernel.ts";
import { registerWorkbenchApp } from "./app/resource.ts";
import type { AppState } from "./app/state.ts";
import { appToolMeta, checkAppToolReady, linkAppTool } from "./app/tool-link.ts";
import { mcpHintNames, toolErrorResult } from "./errors.ts";

export interface McpServerOptions {
  core: Core;
  /** Defaults to the workspace tool registry. */
  tools?: readonly AnyToolDef[];
  log?: Logger;
  /** The MCP App of a `ccb serve` configured with a workbench (its resource, and vscode_open linked to it). */
  app?: AppState | undefined;
}

const INSTRUCTIONS =
  "ccb gives you a confined workspace: files (fs_*), search (fs_search), terminals (terminal_*), git (git_*), " +
  "and the live editor (editor_*, diagnostics_get, vscode_*, extensions_*) when a workbench is connected. " +
  "Every path is relative to the workspace root (or absolute inside a root). Call workspace_status first to see the roots " +
  "and whether the editor bridge is connected. Failed calls return isError results whose text says what to do next.";

/**
 * The MCP front end of the core: one `Server` per connection (stdio, or one per HTTP session),
 * listing every tool of the registry and dispatching `tools/call` to it.
 *
 * It uses the SDK's protocol-level `Server` rather than `McpServer.registerTool`: `McpServer`
 * turns an unknown tool and invalid arguments into `isError` results, whereas ccb answers both
 * with a JSON-RPC InvalidParams (-32602) error that says what is wrong, and maps every failure of a
 * known tool exactly once (errors.ts). Tool input schemas are the tools' own zod schemas.
 */
export function createMcpServer(options: McpServerOptions): Server {
  const tools = options.tools ?? workspaceTools;
  const log = options.log ?? options.core.log.child("mcp");
  const catalog = toolCatalog(tools);
  const hintNames = mcpHintNames((name) => catalog.byName.has(name));
  const server = new Server(
    { name: "ccb", title: "ccb workspace", version: CCB_VERSION },
    // logging: the SDK answers logging/setLevel and filters what sendLoggingMessage sends per session.
    { capabilities: { tools: { listChanged: false }, logging: {} }, instructions: INSTRUCTIONS },
  );
  server.onerror = (err) => log.debug(`protocol: ${err.message}`);

  // The MCP App (ui://ccb/workbench.html) is a property of the server: offered to every session of
  // a serve configured with a workbench, from its start; without one, tools do not point hosts at
  // a resource that is not there.
  const app = options.app?.offered() ? options.app : undefined;
  if (app) registerWorkbenchApp(server, app);
  const listed = app ? catalog.list.map(linkAppTool) : catalog.list;
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const name = request.params.name;
    const def = catalog.byName.get(name);
    if (!def) {
      throw new InvalidParams(`Unknown tool "${truncate(name, 100)}". Call tools/list to see the available tools.`);
    }
    const parsed = parseArguments(def, request.params.arguments);
    if (!parsed.ok) throw new InvalidParams(parsed.message);
    try {
      if (app) checkAppToolReady(name, app, options.core);
      const result = await runTool(def, parsed.args, { core: options.core, signal: extra.signal, log });
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
      if (code === "INTERNAL") {
        void server
          .sendLoggingMessage(
            { level: "error", logger: "ccb", data: `tool ${name} failed unexpectedly` },
            extra.sessionId,
          )
          .catch(() => {});
      }
      return maskDeep(result);
    }
  });
  return server;
}

/** A JSON-RPC InvalidParams error whose message is exactly what the caller needs to fix. */
class InvalidParams extends Error {
  readonly code = ErrorCode.InvalidParams;
}

interface Catalog {
  list: Tool[];
  byName: Map<string, AnyToolDef>;
}

const catalogs = new WeakMap<readonly AnyToolDef[], Catalog>();

/** The tools/list payload, computed once per tool list (input schemas from the kernel's cache). */
export function toolCatalog(tools: readonly AnyToolDef[]): Catalog {
  const cached = catalogs.get(tools);
  if (cached) return cached;
  const kernel = catalogOf(tools);
  const list: Tool[] = kernel.tools.map((def) => ({
    name: def.name,
    title: def.title,
    description: def.description,
    inputSchema: inputSchema(def.input) as Tool["inputSchema"],
    annotations: { title: def.title, ...def.annotations },
    ...(def.meta ? { _meta: def.meta } : {}),
  }));
  const catalog = { list, byName: new Map(kernel.tools.map((t) => [t.name, t])) };
  catalogs.set(tools, catalog);
  return catalog;
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}
