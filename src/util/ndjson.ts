/**
 * The one capped line splitter of ccb's newline-delimited JSON transports (`serve --stdio`, `acp`
 * and `link`'s agent side): bytes in, whole lines out. A line over the cap is never held whole: only its first
 * `headBytes` and last `tailBytes` are kept (where its JSON-RPC id can be read, see frame-id.ts),
 * and it is reported instead of delivered; the next line is read as usual.
 */
export interface CappedLineEvents {
  /** A complete line (without its newline) of at most `maxBytes`. Valid only during the call. */
  line(bytes: Uint8Array): void;
  /** The current line just went over the cap; `head` is its first bytes (more may follow). */
  overflow?(head: Uint8Array): void;
  /** An over-cap line ended: its size, first and last bytes. */
  oversized(line: { bytes: number; head: Uint8Array; tail: Uint8Array }): void;
}

export interface CappedLineOptions {
  maxBytes: number;
  headBytes: number;
  tailBytes: number;
}

const NEWLINE = 0x0a;
const EMPTY = new Uint8Array(0);

export class CappedLineSplitter {
  readonly #o: CappedLineOptions;
  readonly #on: CappedLineEvents;
  /** The current line's parts while under the cap. */
  #parts: Uint8Array[] = [];
  #size = 0;
  #over = false;
  #head = EMPTY;
  #tail = EMPTY;

  constructor(options: CappedLineOptions, events: CappedLineEvents) {
    this.#o = options;
    this.#on = events;
  }

  /** Feed bytes; complete lines are reported before this returns. */
  push(chunk: Uint8Array): void {
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
      this.#add(chunk.subarray(start, nl));
      this.#finish();
      start = nl + 1;
    }
    // kept across calls: copied, since a stream may reuse its buffer
    if (start < chunk.byteLength) this.#add(chunk.slice(start));
  }

  /** The input ended: a last line without a newline is reported too. */
  end(): void {
    if (this.#size > 0 || this.#over) this.#finish();
  }

  #add(bytes: Uint8Array): void {
    if (bytes.byteLength === 0) return;
    this.#size += bytes.byteLength;
    if (!this.#over && this.#size > this.#o.maxBytes) {
      this.#over = true;
      const all = concat([...this.#parts, bytes]);
      this.#parts = [];
      this.#head = all.slice(0, this.#o.headBytes);
      this.#tail = EMPTY;
      this.#keepTail(all);
      this.#on.overflow?.(this.#head);
      return;
    }
    if (this.#over) this.#keepTail(bytes);
    else this.#parts.push(bytes);
  }

  #finish(): void {
    if (this.#over) {
      const line = { bytes: this.#size, head: this.#head, tail: this.#tail };
      this.#over = false;
      this.#head = EMPTY;
      this.#tail = EMPTY;
      this.#size = 0;
      this.#on.oversized(line);
      return;
    }
    const parts = this.#parts;
    this.#parts = [];
    this.#size = 0;
    this.#on.line(parts.length === 0 ? EMPTY : concat(parts));
  }

  #keepTail(more: Uint8Array): void {
    const n = this.#o.tailBytes;
    if (more.byteLength >= n) {
      this.#tail = more.slice(more.byteLength - n);
      return;
    }
    const keep = Math.min(this.#tail.byteLength, n - more.byteLength);
    const t = new Uint8Array(keep + more.byteLength);
    t.set(this.#tail.subarray(this.#tail.byteLength - keep), 0);
    t.set(more, keep);
    this.#tail = t;
  }
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0] as Uint8Array;
  let n = 0;
  for (const p of parts) n += p.byteLength;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.byteLength;
  }
  return out;
}
