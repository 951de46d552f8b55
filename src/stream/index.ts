import type { Logger } from "../core/log.ts";
import { checkExposure } from "../net/exposure.ts";
import { Gateway } from "../net/gateway.ts";
import { hostForUrl } from "../net/loopback.ts";
import type { EdgePolicy } from "../net/policy.ts";
import type { Chromium } from "../platform/chromium.ts";
import { newToken } from "../util/secrets.ts";
import { type StreamEndpoint, streamPolicy } from "./server.ts";
import { startStreamSource } from "./source.ts";
import { viewerHtml } from "./viewer-html.ts";

export interface StreamOptions {
  /** The page to stream (the workbench URL, normally). */
  url: string;
  host: string;
  port: number;
  width: number;
  height: number;
  maxFps: number;
  quality: number;
  chromePath?: string | undefined;
  noSandbox: boolean;
  token?: string | undefined;
  log: Logger;
}

export interface StreamHandle {
  /** Viewer page URL including the token: give it only to the viewer, never to a model. */
  viewerUrl: string;
  wsUrl: string;
  token: string;
  chromium: Chromium;
  endpoint: StreamEndpoint;
  gateway: Gateway;
  close(): Promise<void>;
}

/** `ccb stream`: headless Chromium on `url`, its screencast and input over `/stream`. */
export async function startStream(o: StreamOptions): Promise<StreamHandle> {
  checkExposure({ listener: "stream", host: o.host });
  const token = o.token ?? newToken(32);
  const source = await startStreamSource({
    url: o.url,
    token,
    width: o.width,
    height: o.height,
    quality: o.quality,
    maxFps: o.maxFps,
    chromePath: o.chromePath,
    noSandbox: o.noSandbox || undefined,
    log: o.log,
  });
  const { chromium, endpoint } = source;
  o.log.info(`chromium pid ${chromium.pid}, profile ${chromium.userDataDir}`);
  let gateway: Gateway | undefined;
  try {
    const g = new Gateway({ host: o.host, port: o.port, log: o.log });
    gateway = g;
    g.addRoute(
      "GET",
      "/healthz",
      (_req, res) => {
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ ok: true, viewer: endpoint.viewerConnected() }));
      },
      { name: "stream-healthz", origin: { kind: "same" }, auth: [] },
    );
    // The viewer page carries the token in its own URL (the browser's WebSocket reuses it): same origin only.
    const viewer: EdgePolicy = {
      name: "stream-viewer",
      origin: { kind: "same" },
      auth: [{ places: [{ in: "query", name: "token" }], expected: () => token }],
      style: "text",
    };
    g.addRoute(
      "GET",
      "/",
      (_req, res, url) => {
        if (url.pathname !== "/") {
          res.writeHead(404, { "content-type": "text/plain" }).end("Not found\n");
          return;
        }
        res
          .writeHead(200, {
            "content-type": "text/html; charset=utf-8",
            "cache-control": "no-store",
            "referrer-policy": "no-referrer",
            // Its input reaches the streamed page: no other page may frame it (clickjacking).
            "content-security-policy": "frame-ancestors 'self'",
            "x-frame-options": "SAMEORIGIN",
          })
          .end(viewerHtml());
      },
      viewer,
    );
    g.addUpgrade(
      "/stream",
      (req, socket, head) => endpoint.handleUpgrade(req, socket, head),
      streamPolicy(token, { kind: "same" }),
    );
    await g.listen();
    const host = hostForUrl(o.host);
    const port = g.port;
    return {
      viewerUrl: `http://${host}:${port}/?token=${token}`,
      wsUrl: `ws://${host}:${port}/stream`,
      token,
      chromium,
      endpoint,
      gateway: g,
      async close() {
        await source.close();
        await g.close();
      },
    };
  } catch (err) {
    await source.close();
    await gateway?.close();
    throw err;
  }
}
