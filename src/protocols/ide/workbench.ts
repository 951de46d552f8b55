import type { Core } from "../../core/core.ts";
import { CcbError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import { Gateway } from "../../net/gateway.ts";
import { startWorkbench, type WorkbenchHandle as Workbench } from "../../workbench/index.ts";
import type { RuntimeKind } from "../../workbench/launcher/types.ts";
import type { WorkbenchHandle } from "./run.ts";

/**
 * The workbench of `ccb ide`: a Gateway (src/net/gateway.ts) on 127.0.0.1 with a random port, and
 * the workbench mounted on it (bridge at /bridge, the workbench at /ide/<key>, which a browser opens
 * through a one-time link that sets the workbench cookie).
 */

export interface IdeWorkbenchOptions {
  runtime?: RuntimeKind | undefined;
  runtimeRoot?: string | undefined;
  runtimeNode?: string | undefined;
  headlessClient?: boolean | undefined;
  /** false (`--no-share`): a private workbench, neither attached to nor published. */
  share?: boolean | undefined;
  env?: NodeJS.ProcessEnv | undefined;
}

export interface IdeWorkbench extends WorkbenchHandle {
  workbench: Workbench;
}

export async function startIdeWorkbench(core: Core, log: Logger, options: IdeWorkbenchOptions): Promise<IdeWorkbench> {
  const gateway = new Gateway({ host: "127.0.0.1", port: 0, log: log.child("gateway") });
  const base = await gateway.listen();
  const workbench = startWorkbench({
    core,
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
  return { url, link: () => workbench.url() ?? url, workbench, close };
}

/**
 * The workbench of `ccb ide` as one of the shared ones (src/workbench/share): attaches to the
 * workbench another ccb front end runs for the same roots, or starts and publishes one.
 */
export async function acquireIdeWorkbench(
  core: Core,
  log: Logger,
  options: IdeWorkbenchOptions,
): Promise<WorkbenchHandle & { role(): string }> {
  const { acquireWorkbench } = await import("../../workbench/share/acquire.ts");
  const lease = await acquireWorkbench({ core, log, frontEnd: "ide", start: true, options, env: options.env });
  if (!lease) throw new CcbError("RUNTIME_UNAVAILABLE", "The workbench did not start.");
  await lease.ready();
  const url = lease.url();
  if (!url) {
    const reason = lease.handle()?.status().reason ?? core.bridge.status().reason;
    await lease.release();
    throw new CcbError("RUNTIME_UNAVAILABLE", reason || "The workbench did not start.");
  }
  return { url, link: () => lease.url() ?? url, role: () => lease.role, close: () => lease.release() };
}
