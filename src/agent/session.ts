import type {
  AvailableCommand,
  ContentBlock,
  McpServer,
  PromptResponse,
  SessionConfigOption,
  SessionModeState,
  SessionUpdate,
} from "@agentclientprotocol/sdk/unstable";
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { type Core, createCore } from "../core/core.ts";
import { CcbError } from "../core/errors.ts";
import type { GitStatus } from "../core/git/git.ts";
import { liveClientsOf } from "../core/live-clients.ts";
import type { Logger } from "../core/log.ts";
import { availableCommands, expandCommand, loadCommands, type SlashCommand } from "./commands.ts";
import { shortTitle, type Todo, todosToPlan, usageUpdate } from "./converters.ts";
import { compactedHistory, lastTurn, modelHistory } from "./history.ts";
import { LiveEditor } from "./live-editor.ts";
import type { McpConnections } from "./mcp-clients.ts";
import type { ModelClient } from "./model.ts";
import {
  bypassRefusal,
  configOptions,
  contextWindow,
  isModeId,
  isThoughtLevel,
  type ModeId,
  modeState,
  type SandboxFacts,
  type SessionConfig,
} from "./modes.ts";
import { TurnOutlet } from "./outlet.ts";
import type { AgentPeer } from "./peer.ts";
import { PermissionRules } from "./permissions.ts";
import { acpUsage, addCounts, costOf, priceOf, type TokenCounts, ZERO_TOKENS } from "./pricing.ts";
import { findLocalCommand, localAvailableCommands } from "./session-commands.ts";
import { applySystemPrompt, mergeOptions, type SessionOptions } from "./session-options.ts";
import { type AgentEnv, loadModelSettings, type ModelSettings } from "./settings.ts";
import type { SessionStore, SessionWriter, StoreRecord } from "./store.ts";
import { systemPrompt } from "./system-prompt.ts";
import type { EditFeedback } from "./tool-runner.ts";
import { askPersonTool } from "./tools/ask.ts";
import { AGENT_TOOLS } from "./tools/index.ts";
import { type ClientIO, createClientIO } from "./tools/io.ts";
import { type AcpTool, offeredTools } from "./tools/types.ts";
import { type LocalRun, Turn, type TurnHost } from "./turn.ts";
import { type AcpWorkbench, type AcpWorkbenchOptions, acquireAcpWorkbench } from "./workbench.ts";

export interface AgentSessionDeps {
  /** The connection's person: where events go and what the agent may ask. */
  peer: AgentPeer;
  env: AgentEnv;
  store: SessionStore;
  log: Logger;
  facts: SandboxFacts;
  /** How sessions get a workbench (default: attach only, never start one). */
  workbench?: AcpWorkbenchOptions | undefined;
}

/** One session of the agent: its workspace core, config, conversation, store, MCP clients and FIFO prompt queue. */
export class Session implements TurnHost {
  readonly core: Core;
  readonly #leave: () => void;
  readonly io: ClientIO;
  readonly rules: PermissionRules;
  readonly settings: ModelSettings;
  commands: SlashCommand[];
  readonly peer: AgentPeer;
  readonly log: Logger;
  config: SessionConfig;
  history: MessageParam[] = [];
  title: string | undefined;
  private turnNo = 0;
  /** Tokens of the running prompt turn, the session's cost so far (undefined: a price is unknown), context use of the last request. */
  turnTokens: TokenCounts = ZERO_TOKENS;
  sessionTokens: TokenCounts = ZERO_TOKENS;
  costUsd: number | undefined = 0;
  lastContextTokens = 0;
  private mcp: McpConnections | undefined;
  private model: ModelClient | undefined;
  private tail: Promise<void> = Promise.resolve();
  private readonly active = new Set<AbortController>();
  private closed = false;
  private git: { at: number; value: GitStatus | undefined } | undefined;
  private gitDirty = true;
  private workbench: AcpWorkbench | undefined;
  private readonly editor: LiveEditor;

  private constructor(
    readonly id: string,
    readonly cwd: string,
    private readonly writer: SessionWriter,
    private readonly deps: AgentSessionDeps,
    readonly options: SessionOptions,
  ) {
    this.peer = deps.peer;
    this.log = deps.log.child(id.slice(0, 12));
    this.core = createCore({
      roots: [cwd, ...(options.additionalDirectories ?? []).filter((d) => d !== cwd)],
      log: this.log,
    });
    this.io = createClientIO(
      { readText: deps.peer.files?.read, writeText: deps.peer.files?.write, terminals: deps.peer.terminals },
      this.core,
      id,
      cwd,
    );
    this.rules = PermissionRules.forProject(deps.env.dataDir, cwd);
    this.settings = loadModelSettings(deps.env, cwd);
    this.commands = loadCommands(cwd, deps.env.home, deps.env.configDir);
    const wanted = this.settings.permissionMode;
    const mode: ModeId =
      wanted && isModeId(wanted) && !(wanted === "bypassPermissions" && bypassRefusal(deps.facts)) ? wanted : "default";
    this.config = { mode, model: this.settings.model, models: this.settings.models, thought: this.settings.thinking };
    this.editor = new LiveEditor(this.core, cwd, this.log);
    // Named among the clients of its workbench (the person's "Agent changes" view) while it is open.
    this.#leave = liveClientsOf(this.core).add({ frontEnd: "acp", client: "ccb acp", session: id });
  }

