import { randomBytes } from "node:crypto";
import { resolve as resolvePath } from "node:path";
import { childEnv } from "../core/child-env.ts";
import type { Core } from "../core/core.ts";
import type { BridgeWriter } from "../core/editor/bridge.ts";
import { CcbError, toCcbError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import { isCheckpointMethod } from "../editor-wire/contract.ts";
import { BrowserSession } from "../net/browser-session.ts";
import { newToken } from "../util/secrets.ts";
import { BridgeServer } from "./bridge-server.ts";
import { CheckpointsView } from "./checkpoints-view.ts";
import { compileCache } from "./compile-cache.ts";
import { type HeadlessClient, startHeadlessClient } from "./headless-client.ts";
import { BridgeProbe, HEALTH, HeadlessKeeper, type HeadlessState, type HealthSnapshot } from "./health.ts";
import { codeServerRuntime, isCodeServerRoot } from "./launcher/code-server.ts";
import { openVscodeRuntime } from "./launcher/openvscode.ts";
import { RuntimeSupervisor, type WorkbenchState } from "./launcher/process.ts";
import type { LaunchDirs, Runtime, RuntimeKind } from "./launcher/types.ts";
import { createStateDirs, installBridgeExtension, removeStateDirs } from "./launcher/user-data.ts";
import { TerminalShare } from "./panel-terminals.ts";
import { IdlePark } from "./park.ts";
import {
  APP_PAGE,
  BRIDGE_POLICY,
  mountSessionRoutes,
  mountWorkbenchProxy,
  SESSION_PAGE,
  type WorkbenchHttp,
} from "./routes.ts";
import type { RuntimeOptions } from "./runtime-flags.ts";
import { runtimeStep, Timeline } from "./timeline.ts";
import { headlessChromiumFlags, serverNodeFlags, type Tuning, workbenchTuning } from "./tuning.ts";

export type { WorkbenchHttp } from "./routes.ts";

export interface WorkbenchOptions extends RuntimeOptions {
  core: Core;
  /** The core's editor state, as its holder (the workbench lease, the host) lets the workbench write it. */
  editor: BridgeWriter;
  /** A loopback plain-HTTP gateway (the one beside /mcp) for /bridge, /ide/<key>, /session.json and /app. */
  http: WorkbenchHttp;
  /** The browser-facing gateway when it is another one (TLS, a public address, a public URL): /ide/<key>, /session.json and /app are mounted there too, and URLs given to hosts use its `url`. */
  publicHttp?: WorkbenchHttp | undefined;
  log: Logger;
  /** Keep the workbench's user data (unsaved buffers' backups, window state) under this key across restarts and owners (the shared workbench's key). */
  keepUserData?: string | undefined;
  /** When set, programs may read /session.json with `Authorization: Bearer <it>` (browsers use the cookie). */
  authToken?: string | undefined;
  env?: NodeJS.ProcessEnv | undefined;
}

export interface WorkbenchStatus {
  state: "unavailable" | WorkbenchState;
  runtime: RuntimeKind | null;
  reason: string;
  /** connected: a host serves and its last round trip through its window answered. */
  bridge: { connected: boolean; hosts: number };
  /** The probes of src/workbench/health.ts: what answers, not what is connected. */
  health: HealthSnapshot & { runtimeRestarts: number; headlessRestarts: number };
  headlessClient: HeadlessState;
  /** Milliseconds since startWorkbench: runtime answering, first bridge connection. */
  timings: { runtimeReadyMs: number | null; runtimeBootMs: number | null; bridgeConnectedMs: number | null };
}

export interface WorkbenchHandle {
  /** `/ide/<key>`. */
  basePath: string;
  /** The browser session: its cookie (path `/ide/<key>` only) opens the workbench and its App page and session.json below it. */
  session: BrowserSession;
  /** A browser link to the workbench with a fresh one-time token (secret: host-only `_meta`, or the person's terminal). */
  url(): string | undefined;
  /** The same on the loopback gateway (what the headless client and the stream's Chromium open). */
  localUrl(): string | undefined;
  /** A one-time link to `path` (e.g. `/app`, which lands on the App page below the prefix) on the browser-facing gateway. */
  link(path: string): string;
  bridge: BridgeServer;
  /** The person's "Agent changes" view, as ccb answers it (a shared workbench's owner names who is attached). */
  checkpoints: CheckpointsView;
  /** Resolves once the runtime answers (or could not start: see status()). */
  ready: Promise<void>;
  /** Resolves when an extension host serves the first time. */
  bridgeConnected: Promise<void>;
  status(): WorkbenchStatus;
  headless(): HeadlessClient | undefined;
  /** How many times the runtime came up (a change tells open tabs to reload: src/workbench/alive.ts). */
  epoch(): number;
  /** Process id of the runtime (its process group leader) while it runs. */
  runtimePid(): number | undefined;
  close(): Promise<void>;
}

/**
 * Environment for the runtime (its integrated terminals inherit it): the one child policy,
 * src/core/child-env.ts, with the `compile-cache` lever's NODE_COMPILE_CACHE (compile-cache.ts).
 */
export function runtimeEnv(
  env: NodeJS.ProcessEnv,
  tuning: Tuning = workbenchTuning(env),
  log?: Logger | undefined,
): NodeJS.ProcessEnv {
  const cache = compileCache(env, tuning["compile-cache"]);
  if (cache.refused) log?.warn(`Node's compile cache is off for the runtime: ${cache.refused}`);
  return childEnv(env, { extra: cache.env });
}

export async function resolveRuntime(
  o: Pick<WorkbenchOptions, "runtime" | "runtimeRoot" | "runtimeNode" | "env"> & { log?: Logger | undefined },
): Promise<Runtime> {
  const env = o.env ?? process.env;
  const rootOpt = o.runtimeRoot || env.CCB_RUNTIME_ROOT || undefined;
  const root = rootOpt ? resolvePath(rootOpt) : undefined;
  const nodeOpt = o.runtimeNode || env.CCB_RUNTIME_NODE || undefined;
  const node = nodeOpt?.includes("/") ? resolvePath(nodeOpt) : nodeOpt;
  const rf = await import("../runtime-fetch/index.ts");
  // Without --runtime and --runtime-root: OpenVSCode when it is installed or ships with ccb, else a
  // code-server that `ccb runtime fetch --runtime code-server` installed, else OpenVSCode's "how to get it".
  const cached = root ? undefined : rf.cachedCodeServer({ env });
  const kind: RuntimeKind =
    o.runtime ??
    (root
      ? isCodeServerRoot(root)
        ? "code-server"
        : "openvscode"
      : cached && !rf.openVscodeAvailable({ env })
        ? "code-server"
        : "openvscode");
  if (kind === "code-server") {
    const csRoot = root ?? cached?.root;
    if (!csRoot) {
      throw new CcbError(
        "RUNTIME_UNAVAILABLE",
        "--runtime code-server found no code-server: none was given (--runtime-root, CCB_RUNTIME_ROOT) and none is in ccb's cache.",
        {
          hint: "Run `ccb runtime fetch --runtime code-server` (from the npm registry), or pass --runtime-root <node_modules/code-server> --runtime-node <Node 24>.",
        },
      );
    }
    if (!root) o.log?.info(`runtime: code-server ${cached?.version} from the cache at ${csRoot}`);
    return codeServerRuntime(csRoot, node ?? (root ? undefined : cached?.node), env);
  }
  return openVscodeRuntime(root, o.log, env);
}

/** Seconds without an editor call before the headless client closes (--headless-idle). */
const DEFAULT_HEADLESS_IDLE_S = 600;

/**
 * Start the workbench beside ccb's HTTP server: mounts the routes, then (in the background) boots
 * the runtime with the bridge extension, opens the headless client, and keeps the core's editor state (o.editor) filled
 * while an extension host serves. Without a runtime, serve still runs and editor tools say why.
 */
export function startWorkbench(o: WorkbenchOptions): WorkbenchHandle {
  const { core, http } = o;
  const log = o.log;
  const env = o.env ?? process.env;
  const t0 = performance.now();
  const tuning = workbenchTuning(env);
  const timeline = new Timeline(log);
  const basePath = `/ide/${newToken(24)}`;
  const timings: WorkbenchStatus["timings"] = { runtimeReadyMs: null, runtimeBootMs: null, bridgeConnectedMs: null };
  let runtime: Runtime | undefined;
  let supervisor: RuntimeSupervisor | undefined;
  let dirs: LaunchDirs | undefined;
  let keeper: HeadlessKeeper | undefined;
  let park: IdlePark | undefined;
  let runtimeStarts = 0;
  let unavailable = "";
  let closed = false;

  const reason = (): string => {
    if (unavailable) return unavailable;
    switch (supervisor?.state ?? "starting") {
      case "starting":
        return "The workbench is starting; editor tools work once its extension host connects.";
      case "crashed":
        return "The workbench crashed and is being restarted.";
      case "stopped":
        return "The workbench stopped.";
      case "running":
        if (keeper?.state === "parked" || park?.parked)
          return "The workbench's headless client is closed while idle; the next editor call reopens it (a few seconds).";
        if (keeper?.error)
          return `The workbench is running but its headless client could not start (${keeper.error}); ccb retries it. A workbench tab serves too: open it (vscode_open gives the host its address).`;
        if (keeper)
          return bridge.connections.length > 0
            ? "The workbench is running but no editor window answers; ccb is reopening its headless client (usually within 30 s)."
            : "The workbench is running and its headless client is opening the editor (usually within 30 s).";
        return "The workbench is running but no workbench tab is open, so there is no extension host: open it (vscode_open gives the host its address) or start ccb with --headless-client.";
    }
  };
  // The editor served, the runtime runs and ccb's own headless client runs or is being replaced: a
  // host that stopped answering its probe (busy under load) answers again, or the keeper replaces it.
  const hostExpected = () =>
    !closed &&
    timings.bridgeConnectedMs !== null &&
    supervisor?.state === "running" &&
    (keeper?.state === "running" || keeper?.state === "restarting");
  const refreshReason = () => {
    if (bridge.active || closed) return;
    if (park?.parked || hostExpected())
      o.editor.set(bridge); // the next call reopens the headless client
    else o.editor.clear(reason());
  };

  const bridge = new BridgeServer({
    core,
    editor: o.editor,
    log: log.child("bridge"),
    idleReason: reason,
    hostExpected,
  });
  const probe = new BridgeProbe(bridge, log.child("health"));
  const terminals = new TerminalShare(core, bridge, log.child("terminals"));
  const checkpoints = new CheckpointsView(core, bridge, log.child("checkpoints-view"));
  bridge.setServe((method, params, conn) =>
    isCheckpointMethod(method) ? checkpoints.serve(method, params, conn) : terminals.serve(method, params, conn),
  );
  let markConnected!: () => void;
  const bridgeConnected = new Promise<void>((r) => (markConnected = r));
  const offActive = bridge.onActiveChange((a) => {
    if (a && timings.bridgeConnectedMs === null) {
      timings.bridgeConnectedMs = performance.now() - t0;
      log.info(`bridge connected ${Math.round(timings.bridgeConnectedMs)} ms after start`);
      markConnected();
    }
    if (a) timeline.mark("bridge connected");
  });
  refreshReason();

  http.gateway.addUpgrade("/bridge", (req, socket, head) => bridge.handleUpgrade(req, socket, head), BRIDGE_POLICY);
  const publicUrl = (o.publicHttp ?? http).url;
  // The cookie goes only below the unguessable prefix; the fixed entries land on their pages below it.
  const landings: Record<string, string> = {
    "/app": `${basePath}${APP_PAGE}`,
    "/session.json": `${basePath}${SESSION_PAGE}`,
  };
  const session = new BrowserSession({
    path: () => basePath,
    landing: (p) => landings[p] ?? p,
    secure: () => publicUrl.startsWith("https:"),
  });
  const target = {
    socketPath: () => (supervisor?.state === "running" ? supervisor.socketPath : undefined),
    get announcePrefix() {
      return runtime?.announcePrefix ?? false;
    },
    epoch: () => runtimeStarts,
    // Proves epoch answers to this gateway's pages; a successor has a new prefix (its pages are new ones).
    proofKey: randomBytes(32),
  };
  const servers = o.publicHttp ? [http, o.publicHttp] : [http];
  const closeProxies = servers.map((s) =>
    mountWorkbenchProxy(
      s,
      basePath,
      target,
      session,
      log.child("proxy"),
      tuning["plain-loopback"] ? "loopback" : tuning["plain-headless"] ? "headless" : "none",
    ),
  );
  const publicPath = (): string | undefined => {
    if (!runtime) return undefined;
    return `${basePath}${runtime.workbenchPath(core.workspace.primary)}`;
  };
  for (const s of servers) {
    mountSessionRoutes(s, basePath, session, o.authToken, () => ({
      runtime: runtime?.kind ?? "none",
      state: unavailable ? "unavailable" : (supervisor?.state ?? "starting"),
      workbenchPath: publicPath() ?? "",
      bridge: {
        connected: Boolean(bridge.active),
        reason: bridge.active ? "" : reason(),
        hosts: bridge.connections.length,
      },
    }));
  }

  const openHeadless = (url: string | Promise<string>) =>
    startHeadlessClient({
      url,
      log: log.child("headless"),
      env,
      extraFlags: headlessChromiumFlags(tuning),
      onLoad: () => {
        timeline.mark("page loaded");
        keeper?.progress();
      },
    });
  // The headless client started beside the runtime (early-browser): it navigates once the runtime answers.
  let early: Promise<HeadlessClient> | undefined;
  let pageUrl: { resolve: (url: string) => void; reject: (err: unknown) => void } | undefined;

  const ready = (async () => {
    try {
      runtime = await resolveRuntime({ ...o, env });
      if ((o.headlessClient ?? true) && tuning["early-browser"] && !closed) {
        early = openHeadless(
          new Promise<string>((resolve, reject) => {
            pageUrl = { resolve, reject };
          }),
        );
        early.catch(() => undefined); // its failure is the keeper's to report
      }
      dirs = createStateDirs(core.workspace.roots, env, o.keepUserData, tuning["lean-settings"], tuning["no-typings"]);
      installBridgeExtension(
        dirs,
        {
          url: `${http.url.replace(/^http/, "ws")}/bridge`,
          token: bridge.token,
          workspaceFolders: [...core.workspace.roots],
        },
        env,
      );
      supervisor = new RuntimeSupervisor({
        runtime,
        dirs,
        folder: core.workspace.primary,
        log: log.child("runtime"),
        env: runtimeEnv(env, tuning, log),
        onOutput: (line) => {
          const step = runtimeStep(line);
          if (!step) return;
          timeline.mark(step);
          keeper?.progress();
        },
        ...(tuning["quick-heal"] ? { minBackoffMs: 250 } : {}),
        nodeFlags: serverNodeFlags(tuning),
        oneProcess: tuning["one-process"],
      });
      supervisor.onState((s) => {
        if (s === "running") {
          runtimeStarts++;
          timeline.mark("runtime up");
          if (runtimeStarts > 1 && tuning["quick-heal"]) keeper?.reloadNow("the runtime restarted");
        } else if (s === "crashed") timeline.restart("the runtime exited");
        refreshReason();
        if (s === "running" && runtime)
          o.editor.setWorkbench({ url: () => session.link(`${publicUrl}${publicPath()}`), runtime: runtime.kind });
        else if (s !== "running") o.editor.setWorkbench(undefined);
      });
      if (closed) throw new CcbError("RUNTIME_UNAVAILABLE", "The workbench was closed while starting.");
      await supervisor.start();
      timings.runtimeReadyMs = performance.now() - t0;
      timings.runtimeBootMs = supervisor.bootMs;
      if (closed) throw new CcbError("RUNTIME_UNAVAILABLE", "The workbench was closed while starting.");
      if (tuning["warm-server"]) {
        // code-server loads VS Code's server on the first page request: make it while Chromium starts.
        const page = runtime.workbenchPath(core.workspace.primary);
        void supervisor.get(page).then((status) => timeline.mark(`workbench page answered (${status})`));
      }
      pageUrl?.resolve(session.link(`${http.url}${publicPath()}`));
      if (o.headlessClient ?? true) {
        const sup = supervisor;
        keeper = new HeadlessKeeper({
          open: () => {
            const first = early;
            early = undefined;
            if (first) return first;
            return sup.state === "running" ? openHeadless(session.link(`${http.url}${publicPath()}`)) : undefined;
          },
          running: () => sup.state === "running",
          probe,
          log: log.child("headless"),
          onChange: refreshReason,
          ...(tuning["quick-heal"] ? { timing: { ...HEALTH, backoffMinMs: 250 } } : {}),
        });
        const idleS = o.headlessIdle ?? DEFAULT_HEADLESS_IDLE_S;
        if (idleS > 0) {
          park = new IdlePark({
            bridge,
            keeper,
            probe,
            log: log.child("headless"),
            idleMs: idleS * 1000,
            goneMs: HEALTH.probeTimeoutMs + 1_000,
            onChange: refreshReason,
            onWake: () => timeline.restart("an editor call reopens the headless client"),
          });
          bridge.setWaker(park);
        }
        await keeper.start();
      }
    } catch (err) {
      pageUrl?.reject(err);
      if (closed) return;
      const e = toCcbError(err);
      const hint = e.hintFor();
      unavailable = `${e.message}${hint ? ` ${hint}` : ""}`;
      log.warn(`workbench unavailable: ${unavailable}`);
      refreshReason();
    }
  })();

  let closing: Promise<void> | undefined;
  return {
    basePath,
    session,
    url: () => (runtime && supervisor?.state === "running" ? session.link(`${publicUrl}${publicPath()}`) : undefined),
    localUrl: () =>
      runtime && supervisor?.state === "running" ? session.link(`${http.url}${publicPath()}`) : undefined,
    link: (path) => session.link(`${publicUrl}${path}`),
    bridge,
    checkpoints,
    ready,
    bridgeConnected,
    headless: () => keeper?.client(),
    epoch: () => runtimeStarts,
    runtimePid: () => supervisor?.pid,
    status: () => ({
      state: unavailable ? "unavailable" : (supervisor?.state ?? "starting"),
      runtime: runtime?.kind ?? null,
      reason: bridge.active ? "" : reason(),
      bridge: { connected: Boolean(bridge.active), hosts: bridge.connections.length },
      health: {
        ...probe.snapshot(),
        runtimeRestarts: Math.max(0, runtimeStarts - 1),
        headlessRestarts: keeper?.restarts ?? 0,
      },
      headlessClient: keeper?.state ?? "off",
      timings: { ...timings },
    }),
    close() {
      closing ??= (async () => {
        closed = true;
        offActive();
        park?.close();
        bridge.setWaker(undefined);
        probe.close();
        await keeper?.close();
        await supervisor?.stop().catch(() => undefined);
        await ready.catch(() => undefined);
        await keeper?.close();
        await supervisor?.stop().catch(() => undefined);
        terminals.dispose();
        await bridge.close();
        for (const c of closeProxies) c();
        session.revokeFrames();
        o.editor.setWorkbench(undefined);
        if (dirs) removeStateDirs(dirs);
      })();
      return closing;
    },
  };
}
