import { setTimeout as sleep } from "node:timers/promises";
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
  /**
   * Another one-time link, never `url` itself (for --open, so the printed one stays usable);
   * undefined when none came.
   */
  link(): Promise<string | undefined>;
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
  return { url, link: () => anotherLink(lease, url), runBy: () => lease.runBy(), close: () => lease.release() };
}

/** How long --open waits for a shared workbench's next one-time link (its owner mints it on request). */
const NEXT_LINK_MS = 5000;

/**
 * A one-time link other than `printed`: a workbench this process runs mints one on each call; an
 * attached one hands out the link it fetched from its owner and fetches the next (so right after
 * `printed` there may be none yet: wait for it, never hand out `printed` again).
 */
async function anotherLink(lease: WorkbenchLease, printed: string): Promise<string | undefined> {
  const deadline = Date.now() + NEXT_LINK_MS;
  for (;;) {
    const link = lease.url();
    if (link && link !== printed) return link;
    if (Date.now() > deadline) return undefined;
    await sleep(100);
  }
}
