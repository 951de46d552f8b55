import * as acp from "@agentclientprotocol/sdk/unstable";
import type { PermissionOption, ToolCallContent, ToolCallUpdate } from "@agentclientprotocol/sdk/unstable";
import type { ToolUseBlock } from "@anthropic-ai/sdk/resources/messages";
import { isCcbError, toCcbError } from "../../core/errors.ts";
import { maskDeep, maskSecrets } from "../../platform/secrets.ts";
import { textContent, toolCallStart } from "./converters.ts";
import { decide, optionKind, PERMISSION_OPTIONS } from "./permissions.ts";
import type { Session } from "./session.ts";
import type { StoreRecord } from "./store.ts";
import type { TurnOutlet } from "./turn.ts";
import { argumentErrorText } from "../../tools/kernel.ts";
import type { AgentToolContext } from "./tools/types.ts";

export interface ToolRunResult {
  /** Text for the model's tool_result. */
  text: string;
  isError: boolean;
  /** The turn was cancelled while this tool waited or ran. */
  cancelled: boolean;
}

const PLAN_OPTIONS: PermissionOption[] = [
  { optionId: "acceptEdits", name: "Yes, and auto-accept edits", kind: "allow_always" },
  { optionId: "default", name: "Yes, and ask before edits", kind: "allow_once" },
  { optionId: "plan", name: "No, keep planning", kind: "reject_once" },
];

function errorText(err: unknown): string {
  const e = toCcbError(err);
  return e.toUserText();
}

/** Runs one tool_use; what leaves for the model and the client has every current secret value masked. */
export async function runToolUse(session: Session, outlet: TurnOutlet, use: ToolUseBlock, turn: number, signal: AbortSignal): Promise<ToolRunResult> {
  const masked: TurnOutlet = Object.create(outlet, { emit: { value: (update: Parameters<TurnOutlet["emit"]>[0]) => outlet.emit(maskDeep(update)) } }) as TurnOutlet;
  const r = await runToolUseUnmasked(session, masked, use, turn, signal);
  return { ...r, text: maskSecrets(r.text) };
}

