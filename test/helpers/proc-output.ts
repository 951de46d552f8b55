import type { ChildProcess } from "node:child_process";
import type { Readable } from "node:stream";

/** Collects a stream's text and resolves waits when it matches (no sleeps). */
export class Output {
  text = "";
  readonly #waiters: { re: RegExp; resolve: (m: RegExpMatchArray) => void; reject: (e: Error) => void }[] = [];
  #ended = false;

  constructor(stream: Readable | null | undefined) {
    stream?.setEncoding("utf8");
    stream?.on("data", (d: string) => {
      this.text += d;
      for (const w of [...this.#waiters]) {
        const m = this.text.match(w.re);
        if (m) {
          this.#waiters.splice(this.#waiters.indexOf(w), 1);
          w.resolve(m);
        }
      }
    });
    stream?.on("end", () => {
      this.#ended = true;
      for (const w of this.#waiters.splice(0))
        w.reject(new Error(`stream ended without matching ${w.re}:\n${this.text}`));
    });
  }

  /** Resolve on the first match; reject when the stream ends or after timeoutMs (every wait is bounded). */
  waitFor(re: RegExp, timeoutMs = 180_000): Promise<RegExpMatchArray> {
    const m = this.text.match(re);
    if (m) return Promise.resolve(m);
    if (this.#ended) return Promise.reject(new Error(`stream ended without matching ${re}:\n${this.text}`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const i = this.#waiters.indexOf(w);
        if (i !== -1) this.#waiters.splice(i, 1);
        reject(new Error(`no match for ${re} within ${timeoutMs} ms:\n${this.text.slice(-4000)}`));
      }, timeoutMs);
      const w = {
        re,
        resolve: (v: RegExpMatchArray) => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: (e: Error) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      this.#waiters.push(w);
    });
  }
}

export function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
}
