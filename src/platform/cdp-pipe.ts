import type { Readable, Writable } from "node:stream";
import { PendingCalls } from "../editor-wire/pending.ts";

/** One DevTools session (the browser, or a page attached with flatten) as the callers use it. */
export interface CdpSession {
  send(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>;
  on(event: string, listener: (params: Record<string, unknown>) => void): void;
}

interface Message {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message?: string };
  sessionId?: string;
}

/**
 * The Chrome DevTools Protocol over Chromium's --remote-debugging-pipe (fd 3 in, fd 4 out; one
 * JSON message per NUL-terminated chunk). No port: nothing else on the machine can drive the
 * browser, and the browser exits when the pipe closes (ccb gone).
 */
export class CdpPipe {
  readonly #pending = new PendingCalls<Record<string, unknown>>();
  #listeners = new Map<string, Set<(params: Record<string, unknown>) => void>>();
  #buf = "";
  #closed = false;

  constructor(
    private readonly out: Writable,
    input: Readable,
  ) {
    out.on("error", () => this.#fail(new Error("the DevTools pipe closed")));
    input.on("error", () => this.#fail(new Error("the DevTools pipe closed")));
    input.on("close", () => this.#fail(new Error("the DevTools pipe closed")));
    input.on("data", (chunk: Buffer) => {
      this.#buf += chunk.toString("utf8");
      let i: number;
      while ((i = this.#buf.indexOf("\0")) !== -1) {
        const raw = this.#buf.slice(0, i);
        this.#buf = this.#buf.slice(i + 1);
        let m: Message;
        try {
          m = JSON.parse(raw) as Message;
        } catch {
          continue;
        }
        this.#dispatch(m);
      }
    });
  }

  #dispatch(m: Message): void {
    if (m.id !== undefined) {
      if (m.error) this.#pending.reject(m.id, new Error(m.error.message ?? "DevTools error"));
      else this.#pending.resolve(m.id, m.result ?? {});
      return;
    }
    if (!m.method) return;
    for (const l of this.#listeners.get(`${m.sessionId ?? ""}|${m.method}`) ?? []) l(m.params ?? {});
  }

  #fail(err: Error): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#pending.failAll(() => err);
  }

  send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<Record<string, unknown>> {
    if (this.#closed) return Promise.reject(new Error("the DevTools pipe is closed"));
    return this.#pending.call((id) => {
      this.out.write(`${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`);
    });
  }

  on(event: string, listener: (params: Record<string, unknown>) => void, sessionId?: string): void {
    const key = `${sessionId ?? ""}|${event}`;
    let set = this.#listeners.get(key);
    if (!set) this.#listeners.set(key, (set = new Set()));
    set.add(listener);
  }

  /** A session bound to one target (or the browser when sessionId is undefined). */
  session(sessionId?: string): CdpSession {
    return {
      send: (method, params) => this.send(method, params, sessionId),
      on: (event, listener) => this.on(event, listener, sessionId),
    };
  }

  /** Attach to the first page target; resolves with its session. */
  async attachFirstPage(timeoutMs = 30_000): Promise<CdpSession> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { targetInfos } = (await this.send("Target.getTargets")) as {
        targetInfos?: Array<{ targetId: string; type: string }>;
      };
      const page = targetInfos?.find((t) => t.type === "page");
      if (page) {
        const { sessionId } = (await this.send("Target.attachToTarget", {
          targetId: page.targetId,
          flatten: true,
        })) as { sessionId: string };
        return this.session(sessionId);
      }
      if (Date.now() > deadline) throw new Error("Chromium opened no page");
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
