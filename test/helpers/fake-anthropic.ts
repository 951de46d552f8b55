import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * A scripted fake of the Anthropic Messages API: a real HTTP server on 127.0.0.1:0 speaking the real
 * wire format (SSE streaming or JSON), so the real `@anthropic-ai/sdk` client (ours, or the `claude`
 * CLI's) is exercised end to end. Only the model's choices are scripted.
 *
 *   const api = await startFakeAnthropic({ script: ({ body, index }) => ({ text: "hi" }) });
 *   env.ANTHROPIC_BASE_URL = api.url;  ...;  await api.close();
 *
 * - `POST /v1/messages` (also `?beta=true`): SSE when `stream: true`, else one JSON message.
 * - `POST /v1/messages/count_tokens`: `{ input_tokens }` estimated from the body size.
 * - `GET /v1/models` (`?limit=`): one fake model page (the cheap request that checks a key).
 * - `keys: [...]`: only these API keys (x-api-key or Bearer) are accepted; any other gets the real
 *   API's 401 `authentication_error` on every endpoint. Without `keys`, any key is accepted.
 * - `HEAD /` -> 200; any other path -> 404 JSON error (so clients never hang).
 * Requests without `tools` are "side requests" (titles, summaries): the script sees them too;
 * `sequence(...)` answers them with plain text.
 */

export interface ToolUseReply {
  id?: string;
  name: string;
  input: unknown;
}

export interface Reply {
  text?: string;
  thinking?: string;
  toolUses?: ToolUseReply[];
  /** Default: "tool_use" when toolUses is non-empty, else "end_turn". */
  stopReason?: "end_turn" | "tool_use" | "max_tokens" | "refusal";
  /** A non-2xx status answers with an error body instead of a message. */
  status?: number;
  error?: { type: string; message: string };
  /** Delay between SSE events (default 0). */
  chunkDelayMs?: number;
  /** Send message_start and the first content delta, then keep the stream open until the client leaves. */
  hangAfterFirstChunk?: boolean;
  /** Usage reported (defaults: input from the body size, output from the text size). */
  usage?: { input_tokens?: number; output_tokens?: number };
}

export interface ScriptRequest {
  body: any;
  /** 0-based index over all `POST /v1/messages` requests (side requests included). */
  index: number;
  headers: IncomingHttpHeaders;
}

export type Script = (req: ScriptRequest) => Reply | Promise<Reply>;

export interface RecordedRequest {
  body: any;
  headers: IncomingHttpHeaders;
  path: string;
}

export interface FakeAnthropic {
  /** Base URL for ANTHROPIC_BASE_URL, e.g. http://127.0.0.1:40123 */
  url: string;
  /** Every `POST /v1/messages` request, in arrival order. */
  requests: RecordedRequest[];
  /** Every `GET /v1/models` request (accepted or refused), in arrival order. */
  modelListRequests: RecordedRequest[];
  /** Resolves once `n` message requests have arrived (count, 1-based), with the n-th one. */
  waitForRequest(n: number): Promise<RecordedRequest>;
  /** Resolves when the first SSE byte of the n-th (1-based) streamed response has been written; value = performance.now() then. */
  waitForFirstByte(n: number): Promise<number>;
  close(): Promise<void>;
}

/** True for requests that offer no tools (titles, summaries, etc.). */
export function isSideRequest(body: any): boolean {
  return !Array.isArray(body?.tools) || body.tools.length === 0;
}

/** A script: side requests get `side` text; main requests get `replies` in order (the last one repeats). */
export function sequence(replies: Reply[], side: string = "Fake title"): Script {
  let main = 0;
  return ({ body }) => {
    if (isSideRequest(body)) return { text: side };
    const r = replies[Math.min(main, replies.length - 1)] ?? { text: "" };
    main++;
    return r;
  };
}

function estimateTokens(s: string): number {
  return Math.max(1, Math.ceil(s.length / 4));
}

function chunks(s: string, size = 24): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface Built {
  message: any;
  events: { event: string; data: any }[];
  firstContentEvent: number;
}

function build(reply: Reply, model: string, inputTokens: number): Built {
  const id = `msg_${randomBytes(12).toString("hex")}`;
  const content: any[] = [];
  const events: { event: string; data: any }[] = [];
  const toolUses = reply.toolUses ?? [];
  const stopReason = reply.stopReason ?? (toolUses.length > 0 ? "tool_use" : "end_turn");
  const outputTokens =
    reply.usage?.output_tokens ??
    estimateTokens((reply.text ?? "") + (reply.thinking ?? "") + JSON.stringify(toolUses));
  const input = reply.usage?.input_tokens ?? inputTokens;
  const usageStart = {
    input_tokens: input,
    output_tokens: 1,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
  events.push({
    event: "message_start",
    data: {
      type: "message_start",
      message: {
        id,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: usageStart,
      },
    },
  });
  let index = 0;
  if (reply.thinking !== undefined) {
    const signature = randomBytes(16).toString("base64");
    content.push({ type: "thinking", thinking: reply.thinking, signature });
    events.push({
      event: "content_block_start",
      data: { type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } },
    });
    for (const c of chunks(reply.thinking))
      events.push({
        event: "content_block_delta",
        data: { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: c } },
      });
    events.push({
      event: "content_block_delta",
      data: { type: "content_block_delta", index, delta: { type: "signature_delta", signature } },
    });
    events.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
    index++;
  }
  if (reply.text !== undefined && reply.text !== "") {
    content.push({ type: "text", text: reply.text });
    events.push({
      event: "content_block_start",
      data: { type: "content_block_start", index, content_block: { type: "text", text: "" } },
    });
    for (const c of chunks(reply.text))
      events.push({
        event: "content_block_delta",
        data: { type: "content_block_delta", index, delta: { type: "text_delta", text: c } },
      });
    events.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
    index++;
  }
  for (const t of toolUses) {
    const toolId = t.id ?? `toolu_${randomBytes(12).toString("hex")}`;
    content.push({ type: "tool_use", id: toolId, name: t.name, input: t.input });
    events.push({
      event: "content_block_start",
      data: {
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: toolId, name: t.name, input: {} },
      },
    });
    for (const c of chunks(JSON.stringify(t.input ?? {}), 40)) {
      events.push({
        event: "content_block_delta",
        data: { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: c } },
      });
    }
    events.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
    index++;
  }
  events.push({
    event: "message_delta",
    data: {
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: outputTokens },
    },
  });
  events.push({ event: "message_stop", data: { type: "message_stop" } });
  const message = {
    id,
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { ...usageStart, output_tokens: outputTokens },
  };
  const firstContentEvent = events.findIndex((e) => e.event === "content_block_delta");
  return { message, events, firstContentEvent: firstContentEvent === -1 ? 1 : firstContentEvent };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const data = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(data),
    "request-id": `req_${randomBytes(8).toString("hex")}`,
  });
  res.end(data);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (d: Buffer) => parts.push(d));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

