import { readFile } from "node:fs/promises";
import type { Readable, Writable } from "node:stream";
import { createCore, type Core } from "../../core/core.ts";
import { CcbError } from "../../core/errors.ts";
import { silentLogger, type Logger } from "../../core/log.ts";
import { connectValidated } from "./edge.ts";
import { Gateway, type RouteHandler, type RouteOptions, type UpgradeHandler } from "./gateway.ts";
import { isLoopbackHost } from "./guards.ts";
import { McpHttpEndpoint } from "./http.ts";
import { createMcpServer } from "./server.ts";
import { LineStdioTransport } from "./stdio.ts";
import type { ServeWorkbenchOptions } from "../../workbench/serve.ts";

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
}

export interface ServeHttpHandle {
  server: Gateway["server"];
  /** Base URL, e.g. http://127.0.0.1:43123; the MCP endpoint is `${url}/mcp`. */
  url: string;
  addRoute(method: string, pathPrefix: string, handler: RouteHandler, options?: RouteOptions): void;
  addUpgrade(pathPrefix: string, handler: UpgradeHandler, options?: RouteOptions): void;
  allowHost(hostOrAuthority: string): void;
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
  const tls = httpOpts ? await loadTls(httpOpts) : undefined;
  if (httpOpts) checkExposure(httpOpts.host ?? "127.0.0.1", Boolean(tls), httpOpts.authToken);

  const ownsCore = !options.core;
  const core = options.core ?? createCore({ roots: options.roots, log });
  const from = options.rootsSource === "cwd" ? " (the current directory; pass --workspace to choose)" : options.rootsSource === "env" ? " (from CCB_WORKSPACE)" : "";
  announce(`ccb serve: workspace ${core.workspace.roots.join(", ")}${from}`);

  // Every MCP session, including one created the moment the listener answers, offers the App.
  if (options.workbench) core.bridge.expectApp();
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
      const gateway = new Gateway({ host: httpOpts.host ?? "127.0.0.1", port: httpOpts.port ?? 0, tls, log: log.child("http") });
      const endpoint = new McpHttpEndpoint(gateway, {
        core,
        log: log.child("mcp-http"),
        authToken: httpOpts.authToken,
        allowOrigins: httpOpts.allowOrigins ?? [],
        ...(httpOpts.maxBodyBytes !== undefined ? { maxBodyBytes: httpOpts.maxBodyBytes } : {}),
      });
      closers.push(() => gateway.close());
      closers.push(() => endpoint.close());
      const url = await gateway.listen();
      announce(`ccb serve: MCP Streamable HTTP listening on ${url}/mcp${httpOpts.authToken ? " (bearer token required)" : ""}`);
      http = {
        server: gateway.server,
        url,
        addRoute: (m, p, h, o) => gateway.addRoute(m, p, h, o),
        addUpgrade: (p, h, o) => gateway.addUpgrade(p, h, o),
        allowHost: (h) => gateway.allowHost(h),
      };
    }
    if (options.workbench) {
      closers.push(async () => core.bridge.expectApp(false));
      const { startServeWorkbench } = await import("../../workbench/serve.ts");
      const wb = await startServeWorkbench({
        core,
        log: log.child("workbench"),
        options: options.workbench,
        http: http && httpOpts ? { ...http, scheme: tls ? "https" : "http", host: httpOpts.host ?? "127.0.0.1" } : undefined,
        authToken: httpOpts?.authToken,
        announce,
      });
      closers.push(() => wb.close());
    }
    if (useStdio) {
      const transport = new LineStdioTransport(options.stdin, options.stdout);
      const server = createMcpServer({ core, log: log.child("mcp") });
      stdioClosed = new Promise<void>((resolve) => {
        const prev = server.onclose;
        server.onclose = () => {
          prev?.();
          resolve();
        };
      });
      transport.onerror = (err) => log.debug(`stdio: ${err.message}`);
      closers.push(() => server.close());
      await connectValidated(server, transport);
      announce("ccb serve: MCP over stdio ready");
    }
    return { core, ...(http ? { http } : {}), stdioClosed, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Run until SIGINT/SIGTERM or (with --stdio) the end of stdin, then shut down cleanly. */
export async function runServe(options: ServeOptions): Promise<void> {
  const log = options.log ?? silentLogger;
  // Handlers go in before anything starts: a signal that arrives while starting up (e.g. right
  // after the URL was announced) must still shut down cleanly.
  let stop!: (why: string) => void;
  const stopped = new Promise<void>((resolve) => {
    stop = (why: string) => {
      log.debug(`shutting down: ${why}`);
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
      resolve();
    };
  });
  const onInt = () => stop("SIGINT");
  const onTerm = () => stop("SIGTERM");
  process.once("SIGINT", onInt);
  process.once("SIGTERM", onTerm);
  let handle: ServeHandle;
  try {
    handle = await startServe(options);
  } catch (err) {
    process.off("SIGINT", onInt);
    process.off("SIGTERM", onTerm);
    throw err;
  }
  void handle.stdioClosed.then(() => stop("stdin closed"));
  await stopped;
  await handle.close();
}

/** A non-loopback listener needs both TLS and a bearer token. */
export function checkExposure(host: string, tls: boolean, authToken: string | undefined): void {
  if (isLoopbackHost(host)) return;
  if (tls && authToken) return;
  const missing = [!tls ? "TLS (--cert and --key)" : "", !authToken ? "a bearer token (--auth-token or CCB_AUTH_TOKEN)" : ""].filter(Boolean).join(" and ");
  throw new CcbError("CONFIG_INVALID", `Refusing to listen on ${host}: a non-loopback address needs ${missing}.`, {
    hint: "Anyone who can reach this address could read and change the workspace and run commands. Use --host 127.0.0.1, or set both TLS and a token.",
  });
}

async function loadTls(o: ServeHttpOptions): Promise<{ cert: Buffer; key: Buffer } | undefined> {
  if (!o.certFile && !o.keyFile) return undefined;
  if (!o.certFile || !o.keyFile) {
    throw new CcbError("CONFIG_INVALID", "--cert and --key must be given together.", { hint: "Pass both PEM files to serve HTTPS." });
  }
  const read = async (file: string, what: string) => {
    try {
      return await readFile(file);
    } catch (err) {
      throw new CcbError("CONFIG_INVALID", `Cannot read the TLS ${what} file ${file}: ${(err as Error).message}`);
    }
  };
  return { cert: await read(o.certFile, "certificate"), key: await read(o.keyFile, "key") };
}
