import type { Logger } from "../core/log.ts";
import { type Chromium, launchChromium } from "../platform/chromium.ts";
import { Screencast } from "./screencast.ts";
import { createStreamEndpoint, type StreamEndpoint } from "./server.ts";

/** The page size, JPEG quality and frame rate of a stream nobody chose otherwise (`ccb stream`'s defaults). */
export const STREAM_DEFAULTS = { width: 1280, height: 800, quality: 60, maxFps: 12 } as const;

export interface StreamSourceOptions {
  /** The page to stream. */
  url: string;
  /** The `/stream` token its endpoint expects (the route's policy checks it first: streamPolicy()). */
  token: string;
  width: number;
  height: number;
  quality: number;
  maxFps: number;
  chromePath?: string | undefined;
  /** The explicit sandbox opt-out (`ccb stream --no-sandbox`); otherwise CCB_CHROMIUM_NO_SANDBOX in `env`. */
  noSandbox?: boolean | undefined;
  env?: NodeJS.ProcessEnv;
  log: Logger;
  /** Chromium's own log (default `log`). */
  chromiumLog?: Logger;
}

/** A running stream source: close() ends the viewer, the screencast and the browser, in that order. */
export interface StreamSource {
  chromium: Chromium;
  screencast: Screencast;
  /** Mount it on `/stream` behind streamPolicy(token). */
  endpoint: StreamEndpoint;
  close(): Promise<void>;
}

/**
 * The one stream assembly (`ccb stream` and the MCP App's stream tier): a server-side Chromium on
 * `url`, its screencast attached, and the one-viewer `/stream` endpoint over it. Where it is mounted
 * (its own listener or the workbench's gateway) and who may connect is the caller's. On failure
 * whatever already started is closed before the error is thrown.
 */
export async function startStreamSource(o: StreamSourceOptions): Promise<StreamSource> {
  const chromium = await launchChromium({
    url: o.url,
    chromePath: o.chromePath,
    width: o.width,
    height: o.height,
    noSandbox: o.noSandbox,
    env: o.env,
    log: o.chromiumLog ?? o.log,
  });
  const screencast = new Screencast({
    page: chromium.page,
    width: o.width,
    height: o.height,
    quality: o.quality,
    maxFps: o.maxFps,
    log: o.log,
  });
  try {
    await screencast.attach();
  } catch (err) {
    await screencast.close();
    await chromium.close();
    throw err;
  }
  const endpoint = createStreamEndpoint({ screencast, token: o.token, maxFps: o.maxFps, log: o.log });
  return {
    chromium,
    screencast,
    endpoint,
    async close() {
      endpoint.close();
      // The browser is stopped at once, not after its answer to Page.stopScreencast: a busy or wedged
      // Chromium would otherwise hold the shutdown (its pipe closing ends that call).
      const stopped = screencast.close();
      await chromium.close();
      await stopped;
    },
  };
}
