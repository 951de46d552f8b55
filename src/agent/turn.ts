import type { ContentBlock, StopReason } from "@agentclientprotocol/sdk/unstable";
import type {
  ContentBlockParam,
  Message,
  MessageParam,
  ToolResultBlockParam,
  ToolUseBlock,
} from "@anthropic-ai/sdk/resources/messages";
import { isCcbError } from "../core/errors.ts";
import type { GitStatus } from "../core/git/git.ts";
import {
  mapStopReason,
  promptText,
  promptToModel,
  streamEventToUpdate,
  textChunk,
  thoughtChunk,
  userChunk,
} from "./converters.ts";
import { repairHistory } from "./history.ts";
import type { ModelClient, ModelRequest } from "./model.ts";
import { ModelError } from "./model-error.ts";
import { toolsForModel } from "./model-tools.ts";
import { type SessionConfig, THOUGHT_LEVELS } from "./modes.ts";
import type { TurnOutlet } from "./outlet.ts";
import { countsOf, type TokenCounts } from "./pricing.ts";
import type { ModelSettings } from "./settings.ts";
import { runToolUse, type ToolHost } from "./tool-runner.ts";
import type { AcpTool } from "./tools/types.ts";

/** A prompt the session answers itself (a local slash command such as /compact). */
export type LocalRun = (outlet: TurnOutlet, turn: number, signal: AbortSignal) => Promise<StopReason>;

/** What a turn needs from the session that drives it (the session implements it; the turn never imports it). */
export interface TurnHost extends ToolHost {
  readonly config: SessionConfig;
  readonly settings: Pick<ModelSettings, "maxTokens">;
  /** Model requests allowed per prompt. */
  readonly maxTurns: number;
  /** The conversation the model continues (replaced by /compact and /clear). */
  readonly history: readonly MessageParam[];
  nextTurn(): number;
  pushMessage(turn: number, message: MessageParam): void;
  maybeTitle(text: string, outlet: TurnOutlet): void;
  /** The session's answer to a local command prompt, if `text` is one. */
  localCommand(text: string): LocalRun | undefined;
  /** A prompt-template command expanded, if `text` invokes one. */
  expandCommand(text: string): string | undefined;
  /** The tools offered to the model for the next request. */
  tools(): AcpTool[];
  gitState(signal: AbortSignal): Promise<GitStatus | undefined>;
  systemPrompt(git: GitStatus | undefined, tools: readonly AcpTool[]): string;
  modelClient(): Promise<ModelClient>;
  recordUsage(turn: number, model: string, tokens: TokenCounts, outlet: TurnOutlet): void;
}

/**
 * One prompt turn: model request -> stream text/thinking to the client -> run the tools it asked
 * for -> repeat, until the model ends the turn, the turn limit is hit, or the turn is cancelled.
 * Every step is appended to the session's JSONL store as it completes. The session creates one
 * per prompt and awaits `run`.
 */
export class Turn {
  private turn = 0;

  constructor(
    private readonly host: TurnHost,
    private readonly outlet: TurnOutlet,
    private readonly signal: AbortSignal,
  ) {}

  async run(prompt: ContentBlock[]): Promise<StopReason> {
    const { host, outlet, signal } = this;
    this.turn = host.nextTurn();
    const turn = this.turn;
    host.append({ t: "turn_start", turn, at: new Date().toISOString() });
    for (const block of prompt) host.append({ t: "update", turn, update: userChunk(block) });
    const text = promptText(prompt);
    host.maybeTitle(text, outlet);

    const local = host.localCommand(text);
    if (local) {
      try {
        return this.end(await local(outlet, turn, signal));
      } catch (err) {
        if (signal.aborted || isCcbError(err, "ABORTED")) return this.end("cancelled");
        if (err instanceof ModelError) outlet.emit(textChunk(err.message));
        this.end("error");
        throw err;
      }
    }
    const expanded = host.expandCommand(text);
    const userContent: ContentBlockParam[] =
      expanded !== undefined ? [{ type: "text", text: expanded }] : promptToModel(prompt);
    host.pushMessage(turn, { role: "user", content: userContent });

    const tools = host.tools();
    const apiTools = toolsForModel(tools);
    // git state at most once per turn, cached while nothing changed (spawning git stalls streaming)
    const git = await host.gitState(signal);
    for (let step = 0; ; step++) {
      if (signal.aborted) return this.end("cancelled");
      if (step >= host.maxTurns) {
        outlet.emit(textChunk(`\n\n[stopped: the turn reached the limit of ${host.maxTurns} model requests]`));
        return this.end("max_turn_requests");
      }
      const message = await this.request(step, { system: host.systemPrompt(git, tools), tools: apiTools });
      if (!message) return this.end("cancelled");
      this.recordAssistant(message);
      host.recordUsage(turn, host.config.model, countsOf(message.usage), outlet);

      const stop = mapStopReason(message.stop_reason);
      const uses = message.content.filter((b): b is ToolUseBlock => b.type === "tool_use");
      if (stop !== "continue" && uses.length === 0) return this.end(stop);
      if (uses.length === 0) continue; // pause_turn: ask the model to go on

      const cancelled = await this.runTools(uses, tools);
      if (cancelled || signal.aborted) return this.end("cancelled");
    }
  }

