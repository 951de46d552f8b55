import { Worker } from "node:worker_threads";
import { CcbError } from "../errors.ts";
import type { RawMatch } from "./common.ts";

/**
 * Regular-expression matching off the main thread. JavaScript's RegExp backtracks, so a pattern
 * such as `^(a+)+$` on one line of 37 characters runs for hours; run on the main thread it would
 * stall every client of the server. Here each search gets its own worker thread:
 * - the main thread walks and reads the files and hands them over in batches (buffers transferred,
 *   not copied); the worker decodes, pre-filters the whole file, splits lines and matches;
 * - a batch that does not come back within the deadline, or a cancelled search, terminates the
 *   worker (`Worker.terminate` stops a thread even inside a running RegExp), so the time a
 *   pattern can take is bounded and the main thread never runs the pattern at all.
 * The worker's source is a string evaluated by `new Worker(src, { eval: true })`: it needs no file
 * next to the bundle, so it works the same under Node, the esbuild bundle and Bun's compiled binary.
 */

/** Default: a batch of files the worker has not finished after this long ends the search. */
export const REGEX_BATCH_DEADLINE_MS = 15_000;

export interface RegexFile {
  rel: string;
  /** The file's text bytes (up to the first NUL line for files with a late NUL). */
  buf: Buffer;
}

export interface RegexSpec {
  source: string;
  ignoreCase: boolean;
  contextLines: number;
  maxLineChars: number;
}

// Plain JavaScript (CommonJS, evaluated in the worker): it must not reference anything outside.
const WORKER_SOURCE = String.raw`
"use strict";
const { parentPort } = require("node:worker_threads");
let re, fileRe, n = 0, maxLine = 2000;
const decoder = new TextDecoder("utf-8");
const cap = (t) => (t.length > maxLine ? t.slice(0, maxLine) + "\u2026 [line cut at " + maxLine + " chars]" : t);
const strip = (l) => (l.endsWith("\r") ? l.slice(0, -1) : l);
parentPort.on("message", (msg) => {
  if (msg.type === "init") {
    const flags = msg.ignoreCase ? "i" : "";
    re = new RegExp(msg.source, flags + "su");
    fileRe = new RegExp(msg.source, flags + "msu");
    n = msg.contextLines;
    maxLine = msg.maxLineChars;
    return;
  }
  const matches = [];
  for (const f of msg.files) {
    if (matches.length >= msg.limit) break;
    const text = decoder.decode(new Uint8Array(f.buf));
    if (!fileRe.test(text)) continue;
    const lines = text.split("\n");
    if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
    for (let i = 0; i < lines.length && matches.length < msg.limit; i++) {
      const line = lines[i];
      const m = re.exec(line);
      if (!m) continue;
      const match = { rel: f.rel, line: i + 1, column: m.index + 1, text: cap(strip(line)) };
      if (n > 0) {
        match.before = lines.slice(Math.max(0, i - n), i).map((l) => cap(strip(l)));
        match.after = lines.slice(i + 1, i + 1 + n).map((l) => cap(strip(l)));
      }
      matches.push(match);
    }
  }
  parentPort.postMessage({ id: msg.id, matches });
});
`;

let liveWorkers = 0;
/** Regex worker threads alive in this process (for tests and diagnostics). */
export function regexWorkersAlive(): number {
  return liveWorkers;
}

/** One search's worker. `match` batches; `close` (always call it) terminates the thread. */
export class RegexMatcher {
  readonly #worker: Worker;
  readonly #deadlineMs: number;
  #nextId = 0;
  #failed: Error | undefined;
  #pending: { id: number; resolve: (m: RawMatch[]) => void; reject: (e: Error) => void } | undefined;
  #closing: Promise<void> | undefined;
  readonly #exited: Promise<void>;

  constructor(spec: RegexSpec, options: { deadlineMs?: number } = {}) {
    this.#deadlineMs = options.deadlineMs ?? REGEX_BATCH_DEADLINE_MS;
    this.#worker = new Worker(WORKER_SOURCE, { eval: true });
    liveWorkers++;
    this.#exited = new Promise((resolve) => this.#worker.once("exit", () => resolve()));
    this.#worker.once("exit", () => {
      liveWorkers--;
      this.#fail(new CcbError("INTERNAL", "The regex worker stopped."));
    });
    this.#worker.on("error", (err) =>
      this.#fail(new CcbError("INTERNAL", `The regex worker failed: ${err.message}`, { cause: err })),
    );
    this.#worker.on("message", (msg: { id: number; matches: RawMatch[] }) => {
      const p = this.#pending;
      if (p && p.id === msg.id) {
        this.#pending = undefined;
        p.resolve(msg.matches);
      }
    });
    this.#worker.postMessage({ type: "init", ...spec });
  }

  /** Match a batch; at most `limit` matches. Rejects TIMEOUT past the deadline, ABORTED on the signal. */
  match(files: RegexFile[], limit: number, signal?: AbortSignal): Promise<RawMatch[]> {
    if (this.#failed) return Promise.reject(this.#failed);
    if (signal?.aborted) return Promise.reject(this.#abort());
    const id = this.#nextId++;
    const payload = files.map((f) => ({ rel: f.rel, buf: ownBuffer(f.buf) }));
    return new Promise<RawMatch[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#fail(
          new CcbError(
            "TIMEOUT",
            `The regular expression ran for more than ${this.#deadlineMs} ms on one batch of files and was stopped.`,
            {
              hint: "The pattern probably backtracks catastrophically (nested quantifiers such as (a+)+). Simplify it, search literally (regex: false), or install ripgrep, whose engine runs in linear time.",
            },
          ),
        );
      }, this.#deadlineMs);
      const onAbort = () => this.#fail(this.#abort());
      signal?.addEventListener("abort", onAbort, { once: true });
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      this.#pending = {
        id,
        resolve: (m) => {
          done();
          resolve(m);
        },
        reject: (e) => {
          done();
          reject(e);
        },
      };
      this.#worker.postMessage(
        { type: "match", id, limit, files: payload },
        payload.map((p) => p.buf),
      );
    });
  }

  /** Terminate the worker thread and wait until it has exited (idempotent). */
  close(): Promise<void> {
    this.#closing ??= this.#worker.terminate().then(() => this.#exited);
    return this.#closing;
  }

  #abort(): CcbError {
    return new CcbError("ABORTED", "The operation was cancelled.");
  }

  #fail(err: Error): void {
    this.#failed ??= err;
    const p = this.#pending;
    this.#pending = undefined;
    void this.close();
    p?.reject(this.#failed);
  }
}

/** An ArrayBuffer holding exactly the bytes of `b`, safe to transfer (never a shared pool slab). */
function ownBuffer(b: Buffer): ArrayBuffer {
  if (b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && b.buffer instanceof ArrayBuffer) return b.buffer;
  const copy = new ArrayBuffer(b.byteLength);
  new Uint8Array(copy).set(b);
  return copy;
}
