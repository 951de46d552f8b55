import type { ContentBlock, StopReason } from "@agentclientprotocol/sdk/unstable";
import type { ContentBlockParam, Message, MessageParam, ToolResultBlockParam, ToolUseBlock } from "@anthropic-ai/sdk/resources/messages";
import { isCcbError } from "../../core/errors.ts";
import { mapStopReason, promptText, promptToModel, streamEventToUpdate, textChunk, thoughtChunk, userChunk } from "./converters.ts";
import { expandCommand } from "./commands.ts";
import { repairHistory } from "./history.ts";
import { toolsForModel } from "./model-tools.ts";
import { findLocalCommand } from "./session-commands.ts";
import type { ModelRequest } from "./model.ts";
import { ModelError } from "./model-error.ts";
import { THOUGHT_LEVELS } from "./modes.ts";
import { countsOf } from "./pricing.ts";
import type { Session } from "./session.ts";
import { runToolUse } from "./tool-runner.ts";
import type { TurnOutlet } from "./turn.ts";

/**
 * One prompt turn: model request -> stream text/thinking to the client -> run the tools it asked
 * for -> repeat, until the model ends the turn, the turn limit is hit, or the turn is cancelled.
 * Every step is appended to the session's JSONL store as it completes.
 */
export async function runTurn(session: Session, outlet: TurnOutlet, prompt: ContentBlock[], signal: AbortSignal): Promise<StopReason> {
  const turn = session.nextTurn();
  session.append({ t: "turn_start", turn, at: new Date().toISOString() });
  for (const block of prompt) session.append({ t: "update", turn, update: userChunk(block) });
  session.maybeTitle(promptText(prompt), outlet);

  const end = <R extends StopReason | "error">(reason: R): R => {
    session.append({ t: "turn_end", turn, stopReason: reason });
    return reason;
  };
  const text = promptText(prompt);
  const local = findLocalCommand(text);
  if (local) {
    try {
      return end(await local.command.run(session, outlet, local.args, turn, signal));
    } catch (err) {
      if (signal.aborted || isCcbError(err, "ABORTED")) return end("cancelled");
      if (err instanceof ModelError) outlet.emit(textChunk(err.message));
      end("error");
      throw err;
    }
  }
  const expanded = expandCommand(text, session.commands);
  const userContent: ContentBlockParam[] = expanded !== undefined ? [{ type: "text", text: expanded }] : promptToModel(prompt);
  session.pushMessage(turn, { role: "user", content: userContent });


  const tools = session.tools();
  const apiTools = toolsForModel(tools);
  // git state at most once per turn, cached while nothing changed (spawning git stalls streaming)
  const git = await session.gitState(signal);
  for (let step = 0; ; step++) {
    if (signal.aborted) return end("cancelled");
    if (step >= session.maxTurns) {
      outlet.emit(textChunk(`\n\n[stopped: the turn reached the limit of ${session.maxTurns} model requests]`));
      return end("max_turn_requests");
    }
    let message: Message;
    try {
      const client = await session.modelClient();
      const request: ModelRequest = {
        model: session.config.model,
        max_tokens: session.settings.maxTokens,
        system: session.systemPrompt(git, tools),
        messages: repairHistory(session.history),
        tools: apiTools,
      };
      const budget = THOUGHT_LEVELS[session.config.thought];
      if (budget > 0) {
        request.thinking = { type: "enabled", budget_tokens: budget };
        request.max_tokens = Math.max(request.max_tokens, budget + 4096);
      }
      message = await client.stream(request, signal, (event) => {
        const u = streamEventToUpdate(event);
        if (u) outlet.emit(u);
      });
    } catch (err) {
      if (signal.aborted || isCcbError(err, "ABORTED")) return end("cancelled");
      // the chat shows the reason; the prompt itself fails with a JSON-RPC error (mapped in agent.ts)
      const failure = err instanceof ModelError ? err : new ModelError(`The model request failed: ${(err as Error).message}`, false);
      session.log.warn(failure.message);
      const chunk = textChunk(`${step > 0 ? "\n\n" : ""}${failure.message}`);
      outlet.emit(chunk);
      session.append({ t: "update", turn, update: chunk });
      end("error");
      throw failure;
    }
    recordAssistant(session, turn, message);
    session.recordUsage(turn, session.config.model, countsOf(message.usage), outlet);

    const stop = mapStopReason(message.stop_reason);
    const uses = message.content.filter((b): b is ToolUseBlock => b.type === "tool_use");
    if (stop !== "continue" && uses.length === 0) return end(stop);
    if (uses.length === 0) continue; // pause_turn: ask the model to go on

    const results: ToolResultBlockParam[] = [];
    let cancelled = false;
    for (const use of uses) {
      if (cancelled || signal.aborted) {
        results.push({ type: "tool_result", tool_use_id: use.id, is_error: true, content: "Cancelled before it ran." });
        continue;
      }
      const r = await runToolUse(session, outlet, use, turn, signal);
      results.push({ type: "tool_result", tool_use_id: use.id, is_error: r.isError, content: r.text });
      cancelled = r.cancelled;
    }
    session.pushMessage(turn, { role: "user", content: results });
    if (cancelled || signal.aborted) return end("cancelled");
  }
}

/** Keep the assistant message for the model and its visible parts for replay. */
function recordAssistant(session: Session, turn: number, message: Message): void {
  const content = message.content.filter((b) => b.type !== "text" || b.text !== "");
  if (content.length > 0) session.pushMessage(turn, { role: "assistant", content } as MessageParam);
  for (const b of message.content) {
    if (b.type === "text" && b.text) session.append({ t: "update", turn, update: textChunk(b.text) });
    if (b.type === "thinking" && b.thinking) session.append({ t: "update", turn, update: thoughtChunk(b.thinking) });
  }
}
