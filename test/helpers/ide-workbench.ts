import { type Core, createCore } from "../../src/core/core.ts";
import type { EditorMethod, EditorMethods } from "../../src/core/editor/bridge.ts";
import { CcbError } from "../../src/core/errors.ts";
import type { Logger } from "../../src/core/log.ts";
import { Gateway } from "../../src/net/gateway.ts";
import { type IdeServer, startIde } from "../../src/protocols/ide/ide.ts";
import type { IdeWorkbench, IdeWorkbenchOptions } from "../../src/protocols/ide/workbench.ts";
import { startWorkbench, type WorkbenchHandle as Workbench } from "../../src/workbench/index.ts";
import { artifactSource, recordingLogger, saveArtifacts, stateLogs } from "./artifacts.ts";
import { bounded } from "./bounded.ts";
import { codeServerRoot, node24 } from "./peers.ts";
import { openPersonWindow, type PersonWindow } from "./person-page.ts";

/**
 * A private workbench as `ccb ide` mounts one (a loopback Gateway with the workbench on it), with
 * its in-process handle exposed, for tests that wait on the bridge itself.
 */
export interface IdeWorkbenchFixture extends IdeWorkbench {
  workbench: Workbench;
}

export async function startIdeWorkbench(
  core: Core,
  log: Logger,
  options: IdeWorkbenchOptions,
): Promise<IdeWorkbenchFixture> {
  const gateway = new Gateway({ host: "127.0.0.1", port: 0, log: log.child("gateway") });
  const base = await gateway.listen();
  const workbench = startWorkbench({
    core,
    editor: core.claimEditor("bench"),
    http: { gateway, url: base },
    log,
    runtime: options.runtime,
    runtimeRoot: options.runtimeRoot,
    runtimeNode: options.runtimeNode,
    headlessClient: options.headlessClient,
    env: options.env,
  });
  const close = async () => {
    await workbench.close();
    await gateway.close();
  };
  await workbench.ready;
  const url = workbench.url();
  if (!url) {
    const reason = workbench.status().reason;
    await close();
    throw new CcbError("RUNTIME_UNAVAILABLE", reason || "The workbench did not start.");
  }
  return { url, link: async () => workbench.url(), workbench, close };
}

/**
 * ccb's IDE server over a private workbench (code-server + the bridge extension) that a person sees
 * in a real Chromium: what `ccb ide` runs, in process, with the person's window on it.
 */
export interface WorkbenchIde {
  core: Core;
  wb: IdeWorkbenchFixture;
  ide: IdeServer;
  window: PersonWindow;
  /** A call on the workbench's editor bridge, within 60 s (its raw answer). */
  bridgeCall<M extends EditorMethod>(method: M, params: EditorMethods[M]["params"]): Promise<unknown>;
  /** Close the window, the IDE server, the workbench and the core. */
  close(): Promise<void>;
}

export interface WorkbenchIdeOptions {
  /** The workspace (the core's one root). */
  workspace: string;
  /** The workbench's XDG_STATE_HOME. */
  stateDir: string;
  /** Where the IDE server writes its lock file. */
  lockDir: string;
  log: Logger;
}

/** Start the core, the workbench, the person's window on it and (once the bridge is connected) the IDE server. */
export async function startWorkbenchIde(o: WorkbenchIdeOptions): Promise<WorkbenchIde> {
  // ccb's log is kept at debug whatever the test prints; a failed test saves it with the runtime's logs.
  const { log, lines } = recordingLogger(o.log);
  const off = artifactSource("ccb", () => ({ "ccb.log": lines(), ...stateLogs(o.stateDir) }));
  const core = createCore({ roots: [o.workspace], log });
  let wb: IdeWorkbenchFixture | undefined;
  let win: PersonWindow | undefined;
  let ide: IdeServer | undefined;
  const close = async () => {
    off();
    await win?.chromium.close();
    await ide?.close();
    await wb?.close();
    await core.dispose();
  };
  try {
    wb = await startIdeWorkbench(core, log, {
      runtime: "code-server",
      runtimeRoot: codeServerRoot(),
      runtimeNode: node24(),
      headlessClient: false,
      env: { ...process.env, XDG_STATE_HOME: o.stateDir },
    });
    win = await openPersonWindow(wb.url, log);
    await bounded(wb.workbench.bridgeConnected, 180_000, "the workbench bridge connecting");
    ide = await startIde({ core, log, lockDir: o.lockDir });
  } catch (err) {
    await saveArtifacts("start-workbench-ide", err);
    await close();
    throw err;
  }
  return {
    core,
    wb,
    ide,
    window: win,
    bridgeCall: (method, params) => core.bridge.require().call(method, params, { signal: AbortSignal.timeout(60_000) }),
    close,
  };
}