export async function startFakeAnthropic(options: { script?: Script; keys?: string[] } = {}): Promise<FakeAnthropic> {
  const script: Script = options.script ?? (() => ({ text: "Hello from the fake model." }));
  const requests: RecordedRequest[] = [];
  const modelListRequests: RecordedRequest[] = [];
  const keyAccepted = (headers: IncomingHttpHeaders): boolean => {
    if (!options.keys) return true;
    const bearer = /^Bearer (.+)$/.exec(String(headers.authorization ?? ""))?.[1];
    const given = typeof headers["x-api-key"] === "string" ? headers["x-api-key"] : bearer;
    return given !== undefined && options.keys.includes(given);
  };
  const requestWaiters: { n: number; resolve: (r: RecordedRequest) => void }[] = [];
  const firstBytes: number[] = [];
  const byteWaiters: { n: number; resolve: (t: number) => void }[] = [];
  const sockets = new Set<Socket>();
  let streamCount = 0;
  let messageCount = 0;

  const notifyRequests = () => {
    for (const w of [...requestWaiters]) {
      const r = requests[w.n - 1];
      if (r) {
        requestWaiters.splice(requestWaiters.indexOf(w), 1);
        w.resolve(r);
      }
    }
  };
  const notifyBytes = () => {
    for (const w of [...byteWaiters]) {
      const t = firstBytes[w.n - 1];
      if (t !== undefined) {
        byteWaiters.splice(byteWaiters.indexOf(w), 1);
        w.resolve(t);
      }
    }
  };

  async function handleMessages(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const raw = await readBody(req);
    let body: any;
    try {
      body = JSON.parse(raw);
    } catch {
      sendJson(res, 400, { type: "error", error: { type: "invalid_request_error", message: "Body is not JSON." } });
      return;
    }
    const index = messageCount++;
    const recorded = { body, headers: req.headers, path };
    requests.push(recorded);
    notifyRequests();
    const reply = await script({ body, index, headers: req.headers });
    if (reply.status !== undefined && (reply.status < 200 || reply.status >= 300)) {
      const error = reply.error ?? {
        type: reply.status === 529 ? "overloaded_error" : "api_error",
        message: `Fake error ${reply.status}`,
      };
      sendJson(res, reply.status, { type: "error", error });
      return;
    }
    const model = typeof body.model === "string" ? body.model : "claude-fake";
    const built = build(reply, model, estimateTokens(raw));
    if (!body.stream) {
      sendJson(res, 200, built.message);
      return;
    }
    const streamNo = ++streamCount;
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "request-id": `req_${randomBytes(8).toString("hex")}`,
    });
    res.flushHeaders();
    let closed = false;
    res.on("close", () => (closed = true));
    const delay = reply.chunkDelayMs ?? 0;
    for (let i = 0; i < built.events.length; i++) {
      if (closed) return;
      const e = built.events[i]!;
      res.write(`event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`);
      if (i === built.firstContentEvent) {
        firstBytes[streamNo - 1] = performance.now();
        notifyBytes();
        if (reply.hangAfterFirstChunk) return; // left open; closed by the client or close()
      }
      if (delay > 0 && i < built.events.length - 1) await sleep(delay);
    }
    res.end();
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const path = url.pathname;
    if (req.method === "HEAD") {
      res.writeHead(path === "/" ? 200 : 404);
      res.end();
      return;
    }
    if (req.method === "GET" && path === "/v1/models") {
      req.resume();
      modelListRequests.push({ body: undefined, headers: req.headers, path: req.url ?? path });
      if (!keyAccepted(req.headers))
        return sendJson(res, 401, {
          type: "error",
          error: { type: "authentication_error", message: "invalid x-api-key" },
        });
      sendJson(res, 200, {
        data: [{ type: "model", id: "claude-fake", display_name: "Claude Fake", created_at: "2026-01-01T00:00:00Z" }],
        has_more: false,
        first_id: "claude-fake",
        last_id: "claude-fake",
      });
      return;
    }
    if (req.method === "POST" && path.startsWith("/v1/") && !keyAccepted(req.headers)) {
      req.resume();
      sendJson(res, 401, { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } });
      return;
    }
    if (req.method === "POST" && path === "/v1/messages") {
      handleMessages(req, res, req.url ?? path).catch((err: Error) => {
        if (!res.headersSent)
          sendJson(res, 500, {
            type: "error",
            error: { type: "api_error", message: `fake script failed: ${err.message}` },
          });
        else res.destroy();
      });
      return;
    }
    if (req.method === "POST" && path === "/v1/messages/count_tokens") {
      readBody(req).then(
        (raw) => sendJson(res, 200, { input_tokens: estimateTokens(raw) }),
        () => res.destroy(),
      );
      return;
    }
    req.resume();
    sendJson(res, 404, {
      type: "error",
      error: { type: "not_found_error", message: `Not found: ${req.method} ${path}` },
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    modelListRequests,
    waitForRequest(n: number) {
      const r = requests[n - 1];
      if (r) return Promise.resolve(r);
      return new Promise((resolve) => requestWaiters.push({ n, resolve }));
    },
    waitForFirstByte(n: number) {
      const t = firstBytes[n - 1];
      if (t !== undefined) return Promise.resolve(t);
      return new Promise((resolve) => byteWaiters.push({ n, resolve }));
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
