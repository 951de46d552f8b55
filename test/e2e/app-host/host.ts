/// <reference lib="dom" />
/**
 * An MCP Apps host page for the tests, on the ext-apps SDK's host side (`AppBridge` +
 * `PostMessageTransport`), in the shape of the SDK's basic host: this outer page frames a sandbox
 * proxy on another origin (sandbox.html), which frames the App document with the CSP the host
 * decided. Bundled for the browser by the test (esbuild); driven through `window.ccbHost`.
 */
import {
  AppBridge,
  type McpUiHostCapabilities,
  type McpUiHostContext,
  type McpUiResourceCsp,
  PostMessageTransport,
} from "@modelcontextprotocol/ext-apps/app-bridge";

interface Scenario {
  sandboxUrl: string;
  html: string;
  /** The CSP the host applies in the sandbox (what it grants of the App's request). */
  csp: McpUiResourceCsp;
  hostCapabilities: McpUiHostCapabilities;
  hostContext: McpUiHostContext;
  result: { content: unknown[]; isError?: boolean; _meta?: Record<string, unknown> };
}

interface AppLog {
  state: string;
  detail: string;
}

const host = {
  states: [] as AppLog[],
  links: [] as string[],
  sizes: [] as Array<{ width?: number; height?: number }>,
  displayModes: [] as string[],
  bridge: undefined as AppBridge | undefined,
  context: {} as McpUiHostContext,
  frame: undefined as HTMLIFrameElement | undefined,
  waiters: [] as Array<{ test: (s: AppLog) => boolean; resolve: (s: AppLog) => void }>,

  /** Frame the sandbox, hand it the App, deliver the tool result once the App is initialized. */
  async load(s: Scenario): Promise<void> {
    const frame = document.createElement("iframe");
    const width = (s.hostContext.containerDimensions as { width?: number } | undefined)?.width ?? 1000;
    frame.style.cssText = `display:block;border:0;width:${width}px;height:200px`;
    frame.src = s.sandboxUrl;
    document.body.appendChild(frame);
    const win = frame.contentWindow as Window;
    host.context = s.hostContext;
    const bridge = new AppBridge(null, { name: "ccb-test-host", version: "1" }, s.hostCapabilities, {
      hostContext: s.hostContext,
    });
    bridge.onsandboxready = () => {
      void bridge.sendSandboxResourceReady({
        html: s.html,
        csp: s.csp,
        sandbox: "allow-scripts allow-same-origin allow-popups",
      });
    };
    bridge.oninitialized = () => {
      void bridge.sendToolResult(s.result as Parameters<AppBridge["sendToolResult"]>[0]);
    };
    bridge.onloggingmessage = (m) => {
      if (m.logger !== "ccb-app") return;
      const log = m.data as AppLog;
      host.states.push(log);
      for (const w of host.waiters.splice(0)) {
        if (w.test(log)) w.resolve(log);
        else host.waiters.push(w);
      }
    };
    bridge.onopenlink = async ({ url }) => {
      host.links.push(url);
      return {};
    };
    bridge.onrequestdisplaymode = async ({ mode }) => {
      host.displayModes.push(mode);
      if (mode === "fullscreen")
        frame.style.cssText = "display:block;border:0;position:fixed;inset:0;width:100vw;height:100vh";
      else frame.style.cssText = `display:block;border:0;width:${width}px;height:600px`;
      host.setContext({ displayMode: mode });
      return { mode };
    };
    bridge.onsizechange = ({ width, height }) => {
      host.sizes.push({ width, height });
      if (height !== undefined && !host.displayModes.includes("fullscreen")) frame.style.height = `${height}px`;
    };
    host.bridge = bridge;
    host.frame = frame;
    await bridge.connect(new PostMessageTransport(win, win));
  },

  /** Change the host context; the bridge sends the App what changed (ui/notifications/host-context-changed). */
  setContext(change: McpUiHostContext): void {
    host.context = { ...host.context, ...change };
    const width = (change.containerDimensions as { width?: number } | undefined)?.width;
    if (width !== undefined && host.frame) host.frame.style.width = `${width}px`;
    host.bridge?.setHostContext(host.context);
  },

  /** The first App state (logged or past) that passes `test`. */
  state(test: (s: AppLog) => boolean): Promise<AppLog> {
    const seen = host.states.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => host.waiters.push({ test, resolve }));
  },

  /** Evaluate `expr` (with `doc` = the App's document) in the sandbox proxy, which can reach it. */
  probe(expr: string): Promise<unknown> {
    const channel = new MessageChannel();
    const answer = new Promise<unknown>((resolve) => {
      channel.port1.onmessage = (e) => resolve(e.data);
    });
    host.frame?.contentWindow?.postMessage({ type: "ccb-test-probe", expr }, "*", [channel.port2]);
    return answer;
  },
};

(window as unknown as { ccbHost: typeof host }).ccbHost = host;
