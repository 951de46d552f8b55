import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ErrorCode, ListResourcesRequestSchema, McpError, ReadResourceRequestSchema, type Resource } from "@modelcontextprotocol/sdk/types.js";
import { WORKBENCH_APP_URI, type WorkbenchAppInfo } from "../../../core/bridge.ts";
import { WORKBENCH_APP_HTML } from "./app-html.ts";

/** MIME type of an MCP App document (MCP Apps extension, io.modelcontextprotocol/ui). */
export const MCP_APP_MIME = "text/html;profile=mcp-app";

/**
 * The `_meta.ui` of the App resource: a request to the host to let the App frame the gateway
 * origin (embedded tier) and connect to it over HTTP and WebSocket (stream tier). Origins only:
 * nothing secret (no /ide/<key> path, no token).
 */
export function appResourceMeta(app: WorkbenchAppInfo): { ui: { csp: { frameDomains: string[]; connectDomains: string[] }; prefersBorder: boolean } } {
  const origin = new URL(app.gatewayUrl).origin;
  const ws = origin.replace(/^http/, "ws");
  return { ui: { csp: { frameDomains: [origin], connectDomains: [origin, ws] }, prefersBorder: false } };
}

/** Add resources/list and resources/read for the workbench App to a (not yet connected) server. */
export function registerWorkbenchApp(server: Server, app: () => WorkbenchAppInfo | undefined): void {
  server.registerCapabilities({ resources: { listChanged: false } });
  const describe = (a: WorkbenchAppInfo): Resource => ({
    uri: WORKBENCH_APP_URI,
    name: "workbench",
    title: "ccb workbench",
    description: "The live Code OSS workbench of this workspace (MCP App shown with vscode_open).",
    mimeType: MCP_APP_MIME,
    _meta: appResourceMeta(a),
  });
  server.setRequestHandler(ListResourcesRequestSchema, () => {
    const a = app();
    return { resources: a ? [describe(a)] : [] };
  });
  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    const a = app();
    if (!a || request.params.uri !== WORKBENCH_APP_URI) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown resource "${request.params.uri.slice(0, 200)}". Call resources/list to see the resources.`);
    }
    return { contents: [{ uri: WORKBENCH_APP_URI, mimeType: MCP_APP_MIME, text: WORKBENCH_APP_HTML, _meta: appResourceMeta(a) }] };
  });
}
