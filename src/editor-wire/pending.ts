/**
 * The one pending-call correlator of ccb's wires: the editor bridge both ways (bridge server ⇄ bridge
 * extension), the shared workbench's attach channel (an attached front end → its owner) and the
 * DevTools pipe. A call gets an id, is sent, and ends exactly once: answered, failed by the other side,
 * timed out, aborted by its caller, or failed together with every other call when the channel goes.
 * The errors are the caller's (this floor knows no CcbError): each option names the one it rejects with.
 */
export interface PendingCallOptions {
  /** Aborting gives the call up (abortError; the signal's reason by default). An aborted signal fails at once. */
  signal?: AbortSignal;
  /** > 0: the call is given up after this long (timeoutError). 0 or undefined: it waits for its answer. */
  timeoutMs?: number;
  timeoutError?: () => unknown;
  abortError?: () => unknown;
  /** The call was given up on this side (timeout or abort): tell the other side (a cancel frame). */
  onGiveUp?: (id: number) => void;
}

interface Waiting<T> {
  resolve(value: T): void;
  reject(error: unknown): void;
  cleanup(): void;
}

export class PendingCalls<T = unknown> {
  #nextId = 1;
  readonly #waiting = new Map<number, Waiting<T>>();

  /** Calls still waiting for their answer. */
  get size(): number {
    return this.#waiting.size;
  }

  /**
   * Send a call with a fresh id and wait for its answer. `send` writes the frame; when it throws
   * (the channel is not open) the call fails with that error and nothing is left waiting.
   */
  call(send: (id: number) => void, options: PendingCallOptions = {}): Promise<T> {
    const { signal, timeoutMs } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const giveUp = (error: unknown) => {
        if (!this.#waiting.delete(id)) return;
        cleanup();
        options.onGiveUp?.(id);
        reject(error);
      };
      const onAbort = () => giveUp(options.abortError ? options.abortError() : signal?.reason);
      const cleanup = () => {
        if (timer) clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      if (timeoutMs && timeoutMs > 0)
        timer = setTimeout(
          () => giveUp(options.timeoutError ? options.timeoutError() : new Error(`no answer within ${timeoutMs} ms`)),
          timeoutMs,
        );
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiting.set(id, { resolve, reject, cleanup });
      try {
        send(id);
      } catch (err) {
        this.#waiting.delete(id);
        cleanup();
        reject(err);
      }
    });
  }

  /** The answer to call `id` came: it succeeds. false when no such call waits (late, unknown or given up). */
  resolve(id: number, value: T): boolean {
    const w = this.#take(id);
    w?.resolve(value);
    return w !== undefined;
  }

  /** The other side failed call `id`. false when no such call waits. */
  reject(id: number, error: unknown): boolean {
    const w = this.#take(id);
    w?.reject(error);
    return w !== undefined;
  }

  /** The channel went away: every waiting call fails, each with its own `error()`. Returns how many. */
  failAll(error: () => unknown): number {
    const all = [...this.#waiting.values()];
    this.#waiting.clear();
    for (const w of all) {
      w.cleanup();
      w.reject(error());
    }
    return all.length;
  }

  #take(id: number): Waiting<T> | undefined {
    const w = this.#waiting.get(id);
    if (!w) return undefined;
    this.#waiting.delete(id);
    w.cleanup();
    return w;
  }
}
