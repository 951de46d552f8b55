import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import * as vscode from "vscode";
import {
  BRIDGE_CONFIG_FILE,
  BRIDGE_PROTOCOL_VERSION,
  BridgeConfig,
  type BridgeEvent,
  CLOSE_BAD_TOKEN,
  type ExtensionFrame,
  extensionMethods,
  isExtensionMethod,
  PING_INTERVAL_MS,
  parseFrame,
  ServerFrame,
  type ServerMethod,
  type ServerParamsOf,
  type ServerResultOf,
  serverMethods,
} from "../../src/editor-wire/contract.ts";
import { PendingCalls } from "../../src/editor-wire/pending.ts";
import { CheckpointsView } from "./checkpoints-view.ts";
import { flushCompileCacheSoon } from "./compile-cache.ts";
import { trackPersonWindow } from "./consent.ts";
import { BridgeError, range, uriPath } from "./convert.ts";
import { DebugBridge, setDebugLog } from "./debug.ts";
import { DiffManager, PROPOSED_SCHEME, setDiffLog } from "./diff.ts";
import { baseHandlers, type Handlers, setUserExtensionsDir } from "./handlers.ts";
import { setModelGuardLog } from "./model-guard.ts";
import { moveHandlers } from "./move.ts";
import { executeInNotebook } from "./notebook.ts";
import { powerHandlers } from "./powers.ts";
import { TaskBridge } from "./tasks.ts";
import { SharedTerminals } from "./terminals.ts";

/**
 * The bridge extension: connects this extension host to ccb's /bridge WebSocket (token from the
 * 0600 config file ccb wrote next to the extension, never from the environment, so terminals do
 * not inherit it), reconnects with backoff, and serves the contract's methods.
 */
export function activate(context: vscode.ExtensionContext): void {
  setUserExtensionsDir(dirname(context.extensionPath));
  context.subscriptions.push(trackPersonWindow());
  const client = new BridgeClient(context);
  context.subscriptions.push(client);
  client.start();
  flushCompileCacheSoon();
}

export function deactivate(): void {}