  private end<R extends StopReason | "error">(reason: R): R {
    this.host.append({ t: "turn_end", turn: this.turn, stopReason: reason });
    return reason;
  }

  /**
   * One streamed model request (undefined: the turn was cancelled meanwhile). A failure is shown in
   * the chat, stored, and thrown: the prompt fails with a JSON-RPC error (mapped in agent.ts).
   */
  private async request(step: number, parts: Pick<ModelRequest, "system" | "tools">): Promise<Message | undefined> {
    const { host, outlet, signal } = this;
    try {
      const client = await host.modelClient();
      const request: ModelRequest = {
        model: host.config.model,
        max_tokens: host.settings.maxTokens,
        system: parts.system,
        messages: repairHistory([...host.history]),
        tools: parts.tools,
      };
      const budget = THOUGHT_LEVELS[host.config.thought];
      if (budget > 0) {
        request.thinking = { type: "enabled", budget_tokens: budget };
        request.max_tokens = Math.max(request.max_tokens, budget + 4096);
      }
      return await client.stream(request, signal, (event) => {
        const u = streamEventToUpdate(event);
        if (u) outlet.emit(u);
      });
    } catch (err) {
      if (signal.aborted || isCcbError(err, "ABORTED")) return undefined;
      const failure =
        err instanceof ModelError ? err : new ModelError(`The model request failed: ${(err as Error).message}`, false);
      host.log.warn(failure.message);
      const chunk = textChunk(`${step > 0 ? "\n\n" : ""}${failure.message}`);
      outlet.emit(chunk);
      host.append({ t: "update", turn: this.turn, update: chunk });
      this.end("error");
      throw failure;
    }
  }

  /** The tool_uses of one response, in order; true when the turn was cancelled meanwhile. */
  private async runTools(uses: ToolUseBlock[], tools: readonly AcpTool[]): Promise<boolean> {
    const { host, outlet, signal, turn } = this;
    const results: ToolResultBlockParam[] = [];
    let cancelled = false;
    for (const use of uses) {
      if (cancelled || signal.aborted) {
        results.push({ type: "tool_result", tool_use_id: use.id, is_error: true, content: "Cancelled before it ran." });
        continue;
      }
      const r = await runToolUse({ host, tools, outlet, turn, signal }, use);
      results.push({ type: "tool_result", tool_use_id: use.id, is_error: r.isError, content: r.text });
      cancelled = r.cancelled;
    }
    host.pushMessage(turn, { role: "user", content: results });
    return cancelled;
  }

  /** Keep the assistant message for the model and its visible parts for replay. */
  private recordAssistant(message: Message): void {
    const { host, turn } = this;
    const content = message.content.filter((b) => b.type !== "text" || b.text !== "");
    if (content.length > 0) host.pushMessage(turn, { role: "assistant", content } as MessageParam);
    for (const b of message.content) {
      if (b.type === "text" && b.text) host.append({ t: "update", turn, update: textChunk(b.text) });
      if (b.type === "thinking" && b.thinking) host.append({ t: "update", turn, update: thoughtChunk(b.thinking) });
    }
  }
}
