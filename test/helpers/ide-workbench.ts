import type { Core } from "../../src/core/core.ts";
import { CcbError } from "../../src/core/errors.ts";
import type { Logger } from "../../src/core/log.ts";
import { Gateway } from "../../src/net/gateway.ts";
import type { IdeWorkbench, IdeWorkbenchOptions } from "../../src/protocols/ide/workbench.ts";
import { startWorkbench, type WorkbenchHandle as Workbench } from "../../src/workbench/index.ts";

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
  return { url, link: () => workbench.url() ?? url, workbench, close };
}
