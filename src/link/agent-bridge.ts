import { randomBytes } from "node:crypto";
import type { Logger } from "../core/log.ts";
import { CappedLineSplitter } from "../util/ndjson.ts";
import { type AgentCommand, AgentProcess } from "./agent-process.ts";
import type { FrameLog } from "./frame-log.ts";
import { effectivePermissionMode, type PermissionMode } from "./permission.ts";

type Message = Record<string, unknown>;

/** The message stream the SDK's `AcpServer` hands an agent connector (its `Stream`, not exported there). */
export interface MessageStream {
  readable: ReadableStream<Message>;
  writable: WritableStream<Message>;
}

export interface AgentBridgeOptions {
  agent: AgentCommand;
  log: Logger;
  localMode: PermissionMode;
  maxMessageBytes: number;
  frameLog?: FrameLog | undefined;
  /** Told when the agent process starts and when it is gone (the server's live count). */
  onStart?: (bridge: AgentBridge) => void;
  onStop?: (bridge: AgentBridge) => void;
}

/** How an agent ended, for the client (a WebSocket close reason) and the log. */
export interface AgentExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  reason: string;
}

/**
 * The agent of one remote ACP connection (a WebSocket, or a Streamable HTTP `Acp-Connection-Id`),
 * as the SDK's `AcpServer` asks for it: `connect(stream)` per connection. The stdio agent process
 * starts with the connection's first message (`initialize`), so a connection that never sends one
 * starts nothing; messages go to its stdin as NDJSON and its stdout lines come back as messages
 * (a line that is not a JSON-RPC object, or is over the cap, is dropped with a warning);
 * `session/new` gets the effective permission mode in `_meta`. The agent exiting ends this
 * connection (never the link); the connection ending stops the agent and everything it started.
 */
export class AgentBridge {
  readonly id = randomBytes(4).toString("hex");
  readonly #o: AgentBridgeOptions;
  #agent: AgentProcess | undefined;
  #exit: AgentExit | undefined;
  #connected = false;
  #done: () => void = () => {};
  /** Resolves when the connection has ended and its agent (if one started) is gone. */
  readonly done = new Promise<void>((resolve) => {
    this.#done = resolve;
  });

  constructor(options: AgentBridgeOptions) {
    this.#o = options;
  }

  get pid(): number | undefined {
    return this.#agent?.pid;
  }

  /** Set once the agent has exited (the WebSocket closes with it as its reason). */
  get exit(): AgentExit | undefined {
    return this.#exit;
  }

  connect(stream: MessageStream): { closed: Promise<void> } {
    if (this.#connected) throw new Error("an AgentBridge serves one connection");
    this.#connected = true;
    const writer = stream.writable.getWriter();
    const reader = stream.readable.getReader();
    const resolveClosed = this.#done;
    const closed = this.done;

    const start = (): AgentProcess => {
      const agent = new AgentProcess(this.#o.agent, this.#o.log);
      this.#agent = agent;
      this.#o.log.info(`connection ${this.id}: agent started (pid ${agent.pid ?? "?"})`);
      this.#o.frameLog?.event(this.id, `connected; agent pid ${agent.pid ?? "?"}`);
      this.#o.onStart?.(this);
      this.#pipeFromAgent(agent, writer).then(resolveClosed, resolveClosed);
      return agent;
    };

    // Client -> agent, until the connection ends (client gone, DELETE, limits, link closing).
    void (async () => {
      try {
        for (;;) {
          const r = await reader.read();
          if (r.done) break;
          const agent = this.#agent ?? start();
          if (this.#exit) break;
          const line = JSON.stringify(r.value.method === "session/new" ? this.#withPermissionMode(r.value) : r.value);
          this.#o.frameLog?.frame(this.id, "client->agent", line);
          if (!agent.child.stdin.write(`${line}\n`)) await drainOrExit(agent);
        }
      } catch {
        // the connection was shut down with an error: same as its end
      }
      if (this.#agent) {
        if (!this.#exit) this.#o.log.info(`connection ${this.id}: closed; stopping its agent`);
        this.#agent.kill();
      } else {
        resolveClosed();
      }
    })();
    return { closed };
  }

  /** Agent -> client: NDJSON lines as messages, with backpressure; resolves once the agent is gone. */
  async #pipeFromAgent(agent: AgentProcess, writer: WritableStreamDefaultWriter<Message>): Promise<void> {
    const { stdout } = agent.child;
    const decoder = new TextDecoder();
    const lines = new CappedLineSplitter(
      { maxBytes: this.#o.maxMessageBytes, headBytes: 0, tailBytes: 0 },
      {
        line: (bytes) => {
          const line = decoder.decode(bytes).trim();
          if (line.length > 0) this.#fromAgent(line, writer, stdout);
        },
        oversized: ({ bytes }) =>
          this.#o.log.warn(
            `connection ${this.id}: agent message of ${bytes} bytes, over ${this.#o.maxMessageBytes} bytes; dropped`,
          ),
      },
    );
    stdout.on("data", (chunk: Buffer) => lines.push(chunk));
    const ended = new Promise<void>((resolve) => {
      stdout.once("close", resolve);
      stdout.once("end", resolve);
    });
    const { code, signal } = await agent.exited;
    await ended;
    lines.end();
    this.#exit = { code, signal, reason: `agent exited (${signal ?? `code ${code}`})` };
    this.#o.log.info(`connection ${this.id}: ${this.#exit.reason}`);
    this.#o.frameLog?.event(this.id, this.#exit.reason);
    this.#o.onStop?.(this);
    // The last messages are handed on before the connection learns that the agent has gone.
    await writer.close().catch(() => {});
  }

  #fromAgent(line: string, writer: WritableStreamDefaultWriter<Message>, stdout: NodeJS.ReadableStream): void {
    this.#o.frameLog?.frame(this.id, "agent->client", line);
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      this.#o.log.warn(
        `connection ${this.id}: the agent wrote a non-JSON line to stdout (not forwarded): ${line.slice(0, 200)}`,
      );
      return;
    }
    if (typeof msg !== "object" || msg === null || Array.isArray(msg) || (msg as Message).jsonrpc !== "2.0") {
      this.#o.log.warn(`connection ${this.id}: the agent wrote a non-JSON-RPC message (not forwarded)`);
      return;
    }
    writer.write(msg as Message).catch(() => {});
    // The SDK takes output only as fast as the client reads it: stop reading the agent meanwhile.
    if ((writer.desiredSize ?? 1) <= 0 && !stdout.isPaused()) {
      stdout.pause();
      writer.ready.then(
        () => stdout.resume(),
        () => stdout.resume(),
      );
    }
  }

  #withPermissionMode(msg: Message): Message {
    const params = (typeof msg.params === "object" && msg.params !== null ? msg.params : {}) as Message;
    const meta = (typeof params._meta === "object" && params._meta !== null ? params._meta : {}) as Message;
    const { mode, note } = effectivePermissionMode(meta.permissionMode, this.#o.localMode);
    if (note) this.#o.log.info(`connection ${this.id}: ${note}; using ${mode}`);
    return { ...msg, params: { ...params, _meta: { ...meta, permissionMode: mode } } };
  }
}

function drainOrExit(agent: AgentProcess): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      agent.child.stdin.off("drain", done);
      resolve();
    };
    agent.child.stdin.once("drain", done);
    void agent.exited.then(done);
  });
}
