import type { Readable, Writable } from "node:stream";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { type Core, createCore } from "../../core/core.ts";
import { CcbError } from "../../core/errors.ts";
import { type Logger, silentLogger } from "../../core/log.ts";
import { admitPublicUrl, isPrivateLoopback, openExposure } from "../../net/exposure.ts";
import { Gateway } from "../../net/gateway.ts";
import { isLoopbackHost } from "../../net/loopback.ts";
import type { OAuthOptions } from "../../net/oauth/index.ts";
import type { AnyToolDef } from "../../tools/kernel.ts";
import type { WorkbenchHttp } from "../../workbench/routes.ts";
import type { WorkbenchRuntimeOptions } from "../../workbench/runtime-flags.ts";
import { AppState } from "./app/app-state.ts";
import type { RenderMode } from "./app/render-mode.ts";
import type { WorkbenchAppHandle } from "./app/stream-tier.ts";
import { DEFAULT_MAX_BODY_BYTES, McpHttpEndpoint } from "./http.ts";
import { SCOPE_READ, SCOPE_WRITE, SCOPES } from "./scopes.ts";
import { createMcpServer } from "./server.ts";
import { LineStdioTransport } from "./stdio.ts";

/** The workbench flags of `ccb serve`. */
export interface ServeWorkbenchOptions extends WorkbenchRuntimeOptions {
  /** How the MCP App shows the workbench (--render-mode / CCB_RENDER_MODE); default "default". */
  renderMode?: RenderMode | undefined;
}

export interface ServeHttpOptions {
  host?: string;
  /** 0 = any free port. */
  port?: number;
  authToken?: string | undefined;
  /** PEM file paths; both or neither. */
  certFile?: string | undefined;
  keyFile?: string | undefined;
  allowOrigins?: readonly string[];
  maxBodyBytes?: number;
  /** The browser-reachable origin of this server when it differs (reverse proxy, ingress): --public-url / CCB_PUBLIC_URL. */
  publicUrl?: string | undefined;
  /** Plain HTTP on a non-loopback address behind a TLS-terminating proxy (needs an https publicUrl and a token). */
  trustProxy?: boolean | undefined;
  /** OAuth 2.1 resource server on /mcp (--oauth-issuer ...); with authToken only when allowStaticToken. */
  oauth?: (OAuthOptions & { allowStaticToken?: boolean | undefined }) | undefined;
}

export interface ServeOptions {
  roots: readonly string[];
  /** Where the roots came from, for the announcement ("cwd" gets a warning to set them explicitly). */
  rootsSource?: "flag" | "env" | "cwd";
  stdio?: boolean;
  http?: ServeHttpOptions | undefined;
  log?: Logger;
  /** Lines meant for the person who started ccb (stderr in the CLI); never stdout. */
  announce?: (line: string) => void;
  /** Injected streams for the stdio transport (default process.stdin / process.stdout). */
  stdin?: Readable;
  stdout?: Writable;
  /** An existing core (tests, or a front end that shares one); otherwise one is created and disposed here. */
  core?: Core;
  /** Run the live workbench beside the server (src/workbench); undefined = none. */
  workbench?: ServeWorkbenchOptions | undefined;
  /** Largest stdio frame (default: the HTTP body cap, --max-body-bytes). */
  maxFrameBytes?: number | undefined;
  /** The tools to offer (default: every workspace tool; `ccb ide -- claude` offers the editor profile). */
  tools?: readonly AnyToolDef[] | undefined;
}

export interface ServeHttpHandle {
  server: Gateway["server"];
  gateway: Gateway;
  /** Base URL, e.g. http://127.0.0.1:43123; the MCP endpoint is `${url}/mcp`. */
  url: string;
  /** Where browsers reach it: --public-url, else `url`. */
  publicUrl: string;
}

export interface ServeHandle {
  core: Core;
  http?: ServeHttpHandle;
  /** Resolves when the stdio peer has gone (stdin ended or stdout broke); never resolves without --stdio. */
  stdioClosed: Promise<void>;
  /** Close transports and sessions, stop listening, dispose the core (kills terminals). Idempotent. */
  close(): Promise<void>;
}

