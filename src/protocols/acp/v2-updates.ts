import { randomUUID } from "node:crypto";
import { isAbsolute, relative } from "node:path";
import type * as v2 from "@agentclientprotocol/sdk/experimental/v2";
import type * as v1 from "@agentclientprotocol/sdk/unstable";
import { unifiedDiff } from "../../util/unified-diff.ts";

/**
 * The agent's events (the shapes of ACP v1's session updates) as ACP v2 updates: chunks carry the
 * id of their message (one id per run of chunks of one kind), tool calls are upserts
 * (`tool_call_update` with the fields known so far), diffs are structured changes plus a git
 * patch, plans are `plan_update`s. Modes are gone in v2 (the permission mode stays a config
 * option), and so are client terminals: those events are dropped.
 */
export class V2Translator {
  private run: { kind: string; id: string } | undefined;

  constructor(private readonly cwd: string) {}

  /** A new message starts with the next chunk (a prompt, a replayed turn). */
  breakMessages(): void {
    this.run = undefined;
  }

  /** The v2 update(s) for one agent event (none when v2 has no such event). */
  translate(u: v1.SessionUpdate): v2.SessionUpdate[] {
    switch (u.sessionUpdate) {
      case "agent_message_chunk":
      case "agent_thought_chunk":
      case "user_message_chunk": {
        const chunk = { messageId: this.messageId(u.sessionUpdate), content: content(u.content) };
        if (u.sessionUpdate === "agent_message_chunk") return [{ sessionUpdate: "agent_message_chunk", ...chunk }];
        if (u.sessionUpdate === "agent_thought_chunk") return [{ sessionUpdate: "agent_thought_chunk", ...chunk }];
        return [{ sessionUpdate: "user_message_chunk", ...chunk }];
      }
      case "tool_call":
      case "tool_call_update": {
        this.run = undefined;
        return [{ sessionUpdate: "tool_call_update", ...toolCall(u, this.cwd) }];
      }
      case "plan":
        return [
          {
            sessionUpdate: "plan_update",
            plan: { type: "items", planId: "plan", entries: u.entries.map((e) => ({ ...e })) },
          },
        ];
      case "available_commands_update":
        return [{ sessionUpdate: "available_commands_update", availableCommands: commands(u.availableCommands) }];
      case "config_option_update":
        return [{ sessionUpdate: "config_option_update", configOptions: configOptions(u.configOptions) }];
      case "session_info_update":
        return [{ sessionUpdate: "session_info_update", title: u.title, updatedAt: u.updatedAt }];
      case "usage_update":
        return [
          {
            sessionUpdate: "usage_update",
            used: u.used,
            size: u.size,
            ...(u.cost ? { cost: { amount: u.cost.amount, currency: u.cost.currency } } : {}),
          },
        ];
      default:
        // current_mode_update: v2 has no modes (the "mode" config option carries it)
        return [];
    }
  }

  private messageId(kind: string): string {
    if (this.run?.kind !== kind) this.run = { kind, id: randomUUID() };
    return this.run.id;
  }
}

function content(c: v1.ContentBlock): v2.ContentBlock {
  return c as v2.ContentBlock;
}

/** A v1 tool call (start or update) as a v2 upsert: only the fields it carries. */
export function toolCall(u: v1.ToolCallUpdate | v1.ToolCall, cwd: string): v2.ToolCallUpdate {
  const out: v2.ToolCallUpdate = { toolCallId: u.toolCallId };
  if (u.title !== undefined) out.title = u.title;
  if (u.kind !== undefined) out.kind = u.kind;
  if (u.status !== undefined) out.status = u.status;
  if (u.locations !== undefined) out.locations = u.locations?.map((l) => ({ path: l.path, line: l.line ?? null }));
  if (u.rawInput !== undefined) out.rawInput = u.rawInput;
  if (u.rawOutput !== undefined) out.rawOutput = u.rawOutput;
  if (u.content !== undefined) out.content = u.content?.flatMap((c) => toolContent(c, cwd)) ?? null;
  return out;
}

function toolContent(c: v1.ToolCallContent, cwd: string): v2.ToolCallContent[] {
  if (c.type === "content") return [{ type: "content", content: content(c.content) }];
  if (c.type === "diff") {
    const shown = isAbsolute(c.path) ? relative(cwd, c.path) || c.path : c.path;
    const name = shown.startsWith("..") ? c.path.replace(/^\/+/, "") : shown;
    const isNew = c.oldText === null || c.oldText === undefined;
    const body = unifiedDiff(name, c.oldText ?? "", c.newText);
    const patch = isNew
      ? `diff --git a/${name} b/${name}\nnew file mode 100644\n${body.replace(`--- a/${name}`, "--- /dev/null")}`
      : `diff --git a/${name} b/${name}\n${body}`;
    return [
      {
        type: "diff",
        changes: [
          isNew
            ? { operation: "add", path: c.path, fileType: "text" }
            : { operation: "modify", path: c.path, fileType: "text" },
        ],
        ...(body ? { patch: { format: "git_patch" as const, text: patch } } : {}),
      },
    ];
  }
  return []; // a client terminal: v2 has none (ccb runs commands on its own PTYs there)
}

function commands(list: v1.AvailableCommand[]): v2.AvailableCommand[] {
  return list.map((c) => ({
    type: "command",
    name: c.name,
    description: c.description,
    ...(c.input && "hint" in c.input ? { input: { type: "text", hint: c.input.hint } } : {}),
  }));
}

/** v1 config options (`id`) as v2 ones (`configId`). */
export function configOptions(list: v1.SessionConfigOption[]): v2.SessionConfigOption[] {
  return list.map((o) => {
    const { id, ...rest } = o as v1.SessionConfigOption & { id: string };
    return { ...rest, configId: id } as v2.SessionConfigOption;
  });
}
