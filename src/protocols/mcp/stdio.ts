import type { Readable, Writable } from "node:stream";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";
import { idFromPrefix, idFromSuffix } from "../../util/frame-id.ts";
import { errorResponse } from "../../util/jsonrpc.ts";
import { CappedLineSplitter } from "../../util/ndjson.ts";
import { admitMessage, RpcCode } from "./edge.ts";

export interface StdioTransportOptions {
  /** Longest accepted frame (one line) in bytes; longer lines are dropped with a JSON-RPC error. */
  maxFrameBytes?: number;
}

/** The same cap as an HTTP request body (--max-body-bytes, default 4 MiB). */
export const DEFAULT_MAX_FRAME_BYTES = 4 * 1024 * 1024;
/** How much of an oversized frame's start and end is kept to read its id from. */
const ID_BYTES = 4096;

/**
 * MCP over newline-delimited JSON on a pair of streams (stdin/stdout by default, injectable).
 *
 * Unlike the SDK's StdioServerTransport, a bad frame never ends the connection: malformed JSON is
 * answered with a JSON-RPC Parse error (-32700), a well-formed value that is not a JSON-RPC message
 * with Invalid Request (-32600, echoing its id when it has a usable one), and an oversized line is
 * dropped up to its newline and answered with Invalid Request naming the limit and carrying the
 * request's id, so the client can match the error to its request: at once when the id can be read
 * from the frame's first 4 KiB, else at the frame's end with the id read from its last 4 KiB (the
 * SDK writes `id` after `params`), else with id null.
 *
 * Each frame is framed and checked once, here (`admitMessage`): the JSON-RPC envelope and, for a
 * request, the edge check of its version and params (-32022, -32602 saying which field), answered
 * here; whatever serves the connection (the SDK's `serveStdio`) only sees messages that passed.
 */
export class LineStdioTransport implements Transport {
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  readonly #in: Readable;
  readonly #out: Writable;
  readonly #max: number;
  readonly #lines: CappedLineSplitter;
  readonly #decoder = new TextDecoder();
  /** An oversized frame already answered (its id read from its start). */
  #answered = false;
  #closed = false;
  #onClosed!: () => void;
  /** Settles when the transport has closed (whoever serves the connection is told first). */
  readonly closed = new Promise<void>((resolve) => {
    this.#onClosed = resolve;
  });

  constructor(input: Readable = process.stdin, output: Writable = process.stdout, options: StdioTransportOptions = {}) {
    this.#in = input;
    this.#out = output;
    this.#max = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    this.#lines = new CappedLineSplitter(
      { maxBytes: this.#max, headBytes: ID_BYTES, tailBytes: ID_BYTES },
      {
        line: (bytes) => this.#frame(this.#decoder.decode(bytes)),
        overflow: (head) => {
          const id = idFromPrefix(this.#decoder.decode(head));
          this.#answered = id !== null;
          if (id !== null) this.#tooLarge(id);
        },
        oversized: ({ tail }) => {
          if (!this.#answered) this.#tooLarge(idFromSuffix(this.#decoder.decode(tail)));
          this.#answered = false;
        },
      },
    );
  }

  async start(): Promise<void> {
    this.#in.on("data", this.#onData);
    this.#in.on("end", this.#onEnd);
    this.#in.on("error", this.#onStreamError);
    this.#out.on("error", this.#onStreamError);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return;
    const line = `${JSON.stringify(message)}\n`;
    if (this.#out.write(line)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.#out.off("drain", done);
        this.#out.off("close", done);
        resolve();
      };
      this.#out.once("drain", done);
      this.#out.once("close", done);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#in.off("data", this.#onData);
    this.#in.off("end", this.#onEnd);
    this.#in.off("error", this.#onStreamError);
    this.#out.off("error", this.#onStreamError);
    this.#in.pause();
    try {
      this.onclose?.();
    } finally {
      this.#onClosed();
    }
  }

  readonly #onEnd = (): void => {
    void this.close();
  };

  /** EPIPE/ECONNRESET: the peer left. That ends this connection, not the process. */
  readonly #onStreamError = (err: Error): void => {
    this.onerror?.(err);
    void this.close();
  };

  readonly #onData = (chunk: Buffer | string): void => {
    if (!this.#closed) this.#lines.push(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk);
  };

  #tooLarge(id: string | number | null): void {
    this.#reply(
      id,
      RpcCode.InvalidRequest,
      `Request too large: a frame may be at most ${this.#max} bytes (--max-body-bytes). Send smaller requests.`,
    );
  }

  #frame(raw: string): void {
    const text = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    // A blank line is skipped; a frame starts with "{" (the common case skips the trim).
    if (text.charCodeAt(0) !== 0x7b && text.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.#reply(null, RpcCode.ParseError, "Parse error: the frame is not valid JSON.");
      return;
    }
    const admitted = admitMessage(value);
    if (admitted.refusal === undefined) {
      this.onmessage?.(admitted.message);
      return;
    }
    const { code, message, data } = admitted.refusal;
    // A frame that is no JSON-RPC message is this transport's error; a refused request is the client's, answered only.
    if (admitted.frame) this.#reply(admitted.id, code, message);
    else void this.send(errorResponse(admitted.id, code, message, data) as JSONRPCMessage);
  }

  #reply(id: string | number | null, code: number, message: string): void {
    this.onerror?.(new Error(message));
    // The SDK's message type has no room for `id: null`, which JSON-RPC prescribes for errors about unreadable requests.
    void this.send(errorResponse(id, code, message) as unknown as JSONRPCMessage);
  }
}
