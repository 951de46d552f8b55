import type { RenderMode } from "./render-mode.ts";

/** The MCP App resource that shows the workbench. */
export const WORKBENCH_APP_URI = "ui://ccb/workbench.html";

/** How the MCP App shows the workbench, set by `ccb serve` when a workbench is configured. */
export interface WorkbenchAppInfo {
  /** Browser-facing gateway base URL (origin only matters: it goes into the App's CSP request). */
  gatewayUrl: string;
  renderMode: RenderMode;
  /** True until the workbench has started or failed to (vscode_open then says to retry). */
  starting: boolean;
  /**
   * The /stream WebSocket (stream mode, once running; default mode: `onDemand`, started by the first
   * viewer). Secret: App-only `_meta`, never text or logs.
   */
  stream?: { url: string; token: string; onDemand?: boolean } | undefined;
  /** Stream mode only: why the stream is not (yet) available; the App shows it instead of silently embedding. */
  streamError?: string | undefined;
}

/**
 * The App's state in one `ccb serve`: created by the MCP server assembly (src/protocols/mcp/index.ts)
 * and passed to the MCP servers of its sessions (resource + vscode_open metadata) and to the
 * workbench set-up that fills it in (gateway origin, stream address). The core knows nothing of it.
 */
export class AppState {
  #info: WorkbenchAppInfo | undefined;
  #expected = false;
  readonly #listeners = new Set<() => void>();

  /** The App configuration (undefined while it is being set up, or when no workbench runs). */
  current(): WorkbenchAppInfo | undefined {
    return this.#info;
  }

  /**
   * The server is configured with a workbench, so it offers the App from its first session on,
   * even before the workbench (and its gateway address) is set up.
   */
  expect(expected = true): void {
    this.#expected = expected;
    this.#emit();
  }

  /** Whether the server offers the App: configured with a workbench (starting or running). */
  offered(): boolean {
    return this.#expected || this.#info !== undefined;
  }

  set(info: WorkbenchAppInfo | undefined): void {
    this.#info = info;
    this.#emit();
  }

  /** Called whenever the configuration changes (set up, stream ready, gone). Returns an unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The configuration once it is set up; undefined if it is not within `timeoutMs` or the server stops offering it. */
  async wait(timeoutMs: number, signal?: AbortSignal): Promise<WorkbenchAppInfo | undefined> {
    if (this.#info || !this.#expected) return this.#info;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        off();
        signal?.removeEventListener("abort", done);
        resolve(this.#info);
      };
      const timer = setTimeout(done, timeoutMs);
      const off = this.onChange(() => {
        if (this.#info || !this.#expected) done();
      });
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  #emit(): void {
    for (const l of this.#listeners) l();
  }
}