  /** A new session (or a fork / a stored one when `records` are given). */
  static async open(
    deps: AgentSessionDeps,
    opts: {
      id: string;
      cwd: string;
      mcpServers: McpServer[];
      writer: SessionWriter;
      options: SessionOptions;
      records?: StoreRecord[];
      title?: string | undefined;
    },
  ): Promise<Session> {
    let stored: SessionOptions = {};
    for (const r of opts.records ?? []) if (r.t === "options") stored = r.options;
    const options = mergeOptions(stored, opts.options);
    const s = new Session(opts.id, opts.cwd, opts.writer, deps, options);
    if (Object.keys(opts.options).length > 0) s.append({ t: "options", options });
    if (opts.records) s.restore(opts.records);
    s.title = opts.title;
    if (opts.mcpServers.length > 0) {
      const { McpConnections } = await import("./mcp-clients.ts");
      s.mcp = await McpConnections.connect(opts.mcpServers, opts.cwd, s.log, { elicitation: s.canElicit });
    }
    await s.attachWorkbench(deps.workbench ?? { start: false });
    return s;
  }

  /** The live editor: the workbench of this session's roots, when there is one (said once in the log when not). */
  private async attachWorkbench(options: AcpWorkbenchOptions, later = false): Promise<void> {
    const roots = this.core.workspace.roots.join(", ");
    try {
      this.workbench = await acquireAcpWorkbench(this.core, this.log, options);
    } catch (err) {
      this.log.warn(`workbench for ${roots} not available: ${(err as Error).message}`);
    }
    if (this.workbench) {
      this.log.info(
        `live editor: workbench for ${roots}${later ? " (started after this session opened)" : ""}; edits return the diagnostics of the edited files once it is connected`,
      );
    } else if (!later) {
      this.log.info(
        `no workbench for ${roots}: edits return no diagnostics (run \`ccb ide\` or \`ccb serve\` in the project, or start ccb acp with --workbench)`,
      );
    }
  }

  /** Before a turn: a session that found no workbench attaches to one another front end has started since. */
  private async lookAgainForWorkbench(): Promise<void> {
    const options = this.deps.workbench ?? { start: false };
    if (this.workbench || this.closed || options.share === false) return;
    const { workbenchPublished } = await import("../workbench/share/record.ts");
    if (await workbenchPublished(this.core.workspace.roots, options.env).catch(() => false))
      await this.attachWorkbench({ ...options, start: false }, true);
  }

  private restore(records: StoreRecord[]): void {
    this.history = modelHistory(records);
    this.turnNo = lastTurn(records);
    for (const r of records) {
      if (r.t === "usage") this.countUsage(r.model, r.tokens);
      if (r.t === "mode" && isModeId(r.modeId) && !(r.modeId === "bypassPermissions" && bypassRefusal(this.deps.facts)))
        this.config.mode = r.modeId;
      if (r.t === "config") this.applyConfig(r.configId, r.value, false);
    }
  }

  /** The client renders elicitation forms: the model may ask the person (ask_person). */
  get canElicit(): boolean {
    return this.deps.peer.elicit !== undefined;
  }

  /** The tools of the next model request: bridge-needing ones only while the workbench's bridge is connected. */
  tools(): AcpTool[] {
    return offeredTools(
      [...AGENT_TOOLS, ...(this.canElicit ? [askPersonTool] : []), ...(this.mcp?.tools ?? [])],
      this.core.bridge.status().connected,
    );
  }

  editFeedback(): EditFeedback | undefined {
    return this.editor.present ? this.editor : undefined;
  }

  localCommand(text: string): LocalRun | undefined {
    const local = findLocalCommand(text);
    return local ? (outlet, turn, signal) => local.command.run(this, outlet, local.args, turn, signal) : undefined;
  }

  expandCommand(text: string): string | undefined {
    return expandCommand(text, this.commands);
  }

  append(record: StoreRecord): void {
    if (!this.closed) this.writer.append(record);
  }

