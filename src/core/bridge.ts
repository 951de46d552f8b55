import { CcbError } from "./errors.ts";

/**
 * The live editor, as the core sees it. Implemented by the workbench's bridge server
 * (src/workbench); absent when no workbench is attached. Method names and payloads are defined
 * by the shared bridge contract (src/workbench/contract.ts).
 */
export interface EditorBridge {
  call(method: string, params: unknown, options?: { signal?: AbortSignal; timeoutMs?: number }): Promise<unknown>;
  /** Subscribe to editor events (selection changes, diagnostics, ...). Returns an unsubscribe function. */
  onEvent(listener: (event: { type: string; [key: string]: unknown }) => void): () => void;
}

/** The running workbench, when there is one (filled by src/workbench). The URL is host-only: `_meta`, never model-visible text. */
export interface WorkbenchInfo {
  /** Browser URL of the workbench, with a one-time token that a browser exchanges for the workbench cookie. */
  url: string;
  /** "openvscode" | "code-server". */
  runtime: string;
}

export interface BridgeStatus {
  connected: boolean;
  /** Why it is not connected, in words a user or model can act on. */
  reason: string;
}

/**
 * A slot the workbench fills in when its extension connects. Tools ask it for the bridge and
 * get a BRIDGE_UNAVAILABLE error, with the reason, when there is none: never a fake success.
 */
export class BridgeSlot {
  #bridge: EditorBridge | undefined;
  #reason = "No workbench is running in this ccb process (start `ccb serve` with the workbench enabled).";
  readonly #listeners = new Set<(status: BridgeStatus) => void>();
  #workbench: { url: string | (() => string); runtime: string } | undefined;

  /** The workbench the bridge belongs to (undefined when none runs); a URL function gives a fresh link per call. */
  workbench(): WorkbenchInfo | undefined {
    const w = this.#workbench;
    return w ? { url: typeof w.url === "function" ? w.url() : w.url, runtime: w.runtime } : undefined;
  }

  setWorkbench(info: { url: string | (() => string); runtime: string } | undefined): void {
    this.#workbench = info;
  }

  status(): BridgeStatus {
    return this.#bridge ? { connected: true, reason: "" } : { connected: false, reason: this.#reason };
  }

  set(bridge: EditorBridge): void {
    this.#bridge = bridge;
    this.#emit();
  }

  clear(reason: string): void {
    this.#bridge = undefined;
    this.#reason = reason;
    this.#emit();
  }

  /** The connected bridge, or BRIDGE_UNAVAILABLE saying why. */
  require(): EditorBridge {
    if (!this.#bridge) {
      throw new CcbError("BRIDGE_UNAVAILABLE", `The live editor bridge is not connected: ${this.#reason}`, {
        hint: "File, search, terminal and git tools still work. Editor tools need the workbench open (ccb serve starts it; a browser tab or --headless-client keeps it live).",
      });
    }
    return this.#bridge;
  }

  onChange(listener: (status: BridgeStatus) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(): void {
    const s = this.status();
    for (const l of this.#listeners) l(s);
  }
}