/** tool_call -> permission -> in_progress -> completed/failed, each step visible to the client and stored. */
async function runToolUseUnmasked(session: Session, outlet: TurnOutlet, use: ToolUseBlock, turn: number, signal: AbortSignal): Promise<ToolRunResult> {
  const tool = session.tools().find((t) => t.name === use.name);
  const id = use.id;
  let final: ToolCallUpdate = { toolCallId: id, title: use.name, kind: "other", status: "pending", rawInput: use.input, locations: [], content: [] };
  const send = (fields: Partial<ToolCallUpdate>) => {
    final = { ...final, ...fields };
    outlet.emit({ sessionUpdate: "tool_call_update", toolCallId: id, ...fields });
  };
  const store = () => session.append({ t: "update", turn, update: { sessionUpdate: "tool_call", ...final } } as StoreRecord);
  const fail = (text: string, cancelled = false): ToolRunResult => {
    send({ status: "failed", content: [...(final.content ?? []).filter((c) => c.type !== "content"), textContent(text)] });
    store();
    return { text, isError: true, cancelled };
  };

  if (!tool) {
    outlet.emit({ sessionUpdate: "tool_call", toolCallId: id, title: use.name, kind: "other", status: "pending", rawInput: use.input });
    return fail(`Unknown tool "${use.name}". Available tools: ${session.tools().map((t) => t.name).join(", ")}.`);
  }
  const parsed = tool.schema.safeParse(use.input);
  const ctx: AgentToolContext = {
    sessionId: session.id,
    cwd: session.cwd,
    core: session.core,
    io: session.io,
    signal,
    log: session.log,
    progress: (fields) => send(fields),
    setPlan: (todos) => session.setPlan(outlet, turn, todos),
  };
  const title = parsed.success ? tool.title(parsed.data) : use.name;
  const locations = parsed.success ? tool.locations(parsed.data, ctx) : [];
  final = { ...final, title, kind: tool.kind, locations };
  outlet.emit(toolCallStart(id, title, tool.kind, use.input, locations));
  if (!parsed.success) {
    return fail(argumentErrorText(tool.name, parsed.error));
  }
  const input = parsed.data;

  // content shown while asking (the diff of an edit); a failing preview fails the call with its reason
  let preview: ToolCallContent[] = [];
  if (tool.preview) {
    try {
      preview = await tool.preview(input, ctx);
      if (preview.length > 0) send({ content: preview });
    } catch (err) {
      if (signal.aborted) return fail("Cancelled.", true);
      return fail(errorText(err));
    }
  }

  const access = tool.access(input);
  if (tool.name === "exit_plan_mode") {
    if (session.config.mode !== "plan") {
      send({ status: "completed", content: [textContent("Not in plan mode.")] });
      store();
      return { text: "You are not in plan mode; go ahead.", isError: false, cancelled: false };
    }
    send({ content: [textContent((input as { plan: string }).plan)] });
    const answer = await askPermission(session, outlet, final, PLAN_OPTIONS, signal);
    if (answer === "cancelled") return fail("Cancelled.", true);
    if (answer === "plan" || answer === undefined) return fail("The user wants to keep planning. Ask what to change, or refine the plan.");
    session.setMode(answer === "acceptEdits" ? "acceptEdits" : "default", outlet);
    send({ status: "completed" });
    store();
    return { text: "The user approved the plan. Implement it now.", isError: false, cancelled: false };
  }

  const decision = decide(session.config.mode, access, session.rules);
  if (decision.kind === "deny") return fail(decision.reason);
  if (decision.kind === "ask") {
    const answer = await askPermission(session, outlet, final, PERMISSION_OPTIONS, signal);
    if (answer === "cancelled") return fail("Cancelled.", true);
    const kind = answer === undefined ? undefined : optionKind(answer);
    if (kind === "allow_always") session.rules.remember(access.ruleKey, "allow");
    if (kind === "reject_always") session.rules.remember(access.ruleKey, "deny");
    if (kind !== "allow_once" && kind !== "allow_always") {
      return fail(`The user rejected this ${tool.name} call${kind === "reject_always" ? " and all future ones like it" : ""}. Do not retry it; ask the user how to proceed if needed.`);
    }
  }

  send({ status: "in_progress" });
  if (access.category !== "read") session.markChanged();
  try {
    const out = await tool.run(input, ctx);
    if (signal.aborted) {
      send({ status: "failed", ...(out.content ? { content: out.content } : {}), rawOutput: out.rawOutput });
      store();
      return { text: out.text, isError: true, cancelled: true };
    }
    const content = out.content ?? [textContent(out.text)];
    send({ status: out.isError ? "failed" : "completed", content: content.length > 0 ? content : (final.content ?? []), ...(out.locations ? { locations: out.locations } : {}), rawOutput: out.rawOutput ?? { output: out.text } });
    store();
    return { text: out.text, isError: out.isError === true, cancelled: false };
  } catch (err) {
    if (signal.aborted || isCcbError(err, "ABORTED")) return fail("Cancelled.", true);
    return fail(errorText(err));
  }
}

/** The chosen optionId, "cancelled" when the turn was cancelled, or undefined for an unknown answer. */
async function askPermission(session: Session, outlet: TurnOutlet, toolCall: ToolCallUpdate, options: PermissionOption[], signal: AbortSignal): Promise<string | "cancelled" | undefined> {
  if (signal.aborted) return "cancelled";
  try {
    const r = await session.client.request(
      acp.methods.client.session.requestPermission,
      { sessionId: session.id, toolCall, options },
      { cancellationSignal: signal, stopWaitingOnCancel: true },
    );
    if (signal.aborted || r.outcome.outcome === "cancelled") return "cancelled";
    const chosen = r.outcome.optionId;
    return options.some((o) => o.optionId === chosen) ? chosen : undefined;
  } catch (err) {
    if (signal.aborted) return "cancelled";
    session.log.warn(`session/request_permission failed: ${(err as Error).message}`);
    outlet.emit({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: `\n[permission request failed: ${(err as Error).message}]\n` } });
    return undefined;
  }
}
