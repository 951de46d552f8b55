import type { AnyMessage, Stream } from "@agentclientprotocol/sdk/unstable";
// the same id scanner answers oversized frames of `ccb serve --stdio`
import { idFromPrefix, idFromSuffix } from "../../util/frame-id.ts";
import { errorResponse, isJsonRpcId, JsonRpcCode, type JsonRpcId } from "../../util/jsonrpc.ts";
import { CappedLineSplitter } from "../../util/ndjson.ts";

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

type Id = JsonRpcId | null;

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
    writeJson(errorResponse(id, JsonRpcCode.InvalidRequest, `Invalid Request: ${message}`, data)).catch(
      () => undefined,
    );

  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  const readable = new ReadableStream<AnyMessage>({
    async start(controller) {
      // what a line's handling must write (an error reply) before the next chunk is read
      const pending: Promise<void>[] = [];
      const deliver = (line: string): void => {
        if (!line) return;
        let msg: unknown;
        try {
          msg = JSON.parse(line);
        } catch {
          pending.push(writeJson(errorResponse(null, JsonRpcCode.ParseError, "Parse error")).catch(() => undefined));
          return;
        }
        if (msg !== null && typeof msg === "object" && !Array.isArray(msg)) {
          const m = msg as Record<string, unknown>;
          if (m.jsonrpc !== "2.0" && "method" in m && isJsonRpcId(m.id)) {
            pending.push(reject(m.id, 'the "jsonrpc": "2.0" member is missing or wrong'));
            return;
          }
        }
        controller.enqueue(msg as AnyMessage);
      };
      const lines = new CappedLineSplitter(
        { maxBytes: max, headBytes: HEAD_BYTES, tailBytes: TAIL_BYTES },
        {
          line: (bytes) => deliver(decoder.decode(bytes).trim()),
          oversized: ({ bytes, head, tail }) => {
            const id = sniffId(decoder.decode(head), decoder.decode(tail));
            options.onDrop?.(bytes, id);
            pending.push(
              reject(
                id,
                `the message is ${bytes} bytes, over the ${mib(max)} limit of ccb acp; send smaller prompts (attach files as resource links instead of embedding them)`,
                { maxMessageBytes: max, messageBytes: bytes },
              ),
            );
          },
        },
      );
      const flush = async () => {
        while (pending.length > 0) await pending.shift();
      };

      reader = input.getReader();
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          lines.push(value);
          await flush();
        }
        lines.end();
        await flush();
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
