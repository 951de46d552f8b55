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
 * and additionalDirectories): the shared workbench another ccb front end (`ccb ide`, `ccb serve`,
 * another `ccb acp`) runs for the same roots, attached over its loopback gateway. Undefined when
 * there is none and `start` is false; with `start` this process starts and publishes one (the
 * runtime boots in the background). Either way `core.bridge` fills when the extension host connects.
 */
export async function acquireAcpWorkbench(core: Core, log: Logger, options: AcpWorkbenchOptions): Promise<AcpWorkbench | undefined> {
  const { acquireWorkbench } = await import("../../workbench/share/acquire.ts");
  const lease = await acquireWorkbench({
    core,
    log: log.child("workbench"),
    frontEnd: "acp",
    start: options.start,
    options: { runtimeRoot: options.runtimeRoot, runtimeNode: options.runtimeNode, headlessClient: options.headlessClient },
    env: options.env,
  });
  return lease ? { url: () => lease.url(), close: () => lease.release() } : undefined;
}
