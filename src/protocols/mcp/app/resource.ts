import type { McpUiResourceMeta } from "@modelcontextprotocol/ext-apps";
import { RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/server";
import { ProtocolError, type Resource, ResourceNotFoundError, type Server } from "@modelcontextprotocol/server";
import { RpcCode } from "../edge.ts";
import { workbenchAppHtml } from "./app-html.ts";
import { type AppState, WORKBENCH_APP_URI, type WorkbenchAppInfo } from "./app-state.ts";

/** MIME type of an MCP App document (MCP Apps extension, io.modelcontextprotocol/ui). */
export const MCP_APP_MIME = RESOURCE_MIME_TYPE;

/**
 * The `_meta.ui` of the App resource: a request to the host to let the App frame the gateway
 * origin (embedded tier) and connect to it over HTTP and WebSocket (stream tier). Origins only:
 * nothing secret (no /ide/<key> path, no token).
 */
export function appResourceMeta(app: WorkbenchAppInfo): {
  ui: McpUiResourceMeta & { csp: { frameDomains: string[]; connectDomains: string[] } };
} {
  const origin = new URL(app.gatewayUrl).origin;
  const ws = origin.replace(/^http/, "ws");
  return { ui: { csp: { frameDomains: [origin], connectDomains: [origin, ws] }, prefersBorder: false } };
}

/** How long resources/list and resources/read wait for the App's gateway address while `ccb serve` sets the workbench up. */
const LIST_WAIT_MS = 5_000;
const READ_WAIT_MS = 15_000;

/**
 * Add resources/list and resources/read for the workbench App to a (not yet connected) server of a
 * `ccb serve` that is configured with a workbench. The resource is listed from the first session
 * on, whether or not the workbench is up yet; its `_meta.ui` (the gateway origins) is known a few
 * milliseconds after the HTTP listener starts, and every change of it is announced with
 * notifications/resources/list_changed. A read before the origins are known waits for them, and
 * says so if they do not come.
 */
export function registerWorkbenchApp(server: Server, app: AppState): void {
  server.registerCapabilities({ resources: { listChanged: true } });
  const describe = (a: WorkbenchAppInfo | undefined): Resource => ({
    uri: WORKBENCH_APP_URI,
    name: "workbench",
    title: "ccb workbench",
    description: "The live Code OSS workbench of this workspace (MCP App shown with vscode_open).",
    mimeType: MCP_APP_MIME,
    ...(a ? { _meta: appResourceMeta(a) } : {}),
  });
  server.setRequestHandler("resources/list", async (_request, ctx) => {
    const a = await app.wait(LIST_WAIT_MS, ctx.mcpReq.signal);
    return { resources: app.offered() ? [describe(a)] : [] };
  });
  server.setRequestHandler("resources/read", async (request, ctx) => {
    if (request.params.uri !== WORKBENCH_APP_URI || !app.offered()) {
      throw new ResourceNotFoundError(
        request.params.uri.slice(0, 200),
        `Unknown resource "${request.params.uri.slice(0, 200)}". Call resources/list to see the resources.`,
      );
    }
    const a = await app.wait(READ_WAIT_MS, ctx.mcpReq.signal);
    if (!a) {
      throw new ProtocolError(
        RpcCode.InternalError,
        "The workbench App is still being set up (its gateway address is not known yet); read the resource again in a few seconds.",
      );
    }
    return {
      contents: [
        { uri: WORKBENCH_APP_URI, mimeType: MCP_APP_MIME, text: workbenchAppHtml(), _meta: appResourceMeta(a) },
      ],
    };
  });

  // Tell the session when what resources/list returns changes (the origins become known, or the App goes away).
  let last = JSON.stringify(describe(app.current()));
  const off = app.onChange(() => {
    const now = JSON.stringify(app.offered() ? describe(app.current()) : null);
    if (now === last) return;
    last = now;
    if (!server.transport) return;
    server.sendResourceListChanged().catch(() => {});
  });
  const prevClose = server.onclose;
  server.onclose = () => {
    off();
    prevClose?.();
  };
}
