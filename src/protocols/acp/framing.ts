import type { AnyMessage, Stream } from "@agentclientprotocol/sdk/unstable";
// the same id scanner answers oversized frames of `ccb serve --stdio`
import { idFromPrefix, idFromSuffix } from "../../util/frame-id.ts";

/**
 * Newline-delimited JSON-RPC framing for `ccb acp` with a per-frame cap that never ends the
 * connection: a frame over the cap is skipped to its newline and answered with -32600 (with the
 * request id when it can be read from the frame's start or end), and the agent reads on. A
 * request object without `"jsonrpc": "2.0"` is answered with -32600 carrying its id. Everything
 * else goes to the SDK connection as is (it answers parse errors and batches itself).
 */
export const DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024;

const HEAD_BYTES = 64 * 1024;
const TAIL_BYTES = 1024;
const NEWLINE = 0x0a;
const EMPTY = new Uint8Array(0);

type Id = string | number | null;

function isId(v: unknown): v is string | number {
  return typeof v === "string" || (typeof v === "number" && Number.isFinite(v));
}

/** The top-level id of a JSON-RPC frame seen only by its first and last bytes, or null. */
export function sniffId(head: string, tail: string): Id {
  return idFromPrefix(head) ?? idFromSuffix(tail);
}

function mib(n: number): string {
  return n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : `${n} bytes`;
}

export function boundedNdJsonStream(
  output: WritableStream<Uint8Array>,
  input: ReadableStream<Uint8Array>,
  options: { maxFrameBytes?: number; onDrop?: (bytes: number, id: Id) => void } = {},
): Stream {
  const max = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  let writeChain: Promise<void> = Promise.resolve();
  const writeJson = (message: unknown): Promise<void> => {
    const bytes = encoder.encode(`${JSON.stringify(message)}\n`);
    const next = writeChain.then(async () => {
      const w = output.getWriter();
      try {
        await w.write(bytes);
      } finally {
        w.releaseLock();
      }
    });
    writeChain = next.catch(() => undefined);
    return next;
  };
  const reject = (id: Id, message: string, data?: unknown) =>
    writeJson({
      jsonrpc: "2.0",
      id,
      error: { code: -32600, message: `Invalid Request: ${message}`, ...(data !== undefined ? { data } : {}) },
    }).catch(() => undefined);

  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  const readable = new ReadableStream<AnyMessage>({
    async start(controller) {
      // the current line: kept parts while under the cap; head/tail only once it is over
      const parts: Uint8Array[] = [];
      let size = 0;
      let over = false;
      let head = EMPTY;
      let tail = EMPTY;

      const keepTail = (chunk: Uint8Array) => {
        if (chunk.byteLength >= TAIL_BYTES) tail = chunk.slice(chunk.byteLength - TAIL_BYTES);
        else {
          const t = new Uint8Array(Math.min(TAIL_BYTES, tail.byteLength + chunk.byteLength));
          const keep = t.byteLength - chunk.byteLength;
          t.set(tail.subarray(tail.byteLength - keep), 0);
          t.set(chunk, keep);
          tail = t;
        }
      };
      const add = (chunk: Uint8Array) => {
        if (chunk.byteLength === 0) return;
        size += chunk.byteLength;
        if (!over && size > max) {
          over = true;
          const all = concat(parts);
          head = all.slice(0, HEAD_BYTES);
          parts.length = 0;
          keepTail(all);
        }
        if (over) keepTail(chunk);
        else parts.push(chunk);
      };
      // synchronous for a normal line (no await per frame); a promise only when an error is written
      const finishLine = (): Promise<void> | undefined => {
        let pending: Promise<void> | undefined;
        if (over) {
          const id = sniffId(decoder.decode(head), decoder.decode(tail));
          options.onDrop?.(size, id);
          pending = reject(
            id,
            `the message is ${size} bytes, over the ${mib(max)} limit of ccb acp; send smaller prompts (attach files as resource links instead of embedding them)`,
            { maxMessageBytes: max, messageBytes: size },
          );
        } else if (size > 0) {
          pending = deliver(controller, decoder.decode(concat(parts)).trim());
        }
        parts.length = 0;
        size = 0;
        if (over) {
          over = false;
          head = EMPTY;
          tail = EMPTY;
        }
        return pending;
      };
      const deliver = (ctl: ReadableStreamDefaultController<AnyMessage>, line: string): Promise<void> | undefined => {
        if (!line) return undefined;
        let msg: unknown;
        try {
          msg = JSON.parse(line);
        } catch {
          return writeJson({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } }).catch(
            () => undefined,
          );
        }
        if (msg !== null && typeof msg === "object" && !Array.isArray(msg)) {
          const m = msg as Record<string, unknown>;
          if (m.jsonrpc !== "2.0" && "method" in m && isId(m.id)) {
            return reject(m.id, 'the "jsonrpc": "2.0" member is missing or wrong');
          }
        }
        ctl.enqueue(msg as AnyMessage);
        return undefined;
      };

      reader = input.getReader();
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          let start = 0;
          let nl = value.indexOf(NEWLINE, start);
          while (nl !== -1) {
            add(value.subarray(start, nl));
            const pending = finishLine();
            if (pending) await pending;
            start = nl + 1;
            nl = value.indexOf(NEWLINE, start);
          }
          // copy: the reader may reuse its buffer
          if (start < value.byteLength) add(value.slice(start));
        }
        await finishLine();
        controller.close();
      } catch (err) {
        controller.error(err);
      } finally {
        reader.releaseLock();
      }
    },
    cancel(reason) {
      return reader?.cancel(reason);
    },
  });
  const writable = new WritableStream<AnyMessage>({ write: (message) => writeJson(message) });
  return { readable, writable };
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
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