  private countUsage(model: string, tokens: TokenCounts): void {
    this.sessionTokens = addCounts(this.sessionTokens, tokens);
    this.lastContextTokens = tokens.input + tokens.cacheRead + tokens.cacheWrite + tokens.output;
    const price = priceOf(model, this.settings.prices);
    this.costUsd = price && this.costUsd !== undefined ? this.costUsd + costOf(tokens, price) : undefined;
  }

  /** One model response's tokens: stored, added to the turn and the session, announced as usage_update. */
  recordUsage(turn: number, model: string, tokens: TokenCounts, outlet: TurnOutlet): void {
    this.append({ t: "usage", turn, model, tokens });
    this.turnTokens = addCounts(this.turnTokens, tokens);
    this.countUsage(model, tokens);
    outlet.emit(usageUpdate(this.lastContextTokens, contextWindow(model), this.costUsd));
  }

  /** /compact and /clear: the model continues from `summary` (or from nothing); the file keeps every earlier record. */
  compactTo(turn: number, summary: string | null): void {
    this.history = compactedHistory(summary);
    this.append({ t: "compact", turn, summary });
  }

  /** Model requests allowed per prompt: the client's session option, else the settings. */
  get maxTurns(): number {
    return this.options.maxTurns ?? this.settings.maxTurns;
  }

  nextTurn(): number {
    return ++this.turnNo;
  }

  pushMessage(turn: number, message: MessageParam): void {
    this.history.push(message);
    this.append({ t: "message", turn, message });
  }

  /** The model client, loaded on first use (keeps start-up light). */
  async modelClient(): Promise<ModelClient> {
    if (!this.model) {
      const { ModelClient } = await import("./model.ts");
      this.model = new ModelClient(this.settings, this.log);
    }
    return this.model;
  }

  /** `logout`: a session that used the stored sign-in key drops it (the next prompt asks to sign in again). */
  signedOut(): void {
    if (this.settings.credentialSource !== "signed-in") return;
    this.settings.apiKey = undefined;
    this.settings.credentialSource = undefined;
    this.model = undefined;
  }

  modes(): SessionModeState {
    return modeState(this.config.mode, this.deps.facts);
  }

  configOptions(): SessionConfigOption[] {
    return configOptions(this.config, this.deps.facts);
  }

  /** Git state for the system prompt: refreshed when a tool may have changed it, or after 30 s. */
  async gitState(signal: AbortSignal): Promise<GitStatus | undefined> {
    if (!this.gitDirty && this.git && Date.now() - this.git.at < 30_000) return this.git.value;
    const value = await this.core.git.status({ signal }).catch(() => undefined);
    this.git = { at: Date.now(), value };
    this.gitDirty = false;
    return value;
  }

  /** The system prompt of the next model request (after the client's replace/append option). */
  systemPrompt(git: GitStatus | undefined, tools: readonly AcpTool[]): string {
    const base = systemPrompt({
      cwd: this.cwd,
      extraRoots: this.options.additionalDirectories ?? [],
      platform: `${process.platform} ${process.arch}`,
      date: new Date().toISOString().slice(0, 10),
      git,
      mode: this.config.mode,
      toolNames: tools.map((t) => t.name),
    });
    return applySystemPrompt(base, this.options.systemPrompt);
  }

  /** A tool with side effects ran: the next turn re-reads git state. */
  markChanged(): void {
    this.gitDirty = true;
  }

  /** Session-level update (not tied to a turn). */
  notify(update: SessionUpdate): void {
    this.peer.update(this.id, update).catch((err: Error) => this.log.debug(`update not sent: ${err.message}`));
  }

  /** The slash commands of this session: ccb's own and the project's and the user's command files. */
  availableCommands(): AvailableCommand[] {
    return [...localAvailableCommands(), ...availableCommands(this.commands)];
  }

  announceCommands(): void {
    this.notify({ sessionUpdate: "available_commands_update", availableCommands: this.availableCommands() });
  }

  /** Command files may change during a turn (the agent can write them): re-read and re-announce when they did. */
  refreshCommands(): void {
    const next = loadCommands(this.cwd, this.deps.env.home, this.deps.env.configDir);
    if (JSON.stringify(next) === JSON.stringify(this.commands)) return;
    this.commands = next;
    this.announceCommands();
  }

  /**
   * The mode a client asked for in `session/new` `_meta.permissionMode` (ccb link forwards the
   * effective mode this way). Applied silently before the session is announced; a mode that is
   * unknown or not allowed here (bypass as root outside a sandbox) is ignored with a log line.
   */
  requestInitialMode(mode: unknown): void {
    if (typeof mode !== "string") return;
    if (!isModeId(mode)) {
      this.log.warn(`ignoring unknown permission mode "${mode}" from session/new _meta`);
      return;
    }
    const refused = mode === "bypassPermissions" ? bypassRefusal(this.deps.facts) : undefined;
    if (refused) {
      this.log.warn(`ignoring bypassPermissions from session/new _meta: ${refused}`);
      return;
    }
    this.config.mode = mode;
    this.append({ t: "mode", modeId: mode });
  }

