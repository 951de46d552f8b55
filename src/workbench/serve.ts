import type { Core } from "../core/core.ts";
import type { Logger } from "../core/log.ts";
import { startWorkbenchApp } from "../protocols/mcp/app/stream-tier.ts";
import type { RenderMode } from "../protocols/mcp/app/render-mode.ts";
import { isLoopbackHost } from "../protocols/mcp/guards.ts";
import { Gateway } from "../protocols/mcp/gateway.ts";
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
 * plain-HTTP server: serve's own when it is one, else (stdio only, TLS or a public address) a
 * private one on 127.0.0.1 with a random port. A browser-facing serve HTTP server gets /ide too.
 */
export async function startServeWorkbench(o: {
  core: Core;
  log: Logger;
  options: ServeWorkbenchOptions;
  /** serve's HTTP server, when --http is on. */
  http?: (WorkbenchHttp & { scheme?: string; host?: string }) | undefined;
  authToken?: string | undefined;
  announce?: (line: string) => void;
  env?: NodeJS.ProcessEnv;
}): Promise<ServeWorkbench> {
  const usable = o.http && (o.http.scheme ?? "http") === "http" && isLoopbackHost(o.http.host ?? "127.0.0.1");
  let own: Gateway | undefined;
  let loopback: WorkbenchHttp;
  if (usable && o.http) loopback = o.http;
  else {
    own = new Gateway({ host: "127.0.0.1", port: 0, log: o.log.child("gateway") });
    const url = await own.listen();
    const g = own;
    loopback = { url, addRoute: (m, p, h, opt) => g.addRoute(m, p, h, opt), addUpgrade: (p, h, opt) => g.addUpgrade(p, h, opt) };
  }
  const handle = startWorkbench({
    core: o.core,
    http: loopback,
    publicHttp: usable ? undefined : o.http,
    log: o.log,
    runtime: o.options.runtime,
    runtimeRoot: o.options.runtimeRoot,
    runtimeNode: o.options.runtimeNode,
    headlessClient: o.options.headlessClient,
    authToken: o.authToken,
    env: o.env,
  });
  const app = startWorkbenchApp({
    core: o.core,
    log: o.log.child("app"),
    renderMode: o.options.renderMode ?? "default",
    gateway: usable || !o.http ? loopback : o.http,
    ready: handle.ready,
    localUrl: () => handle.localUrl(),
    env: o.env,
  });
  void handle.ready.then(() => {
    const s = handle.status();
    if (s.state === "unavailable") o.announce?.(`ccb serve: workbench unavailable: ${s.reason}`);
    else o.announce?.(`ccb serve: workbench (${s.runtime}) running; open ${(o.http && !usable ? o.http.url : loopback.url)}/app${o.authToken ? "?token=<auth token>" : ""}`);
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
