import type { Core } from "../core/core.ts";
import type { Logger } from "../core/log.ts";
import { startWorkbenchApp } from "../protocols/mcp/app/stream-tier.ts";
import type { RenderMode } from "../protocols/mcp/app/render-mode.ts";
import type { AppState } from "../protocols/mcp/app/state.ts";
import { Gateway } from "../net/gateway.ts";
import { isLoopbackHost } from "../net/loopback.ts";
import type { WorkbenchHttp } from "./gateway.ts";
import { startWorkbench, type WorkbenchHandle } from "./index.ts";
import type { RuntimeKind } from "./launcher/types.ts";

/** The workbench flags of `ccb serve`. */
export interface ServeWorkbenchOptions {
  runtime?: RuntimeKind | undefined;
  runtimeRoot?: string | undefined;
  runtimeNode?: string | undefined;
  headlessClient?: boolean | undefined;
  /** How the MCP App shows the workbench (--render-mode / CCB_RENDER_MODE); default "default". */
  renderMode?: RenderMode | undefined;
}

export interface ServeWorkbench {
  handle: WorkbenchHandle;
  close(): Promise<void>;
}

/**
 * Start the workbench for `ccb serve`. The bridge and the headless client always use a loopback
 * plain-HTTP gateway: serve's own when it is one (and browsers reach it there), else (stdio only,
 * TLS, a public address or a public URL) a private one on 127.0.0.1 with a random port. A
 * browser-facing serve gateway gets /ide, /app, /session.json (and /stream) too.
 */
export async function startServeWorkbench(o: {
  core: Core;
  /** The MCP App state of the serve, filled in by the App set-up. */
  app: AppState;
  log: Logger;
  options: ServeWorkbenchOptions;
  /** serve's gateway and the URL browsers reach it at (--public-url), when --http is on. */
  http?: { gateway: Gateway; publicUrl: string; host: string } | undefined;
  authToken?: string | undefined;
  announce?: (line: string) => void;
  env?: NodeJS.ProcessEnv;
}): Promise<ServeWorkbench> {
  const served: WorkbenchHttp | undefined = o.http ? { gateway: o.http.gateway, url: o.http.publicUrl } : undefined;
  const usable = o.http && o.http.gateway.scheme === "http" && isLoopbackHost(o.http.host) && o.http.publicUrl === o.http.gateway.url;
  let own: Gateway | undefined;
  let loopback: WorkbenchHttp;
  if (usable && served) loopback = served;
  else {
    own = new Gateway({ host: "127.0.0.1", port: 0, log: o.log.child("gateway") });
    loopback = { gateway: own, url: await own.listen() };
  }
  const handle = startWorkbench({
    core: o.core,
    http: loopback,
    publicHttp: usable ? undefined : served,
    log: o.log,
    runtime: o.options.runtime,
    runtimeRoot: o.options.runtimeRoot,
    runtimeNode: o.options.runtimeNode,
    headlessClient: o.options.headlessClient,
    authToken: o.authToken,
    env: o.env,
  });
  const app = startWorkbenchApp({
    app: o.app,
    log: o.log.child("app"),
    renderMode: o.options.renderMode ?? "default",
    gateway: usable || !served ? loopback : served,
    ready: handle.ready,
    localUrl: () => handle.localUrl(),
    env: o.env,
  });
  void handle.ready.then(() => {
    const s = handle.status();
    if (s.state === "unavailable") o.announce?.(`ccb serve: workbench unavailable: ${s.reason}`);
    else o.announce?.(`ccb serve: workbench (${s.runtime}) running; open ${handle.link("/app")} (a one-time link)`);
  });
  return {
    handle,
    async close() {
      await app.close();
      await handle.close();
      await own?.close();
    },
  };
}