  setMode(mode: string, outlet?: TurnOutlet): void {
    if (!isModeId(mode))
      throw new CcbError(
        "INVALID_ARGUMENT",
        `Unknown mode "${mode}". Modes: default, acceptEdits, plan, dontAsk, bypassPermissions, auto.`,
      );
    if (mode === "bypassPermissions") {
      const refused = bypassRefusal(this.deps.facts);
      if (refused) throw new CcbError("PERMISSION_DENIED", refused);
    }
    this.config.mode = mode;
    this.append({ t: "mode", modeId: mode });
    const emit = (u: SessionUpdate) => (outlet ? outlet.emit(u) : this.notify(u));
    emit({ sessionUpdate: "current_mode_update", currentModeId: mode });
    emit({ sessionUpdate: "config_option_update", configOptions: this.configOptions() });
  }

  /** session/set_config_option: returns the full list and announces it. */
  setConfigOption(configId: string, value: string): SessionConfigOption[] {
    if (configId === "mode") {
      this.setMode(value);
      return this.configOptions();
    }
    this.applyConfig(configId, value, true);
    this.append({ t: "config", configId, value });
    const options = this.configOptions();
    this.notify({ sessionUpdate: "config_option_update", configOptions: options });
    return options;
  }

  private applyConfig(configId: string, value: string, strict: boolean): void {
    if (configId === "model") {
      if (!value.trim()) throw new CcbError("INVALID_ARGUMENT", "Model must be a non-empty string.");
      this.config.model = value;
      if (!this.config.models.includes(value)) this.config.models = [...this.config.models, value];
    } else if (configId === "thought_level") {
      if (!isThoughtLevel(value)) {
        if (strict)
          throw new CcbError("INVALID_ARGUMENT", `Unknown thought level "${value}": use off, low, medium or high.`);
        return;
      }
      this.config.thought = value;
    } else if (strict) {
      throw new CcbError(
        "INVALID_ARGUMENT",
        `Unknown config option "${configId}". Options: mode, model, thought_level.`,
      );
    }
  }

  setPlan(outlet: TurnOutlet, turn: number, todos: Todo[]): void {
    const u = todosToPlan(todos);
    outlet.emit(u);
    this.append({ t: "update", turn, update: u });
  }

  maybeTitle(text: string, outlet: TurnOutlet): void {
    if (this.title || !text.trim()) return;
    this.title = shortTitle(text.split("\n")[0] ?? text).slice(0, 80);
    this.append({ t: "title", title: this.title });
    outlet.emit({ sessionUpdate: "session_info_update", title: this.title, updatedAt: new Date().toISOString() });
  }

  /** session/prompt: queued FIFO behind running prompts; cancelled ones answer "cancelled" exactly once. */
  async prompt(prompt: ContentBlock[], requestSignal: AbortSignal): Promise<PromptResponse> {
    if (this.closed) throw new CcbError("NOT_FOUND", `Session ${this.id} is closed.`);
    const ac = new AbortController();
    const onRequestAbort = () => ac.abort();
    requestSignal.addEventListener("abort", onRequestAbort, { once: true });
    this.active.add(ac);
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((r) => (release = r));
    try {
      await previous;
      if (ac.signal.aborted) return { stopReason: "cancelled" };
      await this.lookAgainForWorkbench();
      this.core.bridge.touch(); // a prompt: the editor reopens while the model thinks, if it was parked
      const outlet = new TurnOutlet(this.peer, this.id, this.log);
      this.turnTokens = ZERO_TOKENS;
      try {
        const stopReason = await new Turn(this, outlet, ac.signal).run(prompt);
        return { stopReason: ac.signal.aborted ? "cancelled" : stopReason, usage: acpUsage(this.turnTokens) };
      } catch (err) {
        if (ac.signal.aborted) return { stopReason: "cancelled" };
        throw err;
      } finally {
        outlet.close();
      }
    } finally {
      if (!this.closed) this.refreshCommands();
      requestSignal.removeEventListener("abort", onRequestAbort);
      this.active.delete(ac);
      release();
    }
  }

  /** session/cancel: the running prompt and every queued one end as cancelled. */
  cancel(): void {
    for (const ac of this.active) ac.abort();
  }

  async close(): Promise<void> {
    this.cancel();
    await this.tail.catch(() => undefined);
    this.closed = true;
    this.#leave();
    await this.mcp?.close();
    await this.workbench?.close().catch((err: Error) => this.log.warn(`workbench close: ${err.message}`));
    await this.core.dispose();
  }
}
