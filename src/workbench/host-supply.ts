import { CcbError } from "../core/errors.ts";
import type { BridgeServer, HostSupply } from "./bridge-server.ts";

/** The part of the idle park (park.ts) a supply drives: a window closed while idle, and its reopening. */
export interface Reopener {
  readonly parked: boolean;
  /** Reopen it; resolves once some host serves, BRIDGE_UNAVAILABLE if none does in time. */
  wake(signal?: AbortSignal): Promise<void>;
}

/**
 * The workbench's one answer to "is an editor window coming, and when": the one place a call that
 * finds no serving host learns whether to wait. Two cases, one rule:
 * - ccb's headless client was closed while idle (`reopener` parked): every call reopens it and
 *   waits for it (a host still listed may be the closing page's);
 * - it runs or is being replaced (`running`), but no host answers (a host too busy for its probe
 *   answers again, or the keeper opens a new client): a call waits for a host, bounded by `waitMs`.
 * Otherwise (a person's tab closed, nothing of ccb's own coming) nothing is expected, and a call
 * fails at once with the reason.
 */
export class WorkbenchHostSupply implements HostSupply {
  reopener: Reopener | undefined;

  constructor(
    private readonly o: {
      bridge: BridgeServer;
      /** ccb's own headless client runs or is being replaced, and the editor has served before. */
      running: () => boolean;
      /** How long a call waits for a host that is expected back (default 60 s: the keeper's grace, then a new client). */
      waitMs?: number;
    },
  ) {}

  get parked(): boolean {
    return this.reopener?.parked ?? false;
  }

  expected(): boolean {
    return this.parked || this.o.running();
  }

  async arrival(signal?: AbortSignal): Promise<void> {
    if (this.reopener?.parked) await this.reopener.wake(signal);
    if (this.o.bridge.active || !this.o.running()) return;
    const bound = AbortSignal.timeout(this.o.waitMs ?? 60_000);
    try {
      await this.o.bridge.waitForActive(signal ? AbortSignal.any([signal, bound]) : bound);
    } catch (err) {
      if (signal?.aborted) throw err;
      if (!(err instanceof CcbError)) throw err;
      // the bound passed: the caller finds no host and fails with the reason
    }
  }
}
