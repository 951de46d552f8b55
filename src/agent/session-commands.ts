import type { AvailableCommand, StopReason } from "@agentclientprotocol/sdk/unstable";
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import type { GitStatus } from "../core/git/git.ts";
import { textChunk } from "./converters.ts";
import { repairHistory } from "./history.ts";
import type { ModelClient } from "./model.ts";
import { toolsForModel } from "./model-tools.ts";
import { contextWindow } from "./modes.ts";
import type { TurnOutlet } from "./outlet.ts";
import type { TokenCounts } from "./pricing.ts";
import type { StoreRecord } from "./store.ts";
import type { AcpTool } from "./tools/types.ts";

/**
 * Commands the agent runs itself (no prompt template): they act on the session's conversation.
 * `/compact` and `/clear` append a `compact` record, so the session file stays append-only and a
 * later `session/load` replays everything the user saw while the model continues from the summary.
 */
/** What a local command reads and changes of its session (`Session` is one). */
export interface CommandSession {
  readonly config: { readonly model: string };
  readonly history: MessageParam[];
  readonly sessionTokens: TokenCounts;
  readonly costUsd: number | undefined;
  readonly lastContextTokens: number;
  append(record: StoreRecord): void;
  compactTo(turn: number, summary: string | null): void;
  modelClient(): Promise<ModelClient>;
  gitState(signal: AbortSignal): Promise<GitStatus | undefined>;
  tools(): AcpTool[];
  systemPrompt(git: GitStatus | undefined, tools: readonly AcpTool[]): string;
}

export interface LocalCommand {
  name: string;
  description: string;
  hint?: string;
  run(
    session: CommandSession,
    outlet: TurnOutlet,
    args: string,
    turn: number,
    signal: AbortSignal,
  ): Promise<StopReason>;
}

/** Rough token estimate (4 characters per token) for what has not been sent yet. */
export function estimateTokens(value: unknown): number {
  const s = typeof value === "string" ? value : JSON.stringify(value ?? "");
  return Math.ceil(s.length / 4);
}

const SUMMARY_INSTRUCTIONS =
  "Summarize the conversation above so that work can continue from the summary alone. Keep: the user's goals and constraints, decisions made, " +
  "files read or changed (with paths) and what changed, commands run and their outcomes, errors still open, and the next steps. Be concise; use short sections.";

function say(session: CommandSession, outlet: TurnOutlet, turn: number, text: string): void {
  const chunk = textChunk(text);
  outlet.emit(chunk);
  session.append({ t: "update", turn, update: chunk });
}

const compact: LocalCommand = {
  name: "compact",
  description: "Summarize the conversation so far and continue from the summary (frees context)",
  hint: "optional: what the summary should focus on",
  async run(session, outlet, args, turn, signal) {
    const history = repairHistory(session.history);
    if (history.length === 0) {
      say(session, outlet, turn, "Nothing to compact yet.");
      return "end_turn";
    }
    const before = estimateTokens(history);
    const client = await session.modelClient();
    const messages: MessageParam[] = repairHistory([
      ...history,
      { role: "user", content: [{ type: "text", text: `${SUMMARY_INSTRUCTIONS}${args ? `\n\nFocus: ${args}` : ""}` }] },
    ]);
    const summary = (
      await client.complete(
        {
          model: session.config.model,
          max_tokens: 8192,
          system: "You write faithful, compact summaries of coding sessions.",
          messages,
        },
        signal,
      )
    ).trim();
    if (signal.aborted) return "cancelled";
    session.compactTo(turn, summary || "(the summary was empty)");
    say(
      session,
      outlet,
      turn,
      `Compacted ${history.length} messages (about ${before} tokens) into a summary of about ${estimateTokens(summary)} tokens.\n\n${summary}`,
    );
    return "end_turn";
  },
};

const clear: LocalCommand = {
  name: "clear",
  description: "Start the conversation over in this session (the history stays visible, the model forgets it)",
  async run(session, outlet, _args, turn) {
    session.compactTo(turn, null);
    say(session, outlet, turn, "Cleared: the next prompt starts a fresh conversation.");
    return "end_turn";
  },
};

const context: LocalCommand = {
  name: "context",
  description: "Show what uses the context window",
  async run(session, outlet, _args, turn, signal) {
    const tools = session.tools();
    const git = await session.gitState(signal);
    const system = estimateTokens(session.systemPrompt(git, tools));
    const toolDefs = estimateTokens(toolsForModel(tools));
    let user = 0;
    let assistant = 0;
    let results = 0;
    for (const m of repairHistory(session.history)) {
      for (const b of typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content) {
        const n = estimateTokens(b);
        if (b.type === "tool_result") results += n;
        else if (m.role === "user") user += n;
        else assistant += n;
      }
    }
    const size = contextWindow(session.config.model);
    const total = system + toolDefs + user + assistant + results;
    const pct = (n: number) => `${((100 * n) / size).toFixed(1)}%`;
    const rows = [
      ["System prompt", system],
      [`Tool definitions (${tools.length})`, toolDefs],
      ["Your messages", user],
      ["Agent messages and tool calls", assistant],
      ["Tool results", results],
    ] as const;
    const lines = [
      `Context window of ${session.config.model}: ${size} tokens. Next request: about ${total} tokens (${pct(total)}), estimated at 4 characters per token.`,
      "",
      "| Part | Tokens | Share |",
      "|---|---:|---:|",
      ...rows.map(([name, n]) => `| ${name} | ${n} | ${pct(n)} |`),
      `| Free | ${Math.max(0, size - total)} | ${pct(Math.max(0, size - total))} |`,
      "",
      session.lastContextTokens > 0
        ? `The last model request used ${session.lastContextTokens} tokens (as counted by the API).`
        : "No model request yet in this session.",
      total > size / 2 ? "Run /compact to summarize the conversation and free the window." : "",
    ];
    say(
      session,
      outlet,
      turn,
      lines
        .filter((l, i) => l !== "" || i < lines.length - 1)
        .join("\n")
        .trim(),
    );
    return "end_turn";
  },
};

const cost: LocalCommand = {
  name: "cost",
  description: "Show the tokens and cost of this session",
  async run(session, outlet, _args, turn) {
    const t = session.sessionTokens;
    const money =
      session.costUsd === undefined
        ? 'unknown (no price for a model used; set "prices" in settings.json)'
        : `$${session.costUsd.toFixed(4)}`;
    say(
      session,
      outlet,
      turn,
      `Session tokens: ${t.input} input, ${t.output} output, ${t.cacheRead} cache read, ${t.cacheWrite} cache write. Cost: ${money}.`,
    );
    return "end_turn";
  },
};

export const LOCAL_COMMANDS: readonly LocalCommand[] = [compact, context, cost, clear];

/** The local command a prompt invokes, with its arguments. */
export function findLocalCommand(text: string): { command: LocalCommand; args: string } | undefined {
  const m = /^\/([A-Za-z0-9_:.-]+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  const command = m ? LOCAL_COMMANDS.find((c) => c.name === m[1]) : undefined;
  return command ? { command, args: (m?.[2] ?? "").trim() } : undefined;
}

export function localAvailableCommands(): AvailableCommand[] {
  return LOCAL_COMMANDS.map((c) => ({
    name: c.name,
    description: c.description,
    ...(c.hint ? { input: { hint: c.hint } } : {}),
  }));
}
