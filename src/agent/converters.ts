import type {
  ContentBlock,
  PlanEntry,
  SessionUpdate,
  StopReason,
  ToolCallContent,
  ToolCallLocation,
  ToolKind,
} from "@agentclientprotocol/sdk/unstable";
import type {
  StopReason as ApiStopReason,
  ContentBlockParam,
  RawMessageStreamEvent,
} from "@anthropic-ai/sdk/resources/messages";

/** Pure mappings between the model's events and ACP; no I/O here. */

export function textChunk(text: string): SessionUpdate {
  return { sessionUpdate: "agent_message_chunk", content: { type: "text", text } };
}

export function thoughtChunk(text: string): SessionUpdate {
  return { sessionUpdate: "agent_thought_chunk", content: { type: "text", text } };
}

export function userChunk(content: ContentBlock): SessionUpdate {
  return { sessionUpdate: "user_message_chunk", content };
}

/** The live update for one raw stream event, if it carries text or thinking. */
export function streamEventToUpdate(event: RawMessageStreamEvent): SessionUpdate | undefined {
  switch (event.type) {
    case "content_block_delta": {
      const d = event.delta;
      switch (d.type) {
        case "text_delta":
          return d.text ? textChunk(d.text) : undefined;
        case "thinking_delta":
          return d.thinking ? thoughtChunk(d.thinking) : undefined;
        case "input_json_delta":
        case "signature_delta":
        case "citations_delta":
          return undefined;
        default: {
          const never: never = d;
          return never;
        }
      }
    }
    case "message_start":
    case "message_delta":
    case "message_stop":
    case "content_block_start":
    case "content_block_stop":
      return undefined;
    default: {
      const never: never = event;
      return never;
    }
  }
}

/** Anthropic stop reason -> ACP stop reason, or "continue" when the loop must run tools. */
export function mapStopReason(reason: ApiStopReason | null): StopReason | "continue" {
  switch (reason) {
    case "tool_use":
    case "pause_turn":
      return "continue";
    case "end_turn":
    case "stop_sequence":
    case null:
      return "end_turn";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "max_tokens";
    case "refusal":
      return "refusal";
    default: {
      const never: never = reason;
      return never;
    }
  }
}

/** ACP prompt blocks -> Anthropic content blocks. */
export function promptToModel(blocks: ContentBlock[]): ContentBlockParam[] {
  const out: ContentBlockParam[] = [];
  for (const b of blocks) {
    switch (b.type) {
      case "text":
        out.push({ type: "text", text: b.text });
        break;
      case "image":
        out.push({ type: "image", source: { type: "base64", media_type: b.mimeType as "image/png", data: b.data } });
        break;
      case "audio":
        out.push({ type: "text", text: `[audio attachment (${b.mimeType}) not supported by this model]` });
        break;
      case "resource_link":
        out.push({ type: "text", text: `[file: ${b.uri}${b.name ? ` (${b.name})` : ""}]` });
        break;
      case "resource": {
        const r = b.resource;
        if ("text" in r) out.push({ type: "text", text: `<file uri="${r.uri}">\n${r.text}\n</file>` });
        else out.push({ type: "text", text: `[binary resource ${r.uri} (${r.mimeType ?? "unknown type"}) omitted]` });
        break;
      }
      default: {
        const never: never = b;
        void never;
      }
    }
  }
  return out.length > 0 ? out : [{ type: "text", text: "(empty prompt)" }];
}

/** Plain text of the prompt (slash command detection, titles). */
export function promptText(blocks: ContentBlock[]): string {
  return blocks.map((b) => (b.type === "text" ? b.text : "")).join("");
}

/** Context use of the last request; `costUsd` is the session's total so far, when the model's price is known. */
export function usageUpdate(used: number, size: number, costUsd?: number): SessionUpdate {
  return {
    sessionUpdate: "usage_update",
    used,
    size,
    ...(costUsd !== undefined ? { cost: { amount: Math.round(costUsd * 1e6) / 1e6, currency: "USD" } } : {}),
  };
}

export function textContent(text: string): ToolCallContent {
  return { type: "content", content: { type: "text", text } };
}

export function diffContent(path: string, oldText: string | null, newText: string): ToolCallContent {
  return { type: "diff", path, oldText, newText };
}

export interface Todo {
  content: string;
  status: "pending" | "in_progress" | "completed";
  priority?: "high" | "medium" | "low";
}

export function todosToPlan(todos: Todo[]): SessionUpdate {
  const entries: PlanEntry[] = todos.map((t) => ({
    content: t.content,
    status: t.status,
    priority: t.priority ?? "medium",
  }));
  return { sessionUpdate: "plan", entries };
}

export function toolCallStart(
  id: string,
  title: string,
  kind: ToolKind,
  rawInput: unknown,
  locations: ToolCallLocation[],
  content: ToolCallContent[] = [],
): SessionUpdate {
  return { sessionUpdate: "tool_call", toolCallId: id, title, kind, status: "pending", rawInput, locations, content };
}

/** A shortened title: one line, at most 120 characters. */
export function shortTitle(s: string): string {
  const line = s.replace(/\s+/g, " ").trim();
  return line.length > 120 ? `${line.slice(0, 117)}...` : line;
}
