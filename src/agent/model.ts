import Anthropic, { APIConnectionError, APIError, APIUserAbortError } from "@anthropic-ai/sdk";
import type {
  ContentBlock as ApiBlock,
  Message,
  MessageCreateParamsNonStreaming,
  RawMessageStreamEvent,
} from "@anthropic-ai/sdk/resources/messages";
import { CcbError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import { ModelError, missingCredentials } from "./model-error.ts";
import type { ModelSettings } from "./settings.ts";

/** A content block while its deltas arrive: the fields the stream appends to. */
interface MutableBlock {
  text?: string;
  thinking?: string;
  signature?: string;
  input?: unknown;
}

export type ModelRequest = Omit<MessageCreateParamsNonStreaming, "stream">;

export { ModelError };

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(new CcbError("ABORTED", "The operation was cancelled."));
    const t = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new CcbError("ABORTED", "The operation was cancelled."));
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });

/** The Anthropic Messages API, streamed, with our own retries (429, 5xx, overloaded, connection errors) before any content arrives. */
export class ModelClient {
  private readonly client: Anthropic;

  constructor(
    readonly settings: ModelSettings,
    private readonly log: Logger,
  ) {
    if (!settings.apiKey && !settings.authToken) throw missingCredentials();
    this.client = new Anthropic({
      apiKey: settings.apiKey ?? null,
      authToken: settings.apiKey ? null : (settings.authToken ?? null),
      ...(settings.baseURL ? { baseURL: settings.baseURL } : {}),
      maxRetries: 0,
      timeout: settings.timeoutMs,
    });
  }

  get baseURL(): string {
    return this.client.baseURL;
  }

  /** Stream one model response; `onEvent` sees every raw event as it arrives. */
  async stream(
    request: ModelRequest,
    signal: AbortSignal,
    onEvent: (e: RawMessageStreamEvent) => void,
  ): Promise<Message> {
    const max = this.settings.maxRetries;
    for (let attempt = 0; ; attempt++) {
      let emitted = false;
      try {
        const stream = await this.client.messages.create({ ...request, stream: true }, { signal });
        const acc = new Accumulator();
        for await (const event of stream) {
          acc.add(event);
          if (event.type === "content_block_delta") emitted = true;
          onEvent(event);
        }
        return acc.finish();
      } catch (err) {
        if (signal.aborted || err instanceof APIUserAbortError)
          throw new CcbError("ABORTED", "The operation was cancelled.");
        const mapped = this.mapError(err);
        if (!mapped.retryable || emitted) throw mapped;
        if (attempt >= max)
          throw new ModelError(
            `${mapped.message} (gave up after ${attempt + 1} attempts)`,
            false,
            "unavailable",
            mapped.status,
          );
        const wait = this.backoff(attempt, err);
        this.log.warn(`model request failed (${mapped.message}); retry ${attempt + 1}/${max} in ${wait} ms`);
        await sleep(wait, signal);
      }
    }
  }

  /** A non-streaming request without retries (titles, summaries). */
  async complete(request: ModelRequest, signal: AbortSignal): Promise<string> {
    try {
      const msg = await this.client.messages.create({ ...request, stream: false }, { signal });
      return msg.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    } catch (err) {
      if (signal.aborted || err instanceof APIUserAbortError)
        throw new CcbError("ABORTED", "The operation was cancelled.");
      throw this.mapError(err);
    }
  }

  private backoff(attempt: number, err: unknown): number {
    const retryAfter = err instanceof APIError ? Number(err.headers?.get("retry-after")) : NaN;
    if (Number.isFinite(retryAfter) && retryAfter >= 0) return Math.min(retryAfter * 1000, 60_000);
    const base = this.settings.retryBaseMs * 2 ** attempt;
    return Math.min(Math.round(base / 2 + Math.random() * (base / 2)), 30_000);
  }

  mapError(err: unknown): ModelError {
    if (err instanceof ModelError) return err;
    const where = this.client.baseURL;
    if (err instanceof APIConnectionError) {
      const cause = (err.cause as Error | undefined)?.message ?? err.message;
      return new ModelError(
        `Cannot reach the Anthropic API at ${where}: ${cause}. Check ANTHROPIC_BASE_URL and the network.`,
        true,
      );
    }
    if (err instanceof APIError) {
      const body = err.error as { error?: { type?: string; message?: string } } | undefined;
      const type = body?.error?.type ?? "";
      const detail = body?.error?.message ?? err.message;
      const status = err.status;
      if (status === 401 || status === 403) {
        return new ModelError(
          `The Anthropic API at ${where} refused the credentials (${status}): ${detail}. Check ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN.`,
          false,
          "auth",
          status,
        );
      }
      const retryable =
        type === "overloaded_error" ||
        status === undefined ||
        status === 408 ||
        status === 409 ||
        status === 429 ||
        status >= 500;
      return new ModelError(
        `The Anthropic API failed${status ? ` (${status}${type ? ` ${type}` : ""})` : type ? ` (${type})` : ""}: ${detail}`,
        retryable,
        retryable ? "unavailable" : "rejected",
        status,
      );
    }
    return new ModelError(`The model request failed: ${(err as Error)?.message ?? String(err)}`, false);
  }
}

/** Rebuilds the final Message from raw stream events. */
class Accumulator {
  private message: Message | undefined;
  private json = new Map<number, string>();

  add(e: RawMessageStreamEvent): void {
    switch (e.type) {
      case "message_start":
        this.message = { ...e.message, content: [] };
        break;
      case "content_block_start":
        this.msg().content[e.index] = { ...e.content_block } as ApiBlock;
        if (e.content_block.type === "tool_use") this.json.set(e.index, "");
        break;
      case "content_block_delta": {
        const b = this.msg().content[e.index] as MutableBlock | undefined;
        const d = e.delta;
        if (!b) break;
        if (d.type === "text_delta") b.text += d.text;
        else if (d.type === "thinking_delta") b.thinking += d.thinking;
        else if (d.type === "signature_delta") b.signature = d.signature;
        else if (d.type === "input_json_delta") this.json.set(e.index, (this.json.get(e.index) ?? "") + d.partial_json);
        break;
      }
      case "content_block_stop": {
        const b = this.msg().content[e.index] as MutableBlock | undefined;
        const raw = this.json.get(e.index);
        if (b && raw !== undefined) {
          try {
            b.input = raw === "" ? {} : JSON.parse(raw);
          } catch {
            b.input = { __invalid_json: raw };
          }
        }
        break;
      }
      case "message_delta":
        this.msg().stop_reason = e.delta.stop_reason;
        this.msg().usage = {
          ...this.msg().usage,
          output_tokens: e.usage.output_tokens,
          ...(e.usage.input_tokens != null ? { input_tokens: e.usage.input_tokens } : {}),
        };
        break;
      case "message_stop":
        break;
    }
  }

  private msg(): Message {
    if (!this.message) throw new ModelError("The model stream did not start with message_start.", true);
    return this.message;
  }

  finish(): Message {
    const m = this.msg();
    m.content = m.content.filter(Boolean);
    return m;
  }
}
