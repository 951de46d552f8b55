import type { SessionUpdate } from "@agentclientprotocol/sdk/unstable";
import type { ContentBlockParam, MessageParam, ToolResultBlockParam } from "@anthropic-ai/sdk/resources/messages";
import type { StoreRecord } from "./store.ts";

export const INTERRUPTED_TEXT = "\n\n[interrupted: ccb stopped before this turn finished]";

/** The updates `session/load` replays: every stored update, plus a marker after each interrupted turn. */
export function replayUpdates(records: StoreRecord[]): SessionUpdate[] {
  const out: SessionUpdate[] = [];
  let open: number | undefined;
  const closeInterrupted = () => {
    if (open !== undefined)
      out.push({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: INTERRUPTED_TEXT } });
    open = undefined;
  };
  for (const r of records) {
    switch (r.t) {
      case "turn_start":
        closeInterrupted();
        open = r.turn;
        break;
      case "turn_end":
        if (r.stopReason === "cancelled")
          out.push({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "\n\n[cancelled]" } });
        open = undefined;
        break;
      case "update":
        out.push(r.update);
        break;
      case "meta":
      case "title":
      case "message":
      case "mode":
      case "config":
      case "options":
      case "usage":
      case "compact":
        break;
      default: {
        const never: never = r;
        void never;
      }
    }
  }
  closeInterrupted();
  return out;
}

/** Turn numbers that started but never ended (the process died mid-turn). */
export function interruptedTurns(records: StoreRecord[]): number[] {
  const started = new Set<number>();
  for (const r of records) {
    if (r.t === "turn_start") started.add(r.turn);
    if (r.t === "turn_end") started.delete(r.turn);
  }
  return [...started];
}

export function lastTurn(records: StoreRecord[]): number {
  let n = 0;
  for (const r of records) if (r.t === "turn_start" && r.turn > n) n = r.turn;
  return n;
}

/**
 * The model conversation, repaired so the API accepts it: consecutive user messages merged, a
 * tool_use without its tool_result (interrupted or cancelled) answered with an error result.
 */
export function modelHistory(records: StoreRecord[]): MessageParam[] {
  let msgs: MessageParam[] = [];
  for (const r of records) {
    if (r.t === "message") msgs.push(r.message);
    if (r.t === "compact") msgs = compactedHistory(r.summary);
  }
  return repairHistory(msgs);
}

/** The conversation after /compact (a summary to continue from) or /clear (nothing). */
export function compactedHistory(summary: string | null): MessageParam[] {
  if (summary === null) return [];
  return [
    {
      role: "user",
      content: [
        {
          type: "text",
          text: `<conversation-summary>\nThe earlier conversation was compacted into this summary; continue from it.\n\n${summary}\n</conversation-summary>`,
        },
      ],
    },
  ];
}

function blocks(m: MessageParam): ContentBlockParam[] {
  return typeof m.content === "string" ? [{ type: "text", text: m.content }] : [...m.content];
}

export function repairHistory(input: MessageParam[]): MessageParam[] {
  const out: MessageParam[] = [];
  for (let i = 0; i < input.length; i++) {
    const m = input[i]!;
    const prev = out[out.length - 1];
    if (prev && prev.role === m.role) {
      prev.content = [...blocks(prev), ...blocks(m)];
    } else {
      out.push({ role: m.role, content: blocks(m) } as MessageParam);
    }
  }
  // every tool_use must be answered in the next user message
  for (let i = 0; i < out.length; i++) {
    const m = out[i]!;
    if (m.role !== "assistant") continue;
    const uses = blocks(m).filter((b) => b.type === "tool_use") as { id: string }[];
    if (uses.length === 0) continue;
    let next = out[i + 1];
    if (next?.role !== "user") {
      next = { role: "user", content: [] };
      out.splice(i + 1, 0, next);
    }
    const answered = new Set(
      blocks(next)
        .filter((b) => b.type === "tool_result")
        .map((b) => (b as ToolResultBlockParam).tool_use_id),
    );
    const missing: ToolResultBlockParam[] = uses
      .filter((u) => !answered.has(u.id))
      .map((u) => ({
        type: "tool_result",
        tool_use_id: u.id,
        is_error: true,
        content: "Interrupted: this tool call did not finish.",
      }));
    if (missing.length > 0) {
      const rest = blocks(next);
      next.content = [
        ...rest.filter((b) => b.type === "tool_result"),
        ...missing,
        ...rest.filter((b) => b.type !== "tool_result"),
      ];
    }
  }
  // remove empty messages (a user message with no content is rejected by the API)
  return out.filter((m) => blocks(m).length > 0);
}
