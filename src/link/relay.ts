import type { Logger } from "../core/log.ts";
import { errorResponse, idMember, isJsonRpcId, JsonRpcCode, type JsonRpcId } from "../util/jsonrpc.ts";
import { CappedLineSplitter } from "../util/ndjson.ts";
import type { AgentProcess } from "./agent-process.ts";
import type { FrameLog } from "./frame-log.ts";
import { effectivePermissionMode, type PermissionMode } from "./permission.ts";

/** The client side of a relay: a WebSocket (server-accepted or RCS), seen only through this. */
export interface FrameSink {
  send(text: string, done: (err?: Error) => void): void;
  readonly bufferedAmount: number;
  /** Stop / restart reading frames from the client (backpressure towards the client). */
  pause(): void;
  resume(): void;
}

export interface RelayOptions {
  agent: AgentProcess;
  log: Logger;
  localMode: PermissionMode;
  maxMessageBytes: number;
  frameLog?: FrameLog | undefined;
  connectionId: string;
  /** Bytes queued towards the client before the agent's stdout is paused. */
  highWaterMark?: number;
}

/**
 * Transparent JSON-RPC relay between one client and one stdio agent: one text frame is one
 * JSON-RPC message in both directions (the ACP WebSocket transport draft). Messages are checked
 * to be JSON-RPC objects; `session/new` gets the effective permission mode in `_meta`.
 * Backpressure holds in both directions: nothing is buffered without bound.
 */
export class Relay {
  readonly #o: RelayOptions;
  #sink: FrameSink | undefined;
  readonly #lines: CappedLineSplitter;
  #stdoutPaused = false;
  readonly #queued: string[] = [];

  constructor(options: RelayOptions, sink?: FrameSink) {
    this.#o = options;
    this.#sink = sink;
    const decoder = new TextDecoder();
    // The agent's stdout: NDJSON. A line over the cap is dropped whole (never held, never read on).
    this.#lines = new CappedLineSplitter(
      { maxBytes: options.maxMessageBytes, headBytes: 0, tailBytes: 0 },
      {
        line: (bytes) => {
          const line = decoder.decode(bytes).trim();
          if (line.length > 0) this.#fromAgent(line);
        },
        oversized: ({ bytes }) =>
          options.log.warn(
            `connection ${options.connectionId}: agent message of ${bytes} bytes, over ${options.maxMessageBytes} bytes; dropped`,
          ),
      },
    );
    const { stdout, stdin } = options.agent.child;
    stdout.on("data", (chunk: Buffer) => this.#lines.push(chunk));
    stdin.on("drain", () => this.#sink?.resume());
  }

  /** Attach or detach the client (RCS reconnects); frames from the agent queue while detached. */
  setSink(sink: FrameSink | undefined): void {
    this.#sink = sink;
    if (sink) {
      while (this.#queued.length > 0) this.#sendToClient(this.#queued.shift() as string);
    }
  }

  /** A text frame from the client: checked, then written to the agent (refused frames get a JSON-RPC error back). */
  fromClient(text: string): void {
    this.#o.frameLog?.frame(this.#o.connectionId, "client->agent", text);
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      this.#o.log.warn(`connection ${this.#o.connectionId}: invalid JSON from the client, not forwarded`);
      this.#replyError(
        null,
        JsonRpcCode.ParseError,
        "Parse error: the frame is not valid JSON (one JSON-RPC message per text frame).",
      );
      return;
    }
    if (!isJsonRpcObject(msg)) {
      const id = idMember(msg);
      this.#replyError(
        isJsonRpcId(id) ? id : null,
        JsonRpcCode.InvalidRequest,
        Array.isArray(msg) ? "Batches are not supported by ACP." : "Invalid Request: expected a JSON-RPC 2.0 object.",
      );
      return;
    }
    // NDJSON towards the agent: re-serialise frames that carry newlines (pretty-printed JSON).
    const line =
      msg.method === "session/new"
        ? JSON.stringify(this.#withPermissionMode(msg))
        : text.includes("\n")
          ? JSON.stringify(msg)
          : text;
    const ok = this.#o.agent.child.stdin.write(`${line}\n`);
    if (!ok) this.#sink?.pause();
  }

  #withPermissionMode(msg: Record<string, unknown>): Record<string, unknown> {
    const params = (typeof msg.params === "object" && msg.params !== null ? msg.params : {}) as Record<string, unknown>;
    const meta = (typeof params._meta === "object" && params._meta !== null ? params._meta : {}) as Record<
      string,
      unknown
    >;
    const { mode, note } = effectivePermissionMode(meta.permissionMode, this.#o.localMode);
    if (note) this.#o.log.info(`connection ${this.#o.connectionId}: ${note}; using ${mode}`);
    return { ...msg, params: { ...params, _meta: { ...meta, permissionMode: mode } } };
  }

  #fromAgent(line: string): void {
    this.#o.frameLog?.frame(this.#o.connectionId, "agent->client", line);
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      this.#o.log.warn(
        `connection ${this.#o.connectionId}: the agent wrote a non-JSON line to stdout (not forwarded): ${line.slice(0, 200)}`,
      );
      return;
    }
    if (!isJsonRpcObject(msg)) {
      this.#o.log.warn(`connection ${this.#o.connectionId}: the agent wrote a non-JSON-RPC message (not forwarded)`);
      return;
    }
    if (!this.#sink) {
      this.#queued.push(line);
      if (this.#queued.length > 1000) this.#pauseAgent();
      return;
    }
    this.#sendToClient(line);
  }

  #sendToClient(text: string): void {
    const sink = this.#sink;
    if (!sink) {
      this.#queued.push(text);
      return;
    }
    const hwm = this.#o.highWaterMark ?? 1 << 20;
    if (sink.bufferedAmount <= hwm) {
      sink.send(text, noop);
      return;
    }
    // Over the high-water mark: stop reading the agent until this frame has been flushed.
    this.#pauseAgent();
    sink.send(text, () => {
      if (this.#stdoutPaused && sink.bufferedAmount < hwm / 2) this.#resumeAgent();
    });
  }

  #pauseAgent(): void {
    if (!this.#stdoutPaused) {
      this.#stdoutPaused = true;
      this.#o.agent.child.stdout.pause();
    }
  }

  #resumeAgent(): void {
    this.#stdoutPaused = false;
    this.#o.agent.child.stdout.resume();
  }

  #replyError(id: JsonRpcId | null, code: number, message: string): void {
    this.#sendToClient(JSON.stringify(errorResponse(id, code, message)));
  }
}

function noop(): void {}

function isJsonRpcObject(v: unknown): v is Record<string, unknown> & { method?: string } {
  return typeof v === "object" && v !== null && !Array.isArray(v) && (v as { jsonrpc?: unknown }).jsonrpc === "2.0";
}
