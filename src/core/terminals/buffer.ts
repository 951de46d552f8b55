/**
 * A bounded buffer of terminal output with absolute offsets.
 *
 * Offsets count UTF-16 code units of the decoded output since the terminal started, so a caller
 * can read incrementally (`offset` -> `nextOffset`) and learn when output it never saw has already
 * been dropped to keep memory bounded.
 */
export interface RingRead {
  /** Output from max(offset, start) up to `nextOffset`. */
  data: string;
  /** Where `data` begins (greater than the requested offset when output was dropped). */
  from: number;
  /** Offset to pass next time. */
  nextOffset: number;
  /** True when some output between the requested offset and `from` was dropped. */
  dropped: boolean;
}

export class OutputRing {
  private chunks: string[] = [];
  private retained = 0;
  private written = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity <= 0) throw new RangeError("capacity must be a positive integer");
  }

  /** Total output ever appended (the offset of the next character). */
  get end(): number {
    return this.written;
  }

  /** Offset of the oldest character still held. */
  get start(): number {
    return this.written - this.retained;
  }

  append(data: string): void {
    if (data.length === 0) return;
    this.written += data.length;
    if (data.length >= this.capacity) {
      this.chunks = [data.slice(data.length - this.capacity)];
      this.retained = this.capacity;
      return;
    }
    this.chunks.push(data);
    this.retained += data.length;
    while (this.retained > this.capacity) {
      const head = this.chunks[0] as string;
      const excess = this.retained - this.capacity;
      if (head.length <= excess) {
        this.chunks.shift();
        this.retained -= head.length;
      } else {
        this.chunks[0] = head.slice(excess);
        this.retained -= excess;
      }
    }
  }

  /** Read from `offset` (default: the oldest retained output), at most `max` characters. */
  read(offset: number = this.start, max: number = Number.POSITIVE_INFINITY): RingRead {
    const requested = Math.max(0, Math.min(Math.floor(offset), this.written));
    const from = Math.max(requested, this.start);
    const dropped = from > requested;
    const want = Math.max(0, Math.min(this.written - from, max));
    if (want === 0) return { data: "", from, nextOffset: from, dropped };
    let skip = from - this.start;
    const parts: string[] = [];
    let got = 0;
    for (const chunk of this.chunks) {
      if (skip >= chunk.length) {
        skip -= chunk.length;
        continue;
      }
      const piece = chunk.slice(skip, skip + (want - got));
      skip = 0;
      parts.push(piece);
      got += piece.length;
      if (got >= want) break;
    }
    return { data: parts.join(""), from, nextOffset: from + got, dropped };
  }
}