class BridgeClient implements vscode.Disposable {
  readonly #clientId = randomUUID();
  readonly #out = vscode.window.createOutputChannel("ccb bridge");
  #ws: WebSocket | undefined;
  #attempt = 0;
  #stopped = false;
  #reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  #pingTimer: ReturnType<typeof setInterval> | undefined;
  /** The requests this host sent to ccb (workspace.resolve, terminals, the changes view) that wait for the answer. */
  readonly #pending = new PendingCalls();
  readonly #diffs: DiffManager;
  readonly #terminals: SharedTerminals;
  readonly #debug = new DebugBridge();
  readonly #tasks: TaskBridge;
  readonly #changes: CheckpointsView;
  readonly #handlers: Handlers;
  readonly #disposables: vscode.Disposable[] = [];
  #lastSelection = "";
  #selectionTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly context: vscode.ExtensionContext) {
    setModelGuardLog((line) => this.#out.appendLine(line));
    setDiffLog((line) => this.#out.appendLine(line));
    setDebugLog((line) => this.#out.appendLine(line));
    this.#diffs = new DiffManager((id) => this.#event({ type: "diffClosed", id }));
    this.#terminals = new SharedTerminals(this);
    const resolve = async (path: string) => (await this.request("workspace.resolve", { path })).path;
    this.#tasks = new TaskBridge(resolve);
    this.#changes = new CheckpointsView((method, params) => this.request(method, params));
    this.#handlers = {
      ...baseHandlers,
      "diff.open": (p) => this.#diffs.open(p),
      "diff.close": async (p) => ({ closed: await this.#diffs.close(p.id) }),
      "diff.closeAll": async (p) => ({ closed: await this.#diffs.closeAll(p.ids) }),
      "notebook.executeCode": (p) => executeInNotebook(p.code),
      "terminal.attach": async (p) => ({
        attached: this.#terminals.attach(p.id, p.title, p.backlog, p.focus ?? false),
      }),
      "terminal.list": async () => ({ terminals: this.#terminals.list() }),
      "workbench.activity": async () => ({
        tasks: vscode.tasks.taskExecutions.length,
        debugSessions: this.#debug.live,
        reviews: this.#diffs.pending,
        dirty:
          vscode.workspace.textDocuments.filter((d) => d.isDirty && d.uri.scheme !== PROPOSED_SCHEME).length +
          vscode.workspace.notebookDocuments.filter((n) => n.isDirty).length,
        ...(await this.#otherTerminals().then((names) => ({ terminals: names.length, terminalNames: names }))),
      }),
      ...powerHandlers(resolve),
      ...moveHandlers(resolve),
      ...this.#debug.handlers(),
      ...this.#tasks.handlers(),
    };
    this.#disposables.push(
      this.#out,
      vscode.window.onDidChangeWindowState((s) => this.#send({ type: "focus", focused: s.focused })),
      vscode.window.onDidChangeTextEditorSelection((e) => this.#selectionChanged(e.textEditor)),
      vscode.window.onDidChangeActiveTextEditor((e) =>
        this.#event({ type: "activeEditorChanged", path: e ? uriPath(e.document.uri) : null }),
      ),
      vscode.languages.onDidChangeDiagnostics((e) =>
        this.#event({ type: "diagnosticsChanged", paths: e.uris.map(uriPath) }),
      ),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document.uri.scheme === "file")
          this.#event({
            type: "documentChanged",
            path: uriPath(e.document.uri),
            version: e.document.version,
            isDirty: e.document.isDirty,
          });
      }),
      vscode.commands.registerCommand("ccb.sendSelection", () => this.#sendSelection()),
      // The workbench's terminals and which core PTY each mirrors (for vscode_execute_command and tests).
      vscode.commands.registerCommand("ccb.terminals.list", () => this.#terminals.list()),
      vscode.commands.registerCommand("ccb.terminal.new", () => this.#terminals.createShared()),
    );
  }

  start(): void {
    this.#connect();
  }

  #config(): BridgeConfig | undefined {
    try {
      return BridgeConfig.parse(JSON.parse(readFileSync(join(this.context.extensionPath, BRIDGE_CONFIG_FILE), "utf8")));
    } catch (err) {
      this.#out.appendLine(`no bridge configuration: ${(err as Error).message}`);
      return undefined;
    }
  }

  #connect(): void {
    if (this.#stopped) return;
    const cfg = this.#config();
    if (!cfg) {
      this.#retry();
      return;
    }
    let ws: WebSocket;
    try {
      ws = new WebSocket(cfg.url);
    } catch (err) {
      this.#out.appendLine(`connect failed: ${(err as Error).message}`);
      this.#retry();
      return;
    }
    this.#ws = ws;
    ws.onopen = () => {
      ws.send(
        JSON.stringify({
          type: "hello",
          protocol: BRIDGE_PROTOCOL_VERSION,
          token: cfg.token,
          clientId: this.#clientId,
          focused: vscode.window.state.focused,
          extensionVersion: String((this.context.extension.packageJSON as { version?: string }).version ?? ""),
          vscodeVersion: vscode.version,
          workspaceFolders: (vscode.workspace.workspaceFolders ?? []).map((f) => uriPath(f.uri)),
        }),
      );
    };
    ws.onmessage = (m) => {
      if (typeof m.data !== "string") return;
      const frame = parseFrame(ServerFrame, m.data);
      if (!frame) return this.#out.appendLine("ignored an invalid frame from ccb");
      this.#onFrame(frame);
    };
    ws.onclose = (e) => {
      if (this.#ws !== ws) return;
      this.#ws = undefined;
      if (this.#pingTimer) clearInterval(this.#pingTimer);
      this.#pending.failAll(() => new Error("ccb disconnected"));
      this.#out.appendLine(`disconnected (${e.code} ${e.reason})`);
      if (e.code === CLOSE_BAD_TOKEN) this.#attempt = Math.max(this.#attempt, 4); // a stale token: the config file is rewritten on relaunch
      this.#retry();
    };
    ws.onerror = () => undefined; // onclose follows
  }

  #retry(): void {
    if (this.#stopped || this.#reconnectTimer) return;
    const delay = Math.min(5_000, 200 * 2 ** this.#attempt) * (0.75 + Math.random() * 0.5);
    this.#attempt++;
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = undefined;
      this.#connect();
    }, delay);
  }

  #onFrame(frame: ServerFrame): void {
    switch (frame.type) {
      case "welcome":
        this.#attempt = 0;
        this.#out.appendLine(`connected to ccb ${frame.serverVersion} (${frame.role})`);
        if (this.#pingTimer) clearInterval(this.#pingTimer);
        this.#pingTimer = setInterval(() => this.#send({ type: "ping" }), frame.pingIntervalMs || PING_INTERVAL_MS);
        this.#changes.connected();
        return;
      case "role":
        this.#out.appendLine(`role: ${frame.role}`);
        return;
      case "pong":
        return;
      case "request":
        void this.#serve(frame.id, frame.method, frame.params);
        return;
      case "response":
        if (frame.error)
          this.#pending.reject(frame.id, new BridgeError(frame.error.code, frame.error.message, frame.error.hint));
        else this.#pending.resolve(frame.id, frame.result);
        return;
      case "event": {
        const ev = frame.event;
        if (ev.type === "terminalData") this.#terminals.data(ev.id, ev.data);
        else if (ev.type === "terminalExit") this.#terminals.exit(ev.id, ev.exitCode);
        else if (ev.type === "checkpointsChanged") this.#changes.connected();
        return;
      }
      default: {
        frame satisfies never;
        return;
      }
    }
  }

  async #serve(id: number, method: string, params: unknown): Promise<void> {
    try {
      if (!isExtensionMethod(method)) throw new BridgeError("INVALID_ARGUMENT", `Unknown method ${method}`);
      const parsed = extensionMethods[method].params.safeParse(params);
      if (!parsed.success)
        throw new BridgeError(
          "INVALID_ARGUMENT",
          `Invalid params for ${method}: ${parsed.error.issues[0]?.message ?? ""}`,
        );
      const handler = this.#handlers[method] as (p: unknown) => Promise<unknown>;
      const result = await handler(parsed.data);
      this.#send({ type: "response", id, result: result ?? null });
    } catch (err) {
      const e =
        err instanceof BridgeError
          ? err
          : new BridgeError("BRIDGE_ERROR", err instanceof Error ? err.message : String(err));
      this.#send({
        type: "response",
        id,
        error: { code: e.code, message: e.message, ...(e.hint ? { hint: e.hint } : {}) },
      });
    }
  }

  /** A request to ccb; its answer is checked against the contract here, where it comes off the wire. */
  async request<M extends ServerMethod>(method: M, params: ServerParamsOf<M>): Promise<ServerResultOf<M>> {
    const ws = this.#ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) throw new Error("not connected to ccb");
    const answer = await this.#pending.call((id) => ws.send(JSON.stringify({ type: "request", id, method, params })));
    const r = serverMethods[method].result.safeParse(answer);
    if (!r.success) throw new Error(`ccb answered ${method} with an unexpected shape`);
    return r.data as ServerResultOf<M>;
  }

  #send(frame: ExtensionFrame): void {
    const ws = this.#ws;
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(frame));
  }

  #event(event: BridgeEvent): void {
    this.#send({ type: "event", event });
  }

  /**
   * Terminals with a live shell process of the workbench's own (its pty host's: they end with the
   * window). ccb's PTY mirrors and task terminals are pseudoterminals, with no real process id: ccb's
   * PTYs live in ccb, and running tasks are counted as tasks.
   */
  async #otherTerminals(): Promise<string[]> {
    const live = vscode.window.terminals.filter((t) => t.exitStatus === undefined);
    const pids = await Promise.all(
      live.map((t) =>
        Promise.race([
          Promise.resolve(t.processId).then(
            (pid) => pid,
            () => undefined,
          ),
          new Promise<undefined>((r) => setTimeout(() => r(undefined), 1_000)),
        ]),
      ),
    );
    // A pseudoterminal has none, or -1 once its "process" is ready: only a real pid is a shell.
    return live.flatMap((t, i) => {
      const pid = pids[i];
      return typeof pid === "number" && pid > 0 ? [`${t.name} (pid ${pid})`] : [];
    });
  }

