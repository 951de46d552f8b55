import type { PermissionOption, ToolCallContent, ToolCallUpdate } from "@agentclientprotocol/sdk/unstable";
import type { ToolUseBlock } from "@anthropic-ai/sdk/resources/messages";
import type { Core } from "../core/core.ts";
import { type HintNames, isCcbError, toCcbError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import { maskDeep, maskSecrets } from "../core/secret-vault.ts";
import { parseArguments, runTool } from "../tools/kernel.ts";
import { type Todo, textContent, toolCallStart } from "./converters.ts";
import { applyReviewed, type DiffReview, openDiffReview, type ReviewOutcome } from "./diff-review.ts";
import type { ModeId } from "./modes.ts";
import type { TurnOutlet } from "./outlet.ts";
import type { AgentPeer } from "./peer.ts";
import { decide, optionKind, PERMISSION_OPTIONS, type PermissionRules } from "./permissions.ts";
import type { StoreRecord } from "./store.ts";
import type { ClientIO } from "./tools/io.ts";
import { type AcpTool, type AgentToolContext, type GateContext, previewOf, type ToolOutcome } from "./tools/types.ts";

/** A file a tool call changed: its absolute path and its new text. */
export interface EditedFile {
  path: string;
  text: string;
}

/** Diagnostics of edited files, from the live editor when one is attached (src/agent/live-editor.ts). */
export interface EditFeedback {
  /** Text for the model about these files after an edit, or undefined when there is nothing to say. */
  afterEdit(files: EditedFile[], signal: AbortSignal): Promise<string | undefined>;
}

/** What the runner needs from the session that owns the turn (the session implements it). */
export interface ToolHost {
  readonly id: string;
  readonly cwd: string;
  readonly core: Core;
  readonly io: ClientIO;
  readonly rules: PermissionRules;
  readonly log: Logger;
  /** Where the session's events and asks go. */
  readonly peer: AgentPeer;
  readonly config: { readonly mode: ModeId };
  /** The client renders elicitation forms (`clientCapabilities.elicitation.form`). */
  readonly canElicit?: boolean;
  append(record: StoreRecord): void;
  setMode(mode: ModeId, outlet: TurnOutlet): void;
  setPlan(outlet: TurnOutlet, turn: number, todos: Todo[]): void;
  /** A tool with side effects ran. */
  markChanged(): void;
  /** The live editor, while its bridge is connected. */
  editFeedback(): EditFeedback | undefined;
}

/** One tool_use of a turn: the host, the tools offered in this request, where updates go. */
export interface ToolCall {
  host: ToolHost;
  tools: readonly AcpTool[];
  outlet: TurnOutlet;
  turn: number;
  signal: AbortSignal;
}

export interface ToolRunResult {
  /** Text for the model's tool_result. */
  text: string;
  isError: boolean;
  /** The turn was cancelled while this tool waited or ran. */
  cancelled: boolean;
}

/** The agent's tools that play each role a core hint can name (no terminal list or read: bash returns the output). */
const ACP_HINT_NAMES: HintNames = {
  list: "glob",
  read: "read",
  write: "write",
  git: "git",
  gitStatus: "git",
  gitDiff: "git",
  terminal: "bash",
};

function errorText(err: unknown): string {
  return toCcbError(err).toUserText(ACP_HINT_NAMES);
}

/** The files a finished call changed: the diffs it shows (the last diff of a path wins). */
function editedFiles(content: readonly ToolCallContent[] | undefined): EditedFile[] {
  const files = new Map<string, string>();
  for (const c of content ?? []) if (c.type === "diff") files.set(c.path, c.newText);
  return [...files].map(([path, text]) => ({ path, text }));
}

/** Runs one tool_use; what leaves for the model and the client has every current secret value masked. */
export async function runToolUse(call: ToolCall, use: ToolUseBlock): Promise<ToolRunResult> {
  const outlet = call.outlet;
  const masked: TurnOutlet = Object.create(outlet, {
    emit: { value: (update: Parameters<TurnOutlet["emit"]>[0]) => outlet.emit(maskDeep(update)) },
  }) as TurnOutlet;
  const r = await runToolUseUnmasked({ ...call, outlet: masked }, use);
  return { ...r, text: maskSecrets(r.text) };
}

/** tool_call -> permission -> in_progress -> completed/failed, each step visible to the client and stored. */
async function runToolUseUnmasked(call: ToolCall, use: ToolUseBlock): Promise<ToolRunResult> {
  const { host, outlet, turn, signal } = call;
  const tool = call.tools.find((t) => t.name === use.name);
  const id = use.id;
  let final: ToolCallUpdate = {
    toolCallId: id,
    title: use.name,
    kind: "other",
    status: "pending",
    rawInput: use.input,
    locations: [],
    content: [],
  };
  const send = (fields: Partial<ToolCallUpdate>) => {
    final = { ...final, ...fields };
    outlet.emit({ sessionUpdate: "tool_call_update", toolCallId: id, ...fields });
  };
  const store = () =>
    host.append({ t: "update", turn, update: { sessionUpdate: "tool_call", ...final } } as StoreRecord);
  const fail = (text: string, cancelled = false): ToolRunResult => {
    send({
      status: "failed",
      content: [...(final.content ?? []).filter((c) => c.type !== "content"), textContent(text)],
    });
    store();
    return { text, isError: true, cancelled };
  };
  const complete = (out: ToolOutcome): ToolRunResult => {
    send({
      status: "completed",
      ...(out.content ? { content: out.content } : {}),
      ...(out.rawOutput !== undefined ? { rawOutput: out.rawOutput } : {}),
    });
    store();
    return { text: out.text, isError: false, cancelled: false };
  };

  if (!tool) {
    outlet.emit({
      sessionUpdate: "tool_call",
      toolCallId: id,
      title: use.name,
      kind: "other",
      status: "pending",
      rawInput: use.input,
    });
    return fail(`Unknown tool "${use.name}". Available tools: ${call.tools.map((t) => t.name).join(", ")}.`);
  }
  const parsed = parseArguments(tool, use.input);
  const ctx: AgentToolContext = {
    sessionId: host.id,
    cwd: host.cwd,
    core: host.core,
    io: host.io,
    signal,
    log: host.log,
    caller: { frontEnd: "acp", client: "ccb acp", session: host.id },
    progress: (fields) => send(fields),
    setPlan: (todos) => host.setPlan(outlet, turn, todos),
    elicit:
      host.canElicit && host.peer.elicit
        ? (message, requestedSchema) =>
            // a cancelled turn withdraws the question, and the call ends now
            (host.peer.elicit as NonNullable<AgentPeer["elicit"]>)(
              host.id,
              { toolCallId: id, message, requestedSchema },
              signal,
            )
        : undefined,
  };
  const presentation = tool.acp;
  const title = parsed.ok ? presentation.title(parsed.args) : use.name;
  const locations = parsed.ok ? presentation.locations(parsed.args, ctx) : [];
  final = { ...final, title, kind: presentation.kind, locations };
  outlet.emit(toolCallStart(id, title, presentation.kind, use.input, locations));
  if (!parsed.ok) return fail(parsed.message);
  const input = parsed.args;

  // content shown while asking (the diff of an edit); a failing preview fails the call with its reason
  try {
    const preview = await previewOf(tool, input, ctx);
    if (preview.length > 0) send({ content: preview });
  } catch (err) {
    if (signal.aborted) return fail("Cancelled.", true);
    return fail(errorText(err));
  }

  const access = presentation.access(input);
  /** The text the person kept in the workbench's review when it is not the proposal: written instead of running the tool. */
  let reviewed: { review: DiffReview; text: string } | undefined;
  if (presentation.gate) {
    const gate: GateContext = {
      mode: host.config.mode,
      show: (content) => send({ content }),
      ask: (options) => askPermission(host, outlet, final, options, signal),
      setMode: (mode) => host.setMode(mode, outlet),
    };
    const r = await presentation.gate(input, gate);
    if (r.kind === "cancelled") return fail("Cancelled.", true);
    if (r.kind === "reject") return fail(r.text);
    if (r.kind === "done") return complete(r.outcome);
  } else {
    const decision = decide(host.config.mode, access, host.rules);
    if (decision.kind === "deny") return fail(decision.reason);
    if (decision.kind === "ask") {
      const asked = await askOrReview(host, outlet, final, signal);
      if (asked.via === "workbench") {
        if (asked.outcome.kind !== "accepted")
          return fail(
            "The user rejected this change in the editor. Do not retry it; ask the user how to proceed if needed.",
          );
        if (asked.outcome.text !== asked.review.newText) reviewed = { review: asked.review, text: asked.outcome.text };
      }
      const answer = asked.via === "workbench" ? "allow_once" : asked.answer;
      if (answer === "cancelled") return fail("Cancelled.", true);
      const kind = asked.via === "workbench" ? "allow_once" : answer === undefined ? undefined : optionKind(answer);
      if (kind === "allow_always") host.rules.remember(access.ruleKey, "allow");
      if (kind === "reject_always") host.rules.remember(access.ruleKey, "deny");
      if (kind !== "allow_once" && kind !== "allow_always") {
        return fail(
          `The user rejected this ${tool.name} call${kind === "reject_always" ? " and all future ones like it" : ""}. Do not retry it; ask the user how to proceed if needed.`,
        );
      }
    }
  }

  send({ status: "in_progress" });
  if (access.category !== "read") host.markChanged();
  try {
    const out = reviewed
      ? await applyReviewed(reviewed.review, reviewed.text, host.io, signal)
      : await runTool(tool, input, ctx);
    if (signal.aborted) {
      send({ status: "failed", ...(out.content ? { content: out.content } : {}), rawOutput: out.rawOutput });
      store();
      return { text: out.text, isError: true, cancelled: true };
    }
    const content = out.content ?? [textContent(out.text)];
    let text = out.text;
    const edited = out.isError ? [] : editedFiles(content);
    const feedback = edited.length > 0 ? host.editFeedback() : undefined;
    if (feedback) {
      const note = await feedback.afterEdit(edited, signal).catch((err: Error) => {
        host.log.warn(`live editor: no diagnostics for this edit: ${err.message}`);
        // the model knows the edit landed unchecked, and why, rather than read silence as "no errors"
        return signal.aborted ? undefined : `Diagnostics: not available for this edit: ${errorText(err)}`;
      });
      if (note) text = `${text}\n\n${note}`;
    }
    send({
      status: out.isError ? "failed" : "completed",
      content: content.length > 0 ? content : (final.content ?? []),
      ...(out.locations ? { locations: out.locations } : {}),
      rawOutput: out.rawOutput ?? { output: out.text },
    });
    store();
    return { text, isError: out.isError === true, cancelled: false };
  } catch (err) {
    if (signal.aborted || isCcbError(err, "ABORTED")) return fail("Cancelled.", true);
    return fail(errorText(err));
  }
}

type Asked =
  | { via: "client"; answer: string | "cancelled" | undefined }
  | { via: "workbench"; review: DiffReview; outcome: Exclude<ReviewOutcome, { kind: "closed" }> };

/**
 * The permission step of a call that shows one diff: the client's request and, while the session's
 * workbench is connected, the same diff in the workbench (diff-review.ts), where the person may
 * decide it whole or hunk by hunk. The first to answer decides; the other is withdrawn (the client's
 * request cancelled, the workbench's diff closed).
 */
async function askOrReview(
  host: ToolHost,
  outlet: TurnOutlet,
  toolCall: ToolCallUpdate,
  signal: AbortSignal,
): Promise<Asked> {
  const review = openDiffReview(host.core, toolCall.content ?? [], host.log, signal);
  if (!review)
    return { via: "client", answer: await askPermission(host, outlet, toolCall, PERMISSION_OPTIONS, signal) };
  const withdraw = new AbortController();
  const fromClient = askPermission(
    host,
    outlet,
    toolCall,
    PERMISSION_OPTIONS,
    AbortSignal.any([signal, withdraw.signal]),
  ).then((answer): Asked => ({ via: "client", answer }));
  const fromWorkbench = review.outcome.then((outcome): Asked | Promise<Asked> =>
    outcome.kind === "closed" ? fromClient : { via: "workbench", review, outcome },
  );
  const first = await Promise.race([fromClient, fromWorkbench]);
  // the diff is gone from the workbench before the edit lands (no stale proposal beside the file)
  if (first.via === "client") await review.close();
  else if (!signal.aborted) withdraw.abort();
  return first.via === "client" && signal.aborted ? { via: "client", answer: "cancelled" } : first;
}

/** The chosen optionId, "cancelled" when the turn was cancelled, or undefined for an unknown answer. */
async function askPermission(
  host: ToolHost,
  outlet: TurnOutlet,
  toolCall: ToolCallUpdate,
  options: PermissionOption[],
  signal: AbortSignal,
): Promise<string | "cancelled" | undefined> {
  if (signal.aborted) return "cancelled";
  try {
    const r = await host.peer.requestPermission(host.id, { toolCall, options }, signal);
    if (signal.aborted || r.outcome === "cancelled") return "cancelled";
    const chosen = r.optionId;
    return options.some((o) => o.optionId === chosen) ? chosen : undefined;
  } catch (err) {
    if (signal.aborted) return "cancelled";
    host.log.warn(`permission request failed: ${(err as Error).message}`);
    outlet.emit({
      sessionUpdate: "agent_message_chunk",
      content: { type: "text", text: `\n[permission request failed: ${(err as Error).message}]\n` },
    });
    return undefined;
  }
}