/** Start `ccb serve`: the shared core behind MCP over stdio and/or Streamable HTTP. */
export async function startServe(options: ServeOptions): Promise<ServeHandle> {
  const log = options.log ?? silentLogger;
  const announce = options.announce ?? ((line: string) => log.info(line));
  const httpOpts = options.http;
  const useStdio = options.stdio ?? !httpOpts;
  if (httpOpts?.oauth && httpOpts.authToken && !httpOpts.oauth.allowStaticToken) {
    throw new CcbError(
      "CONFIG_INVALID",
      "Both --oauth-issuer and a static bearer token (--auth-token / CCB_AUTH_TOKEN) are set.",
      {
        hint: "Use one: OAuth gives each person their own expiring, scoped token. To accept both on purpose, add --oauth-allow-static-token.",
      },
    );
  }
  if (httpOpts?.oauth && !isLoopbackHost(httpOpts.host ?? "127.0.0.1") && !httpOpts.publicUrl) {
    throw new CcbError(
      "CONFIG_INVALID",
      `OAuth on ${httpOpts.host} needs --public-url (CCB_PUBLIC_URL): tokens are issued for <public URL>/mcp, the resource ccb publishes.`,
      { hint: "Give the https origin hosts reach ccb at, e.g. --public-url https://ccb.example.com" },
    );
  }
  const { tls, publicUrl } = httpOpts
    ? await openExposure({
        listener: "serve",
        ...httpOpts,
        host: httpOpts.host ?? "127.0.0.1",
        token: Boolean(httpOpts.authToken) || Boolean(httpOpts.oauth),
      })
    : {};

  const ownsCore = !options.core;
  const core = options.core ?? createCore({ roots: options.roots, log });
  const from =
    options.rootsSource === "cwd"
      ? " (the current directory; pass --workspace to choose)"
      : options.rootsSource === "env"
        ? " (from CCB_WORKSPACE)"
        : "";
  announce(`ccb serve: workspace ${core.workspace.roots.join(", ")}${from}`);

  // Every MCP session, including one created the moment the listener answers, offers the App.
  const app = options.workbench ? new AppState() : undefined;
  app?.expect();
  const closers: Array<() => Promise<void>> = [];
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      for (const c of closers.reverse()) await c().catch((err: unknown) => log.debug(`close: ${String(err)}`));
      if (ownsCore) await core.dispose();
    })();
    return closing;
  };

  let stdioClosed: Promise<void> = new Promise<void>(() => {});
  try {
    let http: ServeHttpHandle | undefined;
    if (httpOpts) {
      const gateway = new Gateway({
        host: httpOpts.host ?? "127.0.0.1",
        port: httpOpts.port ?? 0,
        tls,
        log: log.child("http"),
        publicScheme: publicUrl ? (publicUrl.protocol === "https:" ? "https" : "http") : undefined,
      });
      admitPublicUrl(gateway, publicUrl);
      // jose and the discovery code load only when OAuth is configured.
      const oauthModule = httpOpts.oauth ? await import("../../net/oauth/index.ts") : undefined;
      const oauth = oauthModule
        ? await oauthModule.openResourceServer({
            ...(httpOpts.oauth as OAuthOptions),
            base: () => publicUrl?.origin ?? gateway.url,
            path: "/mcp",
            scopes: SCOPES,
            challengeScope: `${SCOPE_READ} ${SCOPE_WRITE}`,
            name: "ccb workspace",
            log: log.child("oauth"),
          })
        : undefined;
      if (oauth) oauthModule?.mountProtectedResourceMetadata(gateway, oauth, "/mcp");
      const endpoint = new McpHttpEndpoint(gateway, {
        core,
        log: log.child("mcp-http"),
        authToken: httpOpts.authToken,
        oauth,
        allowOrigins: httpOpts.allowOrigins ?? [],
        app,
        ...(options.tools ? { tools: options.tools } : {}),
        ...(httpOpts.maxBodyBytes !== undefined ? { maxBodyBytes: httpOpts.maxBodyBytes } : {}),
      });
      closers.push(() => gateway.close());
      closers.push(() => endpoint.close());
      const url = await gateway.listen();
      const needs = [httpOpts.authToken ? "bearer token" : "", oauth ? "OAuth" : ""].filter(Boolean).join(" or ");
      announce(
        `ccb serve: MCP Streamable HTTP listening on ${url}/mcp${needs ? ` (${needs} required)` : ""}${publicUrl ? `; public URL ${publicUrl.origin}` : ""}`,
      );
      if (oauth) {
        announce(
          `ccb serve: OAuth resource ${oauth.resource()} (audience ${httpOpts.oauth?.audience ?? oauth.resource()}), authorization servers ${httpOpts.oauth?.issuers.join(", ")}; metadata at ${oauth.metadataUrl()}`,
        );
      }
      http = { server: gateway.server, gateway, url, publicUrl: publicUrl?.origin ?? url };
    }
    if (options.workbench && app) {
      closers.push(async () => app.expect(false));
      const wb = await startServeWorkbench({
        core,
        app,
        log: log.child("workbench"),
        options: options.workbench,
        http:
          http && httpOpts
            ? { gateway: http.gateway, publicUrl: http.publicUrl, host: httpOpts.host ?? "127.0.0.1" }
            : undefined,
        authToken: httpOpts?.authToken,
        announce,
      });
      closers.push(() => wb.close());
    }
    if (useStdio) {
      // Frames each message and checks it once (envelope, version, params), answering refusals itself.
      const transport = new LineStdioTransport(options.stdin, options.stdout, {
        maxFrameBytes: options.maxFrameBytes ?? httpOpts?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      });
      stdioClosed = transport.closed;
      const mcpLog = log.child("mcp");
      // Both eras on one connection: the SDK answers a `server/discover` probe or any request
      // carrying the 2026-07-28 envelope statelessly, and pins a 2025-era server on `initialize`.
      // Each is a server from the same factory; the transport has checked every request first.
      const stdio = serveStdio(
        (ctx) => {
          mcpLog.debug(
            ctx.era === "modern"
              ? "stdio: a 2026-07-28 client (server/discover, no handshake)"
              : "stdio: a 2025-era client (initialize)",
          );
          return createMcpServer({ core, log: mcpLog, app, ...(options.tools ? { tools: options.tools } : {}) });
        },
        { transport, onerror: (err) => mcpLog.debug(`stdio: ${err.message}`) },
      );
      closers.push(() => stdio.close());
      announce("ccb serve: MCP over stdio ready");
    }
    return { core, ...(http ? { http } : {}), stdioClosed, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * The workbench of `ccb serve` and its MCP App. The workbench is the one shared by ccb's front ends
 * for these roots (src/workbench/share): attached when another front end runs it, else started here
 * and published. The bridge and the headless client use a loopback plain-HTTP gateway: serve's own
 * when it is one, else a private one on 127.0.0.1. A browser-facing gateway that is not loopback
 * plain HTTP (TLS, a public address or URL) gets a workbench of its own, never shared, with /ide,
 * /app, /session.json (and /stream) mounted on it too; so does the stream render mode, whose
 * Chromium and /stream route belong to this process.
 */
async function startServeWorkbench(o: {
  core: Core;
  /** The MCP App's state (offered from the first session on; set up here). */
  app: AppState;
  log: Logger;
  options: ServeWorkbenchOptions;
  /** serve's gateway and the URL browsers reach it at (--public-url), when --http is on. */
  http?: { gateway: Gateway; publicUrl: string; host: string } | undefined;
  authToken?: string | undefined;
  announce: (line: string) => void;
}): Promise<{ close(): Promise<void> }> {
  const { acquireWorkbench } = await import("../../workbench/share/acquire.ts");
  const { startWorkbenchApp } = await import("./app/stream-tier.ts");
  const served: WorkbenchHttp | undefined = o.http ? { gateway: o.http.gateway, url: o.http.publicUrl } : undefined;
  const usable = o.http ? isPrivateLoopback(o.http.gateway, o.http.host, o.http.publicUrl) : false;
  const renderMode = o.options.renderMode ?? "default";
  let app: WorkbenchAppHandle | undefined;
  const lease = await acquireWorkbench({
    core: o.core,
    log: o.log,
    frontEnd: "serve",
    start: true,
    // the stream mode mounts a route on this process's gateway: its workbench is never shared
    options: renderMode === "stream" ? { ...o.options, share: false } : o.options,
    http: usable ? served : undefined,
    publicHttp: usable ? undefined : served,
    authToken: o.authToken,
    // after a takeover the workbench page is served by another gateway: the App asks the host for that origin
    onMove: () => app?.moved(lease?.http()?.url ?? lease?.gatewayUrl() ?? ""),
  });
  if (!lease) throw new CcbError("RUNTIME_UNAVAILABLE", "The workbench did not start.");
  const handle = lease.handle();
  // The App's CSP names the gateway that serves the workbench page: the owner's when attached. Only
  // the stream tier mounts a route on the App's gateway: always in stream mode (never attached), on
  // demand in the default mode when this process owns the workbench.
  const own = lease.http();
  const appGateway: WorkbenchHttp = own
    ? usable || !served
      ? own
      : served
    : { gateway: o.http?.gateway as Gateway, url: lease.gatewayUrl() };
  app = startWorkbenchApp({
    app: o.app,
    log: o.log.child("app"),
    renderMode,
    gateway: appGateway,
    ready: lease.ready(),
    localUrl: () => lease.handle()?.localUrl(),
    onDemandStream: own !== undefined,
  });
  void lease.ready().then(async () => {
    if (handle) {
      const s = handle.status();
      if (s.state === "unavailable") o.announce(`ccb serve: workbench unavailable: ${s.reason}`);
      else o.announce(`ccb serve: workbench (${s.runtime}) running; open ${handle.link("/app")} (a one-time link)`);
      return;
    }
    const by = lease.runBy();
    const where =
      by.kind === "host"
        ? `in the workbench host (pid ${by.pid}${by.startedHere ? ", started by this serve" : ""})`
        : `shared: ccb ${by.kind} (pid ${by.pid}) runs it`;
    const runtime = o.core.bridge.workbench()?.runtime;
    const app = runtime ? await lease.appLink() : undefined;
    if (app) o.announce(`ccb serve: workbench (${runtime}) running ${where}; open ${app} (a one-time link)`);
    else
      o.announce(
        `ccb serve: workbench unavailable (${where}): ${o.core.bridge.status().reason || "see `ccb workbench status`"}`,
      );
    o.announce("ccb serve: `ccb workbench status` lists who is attached");
  });
  return {
    async close() {
      await app.close();
      await lease.release();
    },
  };
}

/** The signals that end serve cleanly (SIGKILL is left to the supervisor, src/platform/supervisor.ts). */
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** Run until SIGINT/SIGTERM/SIGHUP or (with --stdio) the end of stdin, then shut down cleanly. */
export async function runServe(options: ServeOptions): Promise<void> {
  const log = options.log ?? silentLogger;
  // Handlers go in before anything starts: a signal that arrives while starting up (e.g. right
  // after the URL was announced) must still shut down cleanly.
  let stop!: (why: string) => void;
  const stopped = new Promise<void>((resolve) => {
    stop = (why: string) => {
      log.debug(`shutting down: ${why}`);
      for (const sig of SIGNALS) process.off(sig, onSignal);
      resolve();
    };
  });
  const onSignal = (sig: NodeJS.Signals) => stop(sig);
  for (const sig of SIGNALS) process.once(sig, onSignal);
  let handle: ServeHandle;
  try {
    handle = await startServe(options);
  } catch (err) {
    for (const sig of SIGNALS) process.off(sig, onSignal);
    throw err;
  }
  void handle.stdioClosed.then(() => stop("stdin closed"));
  await stopped;
  await handle.close();
}
