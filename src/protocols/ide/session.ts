import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { WebSocket } from "ws";
import { toCcbError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import type { Workspace } from "../../core/workspace.ts";
import { errorResult, type IdeToolResult } from "./converters.ts";
import type { DiffRegistry } from "./diffs.ts";
import type { IdeEditor } from "./editor.ts";
import type { Notifier } from "./notifications.ts";
import { IDE_TOOLS } from "./tools/index.ts";
import type { AnyIdeTool, IdeToolContext } from "./tools/tool.ts";
import { WebSocketServerTransport } from "./transport.ts";

/**
 * One MCP session per accepted WebSocket: the SDK's McpServer over our transport, with the 12
 * IDE tools and only the `tools` capability. `ide_connected` and `log_event` are accepted silently.
 */

export interface SessionDeps {
  editor: IdeEditor;
  workspace: Workspace;
  diffs: DiffRegistry;
  notifier: Notifier;
  log: Logger;
  serverInfo: { name: string; version: string };
  /** Called with the client's pid from `ide_connected`. */
  onClientPid?: (connectionId: number, pid: number) => void;
  onClosed?: (connectionId: number) => void;
}

/** The one place where tool failures become `isError` results, with a next step for the caller. */
export function failureText(err: unknown): string {
  const e = toCcbError(err);
  if (e.code === "INTERNAL") return e.message;
  return e.toUserText();
}

async function runTool(tool: AnyIdeTool, args: unknown, ctx: IdeToolContext): Promise<IdeToolResult> {
  try {
    return await tool.run(args, ctx);
  } catch (err) {
    ctx.log.debug(`${tool.name} failed: ${(err as Error)?.message ?? String(err)}`);
    return errorResult(failureText(err));
  }
}

export async function attachSession(ws: WebSocket, connectionId: number, deps: SessionDeps): Promise<void> {
  const log = deps.log.child(`client ${connectionId}`);
  const transport = new WebSocketServerTransport(ws);
  const mcp = new McpServer(deps.serverInfo, { capabilities: { tools: {} } });

  for (const tool of IDE_TOOLS) {
    mcp.registerTool(tool.name, { description: tool.description, inputSchema: tool.input }, (args: unknown, extra: { signal: AbortSignal }) =>
      runTool(tool, args, {
        editor: deps.editor,
        workspace: deps.workspace,
        diffs: deps.diffs,
        notifier: deps.notifier,
        connectionId,
        signal: extra.signal,
        log,
      }),
    );
  }

  mcp.server.oninitialized = () => deps.notifier.clientInitialized(connectionId);
  mcp.server.fallbackNotificationHandler = async (n) => {
    if (n.method === "ide_connected") {
      const pid = (n.params as { pid?: unknown } | undefined)?.pid;
      log.info(`Claude Code connected${typeof pid === "number" ? ` (pid ${pid})` : ""}`);
      if (typeof pid === "number") deps.onClientPid?.(connectionId, pid);
    } else {
      log.debug(`notification ${n.method}`);
    }
  };
  transport.onraw = (m) => {
    if ("method" in m && "id" in m) {
      const name = m.method === "tools/call" ? ` ${String((m.params as { name?: unknown } | undefined)?.name)}` : "";
      log.debug(`request ${m.method}${name}`);
    }
  };
  mcp.server.onerror = (err) => log.debug(`protocol error: ${err.message}`);
  mcp.server.onclose = () => {
    deps.notifier.removeClient(connectionId);
    void deps.diffs.dropConnection(connectionId);
    log.info("IDE client disconnected");
    deps.onClosed?.(connectionId);
  };

  deps.notifier.addClient(connectionId, (method, params) => {
    transport.send({ jsonrpc: "2.0", method, params }).catch((err: Error) => log.debug(`${method} not delivered: ${err.message}`));
  });
  await mcp.connect(transport);
}
