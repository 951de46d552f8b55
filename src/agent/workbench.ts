import { type Core, createCore } from "../core/core.ts";
import type { BridgeSlot, BridgeWriter } from "../core/editor/bridge.ts";
import type { Logger } from "../core/log.ts";
import type { WorkbenchRuntimeOptions } from "../workbench/runtime-flags.ts";
import type { WorkbenchLease } from "../workbench/share/acquire.ts";

/** How `ccb acp` gets a workbench for a session (from `ccb acp --workbench` and its runtime options). */
export interface AcpWorkbenchOptions extends WorkbenchRuntimeOptions {
  /** Start a workbench when none is there (`ccb acp --workbench`); default: only attach to one (`share: false` and `start`: a private one). */
  start: boolean;
  env?: NodeJS.ProcessEnv | undefined;
}

/** A session's hold on a workbench: while it is held, `core.bridge` connects when the workbench's extension host does. */
export interface AcpWorkbench {
  /** Browser link to the workbench, once it runs (secret: for the person, never for the model). */
  url(): string | undefined;
  close(): Promise<void>;
}

interface Held {
  /** The core the workbench's bridge fills (the sessions' cores mirror it). */
  core: Core;
  lease: Promise<WorkbenchLease | undefined>;
  sessions: number;
}

/** One acquisition per set of roots in this process, held while a session of those roots is open. */
const held = new Map<string, Held>();

/** Keep `to` showing the bridge of `from` (connected or not, with the reason). Returns a stop function. */
function mirror(from: BridgeSlot, to: BridgeWriter): () => void {
  const copy = () => {
    const s = from.status();
    if (s.connected) to.set(from.require());
    else to.clear(s.reason);
  };
  copy();
  return from.onChange(copy);
}

/**
 * The one place `ccb acp` acquires a workbench for a session's roots (core.workspace.roots: its cwd
 * and additionalDirectories): the shared workbench another ccb front end (`ccb ide`, `ccb serve`,
 * another `ccb acp`) runs for the same roots, attached over its loopback gateway. Undefined when
 * there is none and `start` is false; with `start` this process starts and publishes one (the
 * runtime boots in the background). Sessions of the same roots in this process share one
 * acquisition, made on a core of its own that each session's `core.bridge` mirrors; it is released
 * when the last of them closes.
 */
export async function acquireAcpWorkbench(
  core: Core,
  log: Logger,
  options: AcpWorkbenchOptions,
): Promise<AcpWorkbench | undefined> {
  const key = JSON.stringify(core.workspace.roots);
  let h = held.get(key);
  if (!h) {
    const { start, env, ...runtime } = options;
    const own = createCore({ roots: core.workspace.roots, log: log.child("workbench") });
    const lease = import("../workbench/share/acquire.ts").then(({ acquireWorkbench }) =>
      acquireWorkbench({
        core: own,
        log: log.child("workbench"),
        frontEnd: "acp",
        start,
        options: runtime,
        env,
      }),
    );
    h = { core: own, lease, sessions: 0 };
    held.set(key, h);
  }
  const entry = h;
  entry.sessions++;
  const leave = async () => {
    if (--entry.sessions > 0) return;
    if (held.get(key) === entry) held.delete(key);
    const lease = await entry.lease.catch(() => undefined);
    await lease?.release();
    await entry.core.dispose();
  };
  let lease: WorkbenchLease | undefined;
  try {
    lease = await entry.lease;
  } catch (err) {
    await leave();
    throw err;
  }
  if (!lease) {
    // nothing to hold: the next session looks again
    await leave();
    return undefined;
  }
  // the session's hold is the one writer of its core's editor state: it mirrors the acquisition's
  const editor = core.claimEditor("the ACP session's workbench");
  const stop = mirror(entry.core.bridge, editor);
  let closing: Promise<void> | undefined;
  return {
    url: () => lease.url(),
    close() {
      closing ??= (async () => {
        stop();
        editor.clear("The session's workbench was released.");
        await leave();
      })();
      return closing;
    },
  };
}