  #selectionChanged(editor: vscode.TextEditor): void {
    if (editor.document.uri.scheme !== "file") return;
    if (this.#selectionTimer) clearTimeout(this.#selectionTimer);
    this.#selectionTimer = setTimeout(() => {
      const sel = editor.selection;
      const ev = {
        type: "selectionChanged" as const,
        path: uriPath(editor.document.uri),
        text: editor.document.getText(sel),
        selection: range(sel),
        isEmpty: sel.isEmpty,
      };
      const key = JSON.stringify(ev);
      if (key === this.#lastSelection) return;
      this.#lastSelection = key;
      this.#event(ev);
    }, 300);
  }

  #sendSelection(): void {
    const e = vscode.window.activeTextEditor;
    if (e?.document.uri.scheme !== "file") return;
    const sel = e.selection;
    const endLine = sel.end.character === 0 && sel.end.line > sel.start.line ? sel.end.line - 1 : sel.end.line;
    this.#event({ type: "atMentioned", path: uriPath(e.document.uri), lineStart: sel.start.line, lineEnd: endLine });
  }

  dispose(): void {
    this.#stopped = true;
    if (this.#reconnectTimer) clearTimeout(this.#reconnectTimer);
    if (this.#pingTimer) clearInterval(this.#pingTimer);
    this.#ws?.close(1000);
    this.#diffs.dispose();
    this.#terminals.dispose();
    this.#debug.dispose();
    this.#tasks.dispose();
    this.#changes.dispose();
    for (const d of this.#disposables) d.dispose();
  }
}
