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
import { WorkbenchHostSupply } from "./host-supply.ts";
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
  type ProxyTarget,
  SESSION_PAGE,
  type WorkbenchHttp,
} from "./routes.ts";
import type { RuntimeOptions } from "./runtime-flags.ts";
import { extensionHostEvent, runtimeStep, Timeline } from "./timeline.ts";
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
  return new Workbench(o);
}

/** The headless client started beside the runtime (early-browser), and how it learns its page once the runtime answers. */
interface EarlyBrowser {
  client: Promise<HeadlessClient>;
  page: { resolve: (url: string) => void; reject: (err: unknown) => void };
}

/**
 * One running workbench. The constructor mounts its routes and starts `#boot` (the runtime, its user
 * data, the headless client), whose parts fill in the fields below as they come up; `#reason` says,
 * from them, why the editor is not there, and `#refreshReason` keeps the core's editor state saying it.
 */
class Workbench implements WorkbenchHandle {
  readonly basePath = `/ide/${newToken(24)}`;
  readonly session: BrowserSession;
  readonly bridge: BridgeServer;
  readonly checkpoints: CheckpointsView;
  readonly ready: Promise<void>;
  readonly bridgeConnected: Promise<void>;

  readonly #o: WorkbenchOptions;
  readonly #log: Logger;
  readonly #env: NodeJS.ProcessEnv;
  readonly #t0 = performance.now();
  readonly #tuning: Tuning;
  readonly #timeline: Timeline;
  readonly #timings: WorkbenchStatus["timings"] = {
    runtimeReadyMs: null,
    runtimeBootMs: null,
    bridgeConnectedMs: null,
  };
  readonly #probe: BridgeProbe;
  readonly #terminals: TerminalShare;
  /** The browser-facing gateway's base URL (the loopback one's when there is no other). */
  readonly #publicUrl: string;
  readonly #unmount: (() => void)[];
  readonly #offActive: () => void;

  // Filled in by #boot, in this order; undefined until then (or for good, when the workbench is unavailable).
  #runtime: Runtime | undefined;
  #early: EarlyBrowser | undefined;
  #dirs: LaunchDirs | undefined;
  #supervisor: RuntimeSupervisor | undefined;
  #keeper: HeadlessKeeper | undefined;
  #park: IdlePark | undefined;
  /** Whether an editor window is coming when none serves, and the wait for it (host-supply.ts). */
  readonly #hosts: WorkbenchHostSupply;
  /** How many times the runtime came up (the epoch open tabs reload on). */
  #runtimeStarts = 0;
  /** Why the workbench cannot run ("" while it can). */
  #unavailable = "";
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(o: WorkbenchOptions) {
    this.#o = o;
    this.#log = o.log;
    this.#env = o.env ?? process.env;
    this.#tuning = workbenchTuning(this.#env);
    this.#timeline = new Timeline(o.log);
    this.bridge = new BridgeServer({
      core: o.core,
      editor: o.editor,
      log: o.log.child("bridge"),
      idleReason: () => this.#reason(),
    });
    this.#hosts = new WorkbenchHostSupply({ bridge: this.bridge, running: () => this.#ownClientRuns() });
    this.bridge.setSupply(this.#hosts);
    this.#probe = new BridgeProbe(this.bridge, o.log.child("health"));
    this.#terminals = new TerminalShare(o.core, this.bridge, o.log.child("terminals"));
    this.checkpoints = new CheckpointsView(o.core, this.bridge, o.log.child("checkpoints-view"));
    this.bridge.setServe((method, params, conn) =>
      isCheckpointMethod(method)
        ? this.checkpoints.serve(method, params, conn)
        : this.#terminals.serve(method, params, conn),
    );
    let markConnected!: () => void;
    this.bridgeConnected = new Promise<void>((r) => (markConnected = r));
    this.#offActive = this.bridge.onActiveChange((a) => this.#onBridgeActive(a !== undefined, markConnected));
    this.#refreshReason();

    this.#publicUrl = (o.publicHttp ?? o.http).url;
    this.session = this.#browserSession();
    this.#unmount = this.#mountRoutes();
    this.ready = this.#boot();
  }

  // --- the editor state: why there is no editor, said to the core ---

  #reason(): string {
    if (this.#unavailable) return this.#unavailable;
    const keeper = this.#keeper;
    switch (this.#supervisor?.state ?? "starting") {
      case "starting":
        return "The workbench is starting; editor tools work once its extension host connects.";
      case "crashed":
        return "The workbench crashed and is being restarted.";
      case "stopped":
        return "The workbench stopped.";
      case "running":
        if (keeper?.state === "parked" || this.#park?.parked)
          return "The workbench's headless client is closed while idle; the next editor call reopens it (a few seconds).";
        if (keeper?.error)
          return `The workbench is running but its headless client could not start (${keeper.error}); ccb retries it. A workbench tab serves too: open it (vscode_open gives the host its address).`;
        if (keeper)
          return this.bridge.connections.length > 0
            ? "The workbench is running but no editor window answers; ccb is reopening its headless client (usually within 30 s)."
            : "The workbench is running and its headless client is opening the editor (usually within 30 s).";
        return "The workbench is running but no workbench tab is open, so there is no extension host: open it (vscode_open gives the host its address) or start ccb with --headless-client.";
    }
  }

  /**
   * The editor served, the runtime runs and ccb's own headless client runs or is being replaced: a
   * host that stopped answering its probe (busy under load) answers again, or the keeper replaces it.
   */
  #ownClientRuns(): boolean {
    return (
      !this.#closed &&
      this.#timings.bridgeConnectedMs !== null &&
      this.#supervisor?.state === "running" &&
      (this.#keeper?.state === "running" || this.#keeper?.state === "restarting")
    );
  }

  #refreshReason(): void {
    if (this.bridge.active || this.#closed) return;
    if (this.#hosts.expected())
      this.#o.editor.set(this.bridge); // the next call reopens the headless client, or waits for its host
    else this.#o.editor.clear(this.#reason());
  }

  #onBridgeActive(active: boolean, markConnected: () => void): void {
    if (active && this.#timings.bridgeConnectedMs === null) {
      this.#timings.bridgeConnectedMs = performance.now() - this.#t0;
      this.#log.info(`bridge connected ${Math.round(this.#timings.bridgeConnectedMs)} ms after start`);
      markConnected();
    }
    if (active) {
      this.#timeline.mark("bridge connected");
      // The idle time of ccb's client counts from when a window serves, not from its page's load: a
      // client whose extension host took longer than the idle time to start was closed the moment it
      // served (workbench-park: every start cost a second one under load).
      this.#keeper?.progress();
    }
  }

  // --- the routes ---

  #browserSession(): BrowserSession {
    // The cookie goes only below the unguessable prefix; the fixed entries land on their pages below it.
    const landings: Record<string, string> = {
      "/app": `${this.basePath}${APP_PAGE}`,
      "/session.json": `${this.basePath}${SESSION_PAGE}`,
    };
    return new BrowserSession({
      path: () => this.basePath,
      landing: (p) => landings[p] ?? p,
      secure: () => this.#publicUrl.startsWith("https:"),
    });
  }

  /** `/bridge` on the loopback gateway; the proxy and the session routes on each gateway. Returns their unmounts. */
  #mountRoutes(): (() => void)[] {
    const { http, publicHttp } = this.#o;
    http.gateway.addUpgrade(
      "/bridge",
      (req, socket, head) => this.bridge.handleUpgrade(req, socket, head),
      BRIDGE_POLICY,
    );
    const workbench = this;
    const target: ProxyTarget = {
      socketPath: () => (this.#supervisor?.state === "running" ? this.#supervisor.socketPath : undefined),
      get announcePrefix() {
        return workbench.#runtime?.announcePrefix ?? false;
      },
      epoch: () => this.#runtimeStarts,
      // Proves epoch answers to this gateway's pages; a successor has a new prefix (its pages are new ones).
      proofKey: randomBytes(32),
    };
    const servers = publicHttp ? [http, publicHttp] : [http];
    const plainFor = this.#tuning["plain-loopback"] ? "loopback" : this.#tuning["plain-headless"] ? "headless" : "none";
    const unmount = servers.map((s) =>
      // A page's socket closed: its window may be gone, and a closed tab's extension host lingers for the
      // runtime's reconnection grace; a host that misses the probe this starts gives up the calls waiting
      // on it (they would wait out their timeouts) and the window that serves next answers their retries.
      mountWorkbenchProxy(s, this.basePath, target, this.session, this.#log.child("proxy"), plainFor, () =>
        this.#probe.windowGone(),
      ),
    );
    for (const s of servers) {
      mountSessionRoutes(s, this.basePath, this.session, this.#o.authToken, () => ({
        runtime: this.#runtime?.kind ?? "none",
        state: this.#state(),
        workbenchPath: this.#publicPath() ?? "",
        bridge: {
          connected: Boolean(this.bridge.active),
          reason: this.bridge.active ? "" : this.#reason(),
          hosts: this.bridge.connections.length,
        },
      }));
    }
    return unmount;
  }

  #state(): WorkbenchStatus["state"] {
    return this.#unavailable ? "unavailable" : (this.#supervisor?.state ?? "starting");
  }

  /** The workbench page below the prefix, once the runtime is known. */
  #publicPath(): string | undefined {
    if (!this.#runtime) return undefined;
    return `${this.basePath}${this.#runtime.workbenchPath(this.#o.core.workspace.primary)}`;
  }

  /** A one-time link to the workbench page on the loopback gateway (what the headless client opens). */
  #localLink(): string {
    return this.session.link(`${this.#o.http.url}${this.#publicPath()}`);
  }

  #running(): boolean {
    return this.#runtime !== undefined && this.#supervisor?.state === "running";
  }

  // --- the boot: runtime, user data, supervisor, headless client ---

  async #boot(): Promise<void> {
    try {
      const runtime = await resolveRuntime({ ...this.#o, env: this.#env });
      this.#runtime = runtime;
      if ((this.#o.headlessClient ?? true) && this.#tuning["early-browser"] && !this.#closed)
        this.#early = this.#startEarlyBrowser();
      this.#dirs = this.#prepareUserData();
      const supervisor = this.#superviseRuntime(runtime, this.#dirs);
      this.#supervisor = supervisor;
      this.#throwIfClosed();
      await supervisor.start();
      this.#timings.runtimeReadyMs = performance.now() - this.#t0;
      this.#timings.runtimeBootMs = supervisor.bootMs;
      this.#throwIfClosed();
      if (this.#tuning["warm-server"]) {
        // code-server loads VS Code's server on the first page request: make it while Chromium starts.
        const page = runtime.workbenchPath(this.#o.core.workspace.primary);
        void supervisor.get(page).then((status) => this.#timeline.mark(`workbench page answered (${status})`));
      }
      this.#early?.page.resolve(this.#localLink());
      if (this.#o.headlessClient ?? true) await this.#keepHeadlessClient(supervisor);
    } catch (err) {
      this.#early?.page.reject(err);
      if (this.#closed) return;
      const e = toCcbError(err);
      const hint = e.hintFor();
      this.#unavailable = `${e.message}${hint ? ` ${hint}` : ""}`;
      this.#log.warn(`workbench unavailable: ${this.#unavailable}`);
      this.#refreshReason();
    }
  }

  #throwIfClosed(): void {
    if (this.#closed) throw new CcbError("RUNTIME_UNAVAILABLE", "The workbench was closed while starting.");
  }

  #openHeadless(url: string | Promise<string>): Promise<HeadlessClient> {
    return startHeadlessClient({
      url,
      log: this.#log.child("headless"),
      env: this.#env,
      extraFlags: headlessChromiumFlags(this.#tuning),
      onLoad: () => {
        this.#timeline.mark("page loaded");
        this.#keeper?.progress();
      },
    });
  }

  /** The headless client started beside the runtime: it navigates once the runtime answers. */
  #startEarlyBrowser(): EarlyBrowser {
    let page!: EarlyBrowser["page"];
    const client = this.#openHeadless(
      new Promise<string>((resolve, reject) => {
        page = { resolve, reject };
      }),
    );
    client.catch(() => undefined); // its failure is the keeper's to report
    return { client, page };
  }

  /** The runtime's user data and settings, with the bridge extension told where ccb's /bridge is. */
  #prepareUserData(): LaunchDirs {
    const { core, http } = this.#o;
    const tuning = this.#tuning;
    const dirs = createStateDirs(
      core.workspace.roots,
      this.#env,
      this.#o.keepUserData,
      tuning["lean-settings"],
      tuning["no-typings"],
    );
    installBridgeExtension(
      dirs,
      {
        url: `${http.url.replace(/^http/, "ws")}/bridge`,
        token: this.bridge.token,
        workspaceFolders: [...core.workspace.roots],
      },
      this.#env,
    );
    return dirs;
  }

  #superviseRuntime(runtime: Runtime, dirs: LaunchDirs): RuntimeSupervisor {
    const tuning = this.#tuning;
    const supervisor = new RuntimeSupervisor({
      runtime,
      dirs,
      folder: this.#o.core.workspace.primary,
      log: this.#log.child("runtime"),
      env: runtimeEnv(this.#env, tuning, this.#log),
      onOutput: (line) => {
        const host = extensionHostEvent(line);
        if (host?.event === "launched") this.#keeper?.hostLaunched(host.pid);
        else if (host) this.#keeper?.hostExited(host.pid);
        const step = runtimeStep(line);
        if (!step) return;
        this.#timeline.mark(step);
        this.#keeper?.progress();
      },
      ...(tuning["quick-heal"] ? { minBackoffMs: 250 } : {}),
      nodeFlags: serverNodeFlags(tuning),
      oneProcess: tuning["one-process"],
    });
    supervisor.onState((s) => this.#onRuntimeState(s, runtime));
    return supervisor;
  }

  #onRuntimeState(s: WorkbenchState, runtime: Runtime): void {
    if (s === "running") {
      this.#runtimeStarts++;
      this.#timeline.mark("runtime up");
      if (this.#runtimeStarts > 1 && this.#tuning["quick-heal"]) this.#keeper?.reloadNow("the runtime restarted");
    } else if (s === "crashed") {
      this.#timeline.restart("the runtime exited");
      this.#keeper?.runtimeExited();
    }
    this.#refreshReason();
    if (s === "running")
      this.#o.editor.setWorkbench({
        url: () => this.session.link(`${this.#publicUrl}${this.#publicPath()}`),
        runtime: runtime.kind,
      });
    else this.#o.editor.setWorkbench(undefined);
  }

  /** The headless client kept open while the runtime runs, and closed while idle (--headless-idle). */
  async #keepHeadlessClient(sup: RuntimeSupervisor): Promise<void> {
    const log = this.#log.child("headless");
    const keeper = new HeadlessKeeper({
      open: () => {
        const first = this.#early?.client;
        this.#early = undefined;
        if (first) return first;
        return sup.state === "running" ? this.#openHeadless(this.#localLink()) : undefined;
      },
      running: () => sup.state === "running",
      probe: this.#probe,
      log,
      onChange: () => this.#refreshReason(),
      ...(this.#tuning["quick-heal"] ? { timing: { ...HEALTH, backoffMinMs: 250 } } : {}),
    });
    this.#keeper = keeper;
    const idleS = this.#o.headlessIdle ?? DEFAULT_HEADLESS_IDLE_S;
    if (idleS > 0) {
      this.#park = new IdlePark({
        bridge: this.bridge,
        keeper,
        probe: this.#probe,
        log,
        idleMs: idleS * 1000,
        goneMs: HEALTH.probeTimeoutMs + 1_000,
        onChange: () => this.#refreshReason(),
        onWake: () => this.#timeline.restart("an editor call reopens the headless client"),
      });
      this.#hosts.reopener = this.#park;
    }
    await keeper.start();
  }

  // --- the handle ---

  url(): string | undefined {
    return this.#running() ? this.session.link(`${this.#publicUrl}${this.#publicPath()}`) : undefined;
  }

  localUrl(): string | undefined {
    return this.#running() ? this.#localLink() : undefined;
  }

  link(path: string): string {
    return this.session.link(`${this.#publicUrl}${path}`);
  }

  headless(): HeadlessClient | undefined {
    return this.#keeper?.client();
  }

  epoch(): number {
    return this.#runtimeStarts;
  }

  runtimePid(): number | undefined {
    return this.#supervisor?.pid;
  }

  status(): WorkbenchStatus {
    return {
      state: this.#state(),
      runtime: this.#runtime?.kind ?? null,
      reason: this.bridge.active ? "" : this.#reason(),
      bridge: { connected: Boolean(this.bridge.active), hosts: this.bridge.connections.length },
      health: {
        ...this.#probe.snapshot(),
        runtimeRestarts: Math.max(0, this.#runtimeStarts - 1),
        headlessRestarts: this.#keeper?.restarts ?? 0,
      },
      headlessClient: this.#keeper?.state ?? "off",
      timings: { ...this.#timings },
    };
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#closed = true;
    this.#offActive();
    this.#park?.close();
    this.#hosts.reopener = undefined;
    this.bridge.setSupply(undefined);
    this.#probe.close();
    await this.#keeper?.close();
    await this.#supervisor?.stop().catch(() => undefined);
    await this.ready.catch(() => undefined);
    await this.#keeper?.close();
    await this.#supervisor?.stop().catch(() => undefined);
    this.#terminals.dispose();
    this.checkpoints.close();
    await this.bridge.close();
    for (const unmount of this.#unmount) unmount();
    this.session.revokeFrames();
    this.#o.editor.setWorkbench(undefined);
    if (this.#dirs) removeStateDirs(this.#dirs);
  }
}
