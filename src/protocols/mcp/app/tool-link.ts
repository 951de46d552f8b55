import type { McpUiToolMeta } from "@modelcontextprotocol/ext-apps";
import { RESOURCE_URI_META_KEY } from "@modelcontextprotocol/ext-apps/server";
import type { Tool } from "@modelcontextprotocol/server";
import type { Core } from "../../../core/core.ts";
import { CcbError } from "../../../core/errors.ts";
import { type AppState, WORKBENCH_APP_URI } from "./app-state.ts";

/** The tool whose results hosts render with the workbench App. */
export const APP_TOOL = "vscode_open";

/** How long a caller should wait before retrying vscode_open while the workbench starts. */
const RETRY_SECONDS = 5;

/**
 * The tools/list entry of the App's tool with the App linked, the way the ext-apps server helper
 * `registerAppTool` writes it: `_meta.ui.resourceUri` and the older flat `_meta["ui/resourceUri"]`.
 * (`registerAppTool` itself registers on an `McpServer`; ccb's server is the protocol-level
 * `Server`, so the same metadata is written here.)
 */
export function linkAppTool(tool: Tool): Tool {
  if (tool.name !== APP_TOOL) return tool;
  const ui: McpUiToolMeta = { resourceUri: WORKBENCH_APP_URI };
  return { ...tool, _meta: { ...tool._meta, ui, [RESOURCE_URI_META_KEY]: WORKBENCH_APP_URI } };
}

/**
 * Before the App's tool runs: while `ccb serve` is still starting its workbench, say so and when
 * to retry (instead of the tool's own "no workbench" error).
 */
export function checkAppToolReady(name: string, app: AppState, core: Core): void {
  if (name !== APP_TOOL || core.bridge.workbench() || !app.offered()) return;
  if (app.current()?.starting ?? true) {
    throw new CcbError(
      "BRIDGE_UNAVAILABLE",
      "The workbench is still starting (the editor runtime boots in about 5 to 30 seconds).",
      {
        hint: `Call vscode_open again in ${RETRY_SECONDS} seconds; file, search, terminal and git tools already work.`,
      },
    );
  }
}

/**
 * The App-only `_meta` the App's tool result carries besides the tool's own (the workbench
 * address): in stream mode the /stream address and token, or why the stream is not there; in the
 * default mode the same marked `onDemand` (the App offers it when the host refuses frames).
 */
export function appToolMeta(name: string, app: AppState): Record<string, unknown> {
  const info = app.current();
  if (name !== APP_TOOL || !info) return {};
  if (info.renderMode !== "stream") {
    return info.stream?.onDemand
      ? { "ccb/stream": { url: info.stream.url, token: info.stream.token, onDemand: true } }
      : {};
  }
  return {
    "ccb/stream": info.stream
      ? { url: info.stream.url, token: info.stream.token }
      : { error: info.streamError ?? "The stream is still starting; call vscode_open again in a moment." },
  };
}
