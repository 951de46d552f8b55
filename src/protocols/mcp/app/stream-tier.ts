import { toCcbError } from "../../../core/errors.ts";
import type { Logger } from "../../../core/log.ts";
import { refuseUpgrade } from "../../../net/respond.ts";
import { type StreamEndpoint, streamPolicy } from "../../../stream/server.ts";
import { STREAM_DEFAULTS, type StreamSource, startStreamSource } from "../../../stream/source.ts";
import { newToken } from "../../../util/secrets.ts";
import type { WorkbenchHttp } from "../../../workbench/routes.ts";
import type { AppState, WorkbenchAppInfo } from "./app-state.ts";
import type { RenderMode } from "./render-mode.ts";

export interface WorkbenchAppHandle {
  /** The workbench moved to another gateway (a takeover): the App's CSP request names the new origin. */
  moved(gatewayUrl: string): void;
  close(): Promise<void>;
}

/**
 * Configure the MCP App for `ccb serve` (every MCP session of the server offers it; sessions are
 * told through resources/list_changed when its configuration changes) and, in stream mode, run
 * the stream tier: a server-side Chromium on the INTERNAL loopback workbench URL, its screencast
 * on `/stream` of the browser-facing gateway, authenticated by its own 256-bit token. The token
 * and stream URL go only into vscode_open's result `_meta`. In the default mode the same tier is
 * offered on demand (`onDemand: true`): nothing starts until a viewer with the token connects (the
 * App's browser card, when the host refuses frames but allows connections).
 */
export function startWorkbenchApp(o: {
  /** The App state of the MCP server assembly, filled in here. */
  app: AppState;
  log: Logger;
  renderMode: RenderMode;
  /** The browser-facing gateway (its origin goes into the App's CSP request; /stream is mounted on it). */
  gateway: WorkbenchHttp;
  /** Resolves once the runtime answers (or could not start). */
  ready: Promise<void>;
  /** Default render mode: offer the stream tier, started when the App's first viewer connects (a workbench this process owns). */
  onDemandStream?: boolean;
  /** The workbench page on the loopback server, once running. */
  localUrl: () => string | undefined;
  env?: NodeJS.ProcessEnv;
}): WorkbenchAppHandle {
  const { app, log } = o;
  let closed = false;
  let info: WorkbenchAppInfo = { gatewayUrl: o.gateway.url, renderMode: o.renderMode, starting: true };
  const update = (change: Partial<WorkbenchAppInfo>) => {
    if (closed) return;
    info = { ...info, ...change };
    app.set(info);
  };
  app.set(info);
  const settled = o.ready.then(
    () => update({ starting: false }),
    () => update({ starting: false }),
  );
  // The stream tier: always in stream mode; otherwise on demand (the App's browser card offers it
  // when the host refuses frames), only for a workbench this process owns (its loopback page).
  if (o.renderMode !== "stream" && !o.onDemandStream) {
    return {
      moved: (gatewayUrl) => update({ gatewayUrl }),
      close: async () => {
        closed = true;
        await settled;
        app.set(undefined);
      },
    };
  }

  const env = o.env ?? process.env;
  const token = newToken(32);
  const wsUrl = `${o.gateway.url.replace(/^http/, "ws")}/stream`;
  let source: StreamSource | undefined;
  let endpoint: StreamEndpoint | undefined;
  let started: Promise<void> | undefined;
  const start = (): Promise<void> =>
    (started ??= (async () => {
      await o.ready;
      const url = o.localUrl();
      if (closed) return;
      if (!url) throw new Error("the workbench is not running, so there is nothing to stream");
      source = await startStreamSource({
        url,
        token,
        ...STREAM_DEFAULTS,
        chromePath: env.CCB_STREAM_BROWSER || undefined,
        env,
        log,
        chromiumLog: log.child("chromium"),
      });
      if (closed) return;
      endpoint = source.endpoint;
      if (o.renderMode === "stream") update({ stream: { url: wsUrl, token } });
      log.info(`stream: server-side Chromium (pid ${source.chromium.pid}) streams the workbench on /stream`);
    })().catch((err: unknown) => {
      const reason = toCcbError(err).toUserText().replace(/\n/g, " ");
      log.warn(`stream unavailable: ${reason}`);
      update({ streamError: `The stream could not start: ${reason}` });
    }));
  o.gateway.gateway.addUpgrade(
    "/stream",
    async (req, socket, head) => {
      // On demand, the first viewer with the token starts the server-side Chromium and waits for it.
      if (!endpoint && o.renderMode !== "stream") await start();
      if (!endpoint) return refuseUpgrade(socket, 503, info.streamError ?? "The stream is starting.");
      endpoint.handleUpgrade(req, socket, head);
    },
    streamPolicy(token),
  );
  if (o.renderMode === "stream") void start();
  else update({ stream: { url: wsUrl, token, onDemand: true } });
  return {
    // a stream-mode workbench is this process's own (never shared): it does not move; an owned
    // workbench that moved (a takeover) is no longer on this loopback gateway: no stream to offer
    moved: (gatewayUrl) => {
      if (o.renderMode !== "stream") update({ gatewayUrl, stream: undefined });
    },
    async close() {
      closed = true;
      await settled;
      await started;
      app.set(undefined);
      await source?.close();
    },
  };
}
