import type { Core } from "../../core/core.ts";
import { CcbError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import type { WorkbenchRuntimeOptions } from "../../workbench/runtime-flags.ts";
import type { WorkbenchLease } from "../../workbench/share/acquire.ts";

/**
 * The workbench of `ccb ide`: one of the shared ones (src/workbench/share), mounted on a loopback
 * Gateway with a random port (bridge at /bridge, the workbench at /ide/<key>, which a browser opens
 * through a one-time link that sets the workbench cookie).
 */

export interface IdeWorkbench {
  /** A one-time link to the workbench (exchanged for the workbench cookie by the browser that opens it). */
  url: string;
  /** Another one-time link (for --open, so the printed one stays usable). */
  link(): string;
  close(): Promise<void>;
}

export interface IdeWorkbenchOptions extends WorkbenchRuntimeOptions {
  env?: NodeJS.ProcessEnv | undefined;
}

/**
 * The workbench of `ccb ide` as one of the shared ones (src/workbench/share): attaches to the
 * workbench another ccb front end runs for the same roots, or starts and publishes one.
 */
export async function acquireIdeWorkbench(
  core: Core,
  log: Logger,
  options: IdeWorkbenchOptions,
): Promise<IdeWorkbench & { runBy: WorkbenchLease["runBy"] }> {
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
  return { url, link: () => lease.url() ?? url, runBy: () => lease.runBy(), close: () => lease.release() };
}
