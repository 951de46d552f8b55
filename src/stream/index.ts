import { createServer, type Server } from "node:http";
import { CcbError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import { launchChromium, type Chromium } from "../platform/chromium.ts";
import { newToken, tokensEqual } from "../util/secrets.ts";
import { Screencast } from "./screencast.ts";
import { createStreamEndpoint, type StreamEndpoint } from "./server.ts";
import { VIEWER_HTML } from "./viewer-html.ts";

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
  close(): Promise<void>;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

/** `ccb stream`: headless Chromium on `url`, its screencast and input over `/stream`. */
export async function startStream(o: StreamOptions): Promise<StreamHandle> {
  if (!LOOPBACK.has(o.host)) {
    throw new CcbError("INVALID_ARGUMENT", `ccb stream binds loopback only, not ${o.host}.`, {
      hint: "Put a TLS-terminating reverse proxy in front of it to reach it from elsewhere.",
    });
  }
  const token = o.token ?? newToken(32);
  const chromium = await launchChromium({ url: o.url, chromePath: o.chromePath, width: o.width, height: o.height, noSandbox: o.noSandbox || undefined, log: o.log });
  o.log.info(`chromium pid ${chromium.pid}, profile ${chromium.userDataDir}`);
  const screencast = new Screencast({ page: chromium.page, width: o.width, height: o.height, quality: o.quality, maxFps: o.maxFps, log: o.log });
  let server: Server | undefined;
  try {
    await screencast.attach();
    const endpoint = createStreamEndpoint({ screencast, token, maxFps: o.maxFps, log: o.log });
    server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://stream.invalid");
      if (req.method === "GET" && url.pathname === "/healthz") {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true, viewer: endpoint.viewerConnected() }));
        return;
      }
      if (req.method === "GET" && url.pathname === "/") {
        if (!tokensEqual(url.searchParams.get("token"), token)) {
          res.writeHead(401, { "content-type": "text/plain" }).end("Unauthorized: open the viewer URL printed by ccb stream.\n");
          return;
        }
        res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", "referrer-policy": "no-referrer" }).end(VIEWER_HTML);
        return;
      }
      res.writeHead(404, { "content-type": "text/plain" }).end("Not found\n");
    });
    server.on("upgrade", (req, socket, head) => {
      if (new URL(req.url ?? "/", "http://stream.invalid").pathname !== "/stream") return socket.destroy();
      endpoint.handleUpgrade(req, socket, head);
    });
    const srv = server;
    await new Promise<void>((resolve, reject) => {
      srv.once("error", reject);
      srv.listen(o.port, o.host, () => resolve());
    });
    const addr = srv.address();
    const port = typeof addr === "object" && addr ? addr.port : o.port;
    const host = o.host.includes(":") ? `[${o.host}]` : o.host;
    return {
      viewerUrl: `http://${host}:${port}/?token=${token}`,
      wsUrl: `ws://${host}:${port}/stream`,
      token,
      chromium,
      endpoint,
      async close() {
        endpoint.close();
        await screencast.close();
        await chromium.close();
        srv.closeAllConnections();
        await new Promise<void>((resolve) => srv.close(() => resolve()));
      },
    };
  } catch (err) {
    await screencast.close();
    await chromium.close();
    server?.close();
    throw err;
  }
}
