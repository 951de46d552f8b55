import type { Core } from "../../core/core.ts";
import type { Logger } from "../../core/log.ts";

/** How `ccb acp` gets a workbench for a session (from `ccb acp --workbench` and its runtime options). */
export interface AcpWorkbenchOptions {
  /** Start a workbench when none is there (`ccb acp --workbench`); default: only attach to one. */
  start: boolean;
  /** An existing runtime install (code-server package folder or OpenVSCode); default CCB_RUNTIME_ROOT. */
  runtimeRoot?: string | undefined;
  /** Node 24 for code-server; default CCB_RUNTIME_NODE. */
  runtimeNode?: string | undefined;
  /** Keep the bridge live in headless Chromium with nobody watching (default true). */
  headlessClient?: boolean | undefined;
  env?: NodeJS.ProcessEnv | undefined;
}

/** A session's hold on a workbench: while it is held, `core.bridge` connects when the workbench's extension host does. */
export interface AcpWorkbench {
  /** Browser link to the workbench, once it runs (secret: for the person, never for the model). */
  url(): string | undefined;
  close(): Promise<void>;
}

/**
 * The one place `ccb acp` acquires a workbench for a session's roots (core.workspace.roots: its cwd
 * and additionalDirectories). Undefined when there is none and `start` is false. With `start`, it
 * starts one in this process on a loopback gateway, as `ccb ide` does; the runtime boots in the
 * background and `core.bridge` fills when its extension host connects.
 */
export async function acquireAcpWorkbench(core: Core, log: Logger, options: AcpWorkbenchOptions): Promise<AcpWorkbench | undefined> {
  if (!options.start) return undefined;
  const [{ Gateway }, { startWorkbench }] = await Promise.all([import("../../net/gateway.ts"), import("../../workbench/index.ts")]);
  const gateway = new Gateway({ host: "127.0.0.1", port: 0, log: log.child("gateway") });
  const base = await gateway.listen();
  const workbench = startWorkbench({
    core,
    http: { gateway, url: base },
    log: log.child("workbench"),
    runtimeRoot: options.runtimeRoot,
    runtimeNode: options.runtimeNode,
    headlessClient: options.headlessClient,
    env: options.env,
  });
  return {
    url: () => workbench.url(),
    async close() {
      await workbench.close();
      await gateway.close();
    },
  };
}
