import type { RawData, WebSocket } from "ws";
import type { Core } from "../../core/core.ts";
import { liveClientsOf } from "../../core/live-clients.ts";
import type { Logger } from "../../core/log.ts";
import type { Workspace } from "../../core/workspace.ts";
import { errorResult, type IdeToolResult } from "./converters.ts";
import type { DiffRegistry } from "./diffs.ts";
import type { IdeEditor } from "./editor.ts";
import type { Notifier } from "./notifications.ts";
import { RpcSession } from "./rpc.ts";
import { IDE_TOOLS } from "./tools/index.ts";
import { type AnyIdeTool, runIdeTool } from "./tools/tool.ts";

/**
 * One MCP session per accepted WebSocket: the 12 IDE tools and only the `tools` capability;
 * `ide_connected` and `log_event` are accepted silently (never answered).
 */

export interface IdeSessionDeps {
  editor: IdeEditor;
  /** The core: the workspace's checkpoints record what the client's calls change. */
  core?: Core;
  workspace: Workspace;
  diffs: DiffRegistry;
  notifier: Notifier;
  log: Logger;
  serverInfo: { name: string; version: string };
  /** Called with the client's pid from `ide_connected`. */
  onClientPid?: (connectionId: number, pid: number) => void;
  onClosed?: (connectionId: number) => void;
}

export function attachSession(ws: WebSocket, connectionId: number, deps: IdeSessionDeps): void {
  const log = deps.log.child(`client ${connectionId}`);
  let leave: (() => void) | undefined;
  const rpc = new RpcSession<AnyIdeTool>((text) => ws.send(text), {
    tools: IDE_TOOLS,
    serverInfo: deps.serverInfo,
    callTool: (tool, args, signal): Promise<IdeToolResult> =>
      runIdeTool(tool, args, {
        editor: deps.editor,
        workspace: deps.workspace,
        diffs: deps.diffs,
        notifier: deps.notifier,
        connectionId,
        signal,
        log,
        ...(deps.core ? { core: deps.core } : {}),
        caller: { frontEnd: "ide", client: rpc.clientName ?? "IDE client", session: `connection ${connectionId}` },
      }),
    toolError: (message) => errorResult(message),
    onInitialized: () => {
      deps.notifier.clientInitialized(connectionId);
      // Named among the clients connected to this process (the person's "Agent changes" view) until it leaves.
      leave?.();
      if (deps.core)
        leave = liveClientsOf(deps.core).add({
          frontEnd: "ide",
          client: rpc.clientName ?? "IDE client",
          session: `connection ${connectionId}`,
        });
    },
    onNotification(method, params) {
      if (method === "ide_connected") {
        const pid = params?.pid;
        log.info(`Claude Code connected${typeof pid === "number" ? ` (pid ${pid})` : ""}`);
        if (typeof pid === "number") deps.onClientPid?.(connectionId, pid);
      } else log.debug(`notification ${method}`);
    },
    onRequest: (method, tool) => log.debug(`request ${method}${tool ? ` ${tool}` : ""}`),
  });

  deps.notifier.addClient(connectionId, (method, params) => rpc.notify(method, params));
  ws.on("message", (data: RawData, isBinary: boolean) => {
    if (isBinary) {
      log.debug("binary frame ignored");
      return;
    }
    // ws delivers a Buffer (binaryType "nodebuffer"): decode it in place, without a copy.
    const text = Buffer.isBuffer(data)
      ? data.toString("utf8")
      : Array.isArray(data)
        ? Buffer.concat(data).toString("utf8")
        : Buffer.from(data).toString("utf8");
    rpc.receive(text);
  });
  ws.once("close", () => {
    leave?.();
    rpc.close();
    deps.notifier.removeClient(connectionId);
    void deps.diffs.dropConnection(connectionId);
    log.info("IDE client disconnected");
    deps.onClosed?.(connectionId);
  });
}
