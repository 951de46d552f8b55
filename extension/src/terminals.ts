import * as vscode from "vscode";
import type { ServerMethod, ServerParamsOf, ServerResultOf } from "../../src/editor-wire/contract.ts";

export interface ServerCaller {
  request<M extends ServerMethod>(method: M, params: ServerParamsOf<M>): Promise<ServerResultOf<M>>;
}

/**
 * A workbench terminal backed by one of ccb's core PTYs: either mirroring a terminal a tool created
 * (attach) or created here by the person (the "ccb shared terminal" profile), which ccb then
 * creates with origin "workbench" so tools see it too.
 */
class SharedPty implements vscode.Pseudoterminal {
  readonly #write = new vscode.EventEmitter<string>();
  readonly #close = new vscode.EventEmitter<number | undefined>();
  readonly onDidWrite = this.#write.event;
  readonly onDidClose = this.#close.event;
  coreId: string | undefined;
  #pending: string[] = [];

  constructor(
    private readonly terms: SharedTerminals,
    coreId?: string,
    private readonly backlog = "",
  ) {
    this.coreId = coreId;
  }

  open(dims: vscode.TerminalDimensions | undefined): void {
    if (this.coreId) {
      if (this.backlog) this.#write.fire(this.backlog);
      for (const d of this.#pending) this.#write.fire(d);
      this.#pending = [];
      return;
    }
    const cols = dims?.columns ?? 80;
    const rows = dims?.rows ?? 24;
    this.terms.server
      .request("terminal.create", { cols, rows })
      .then((r) => {
        this.coreId = r.id;
        this.terms.register(r.id, this);
      })
      .catch((err: Error) => {
        this.#write.fire(`\r\nccb could not start a shared terminal: ${err.message}\r\n`);
        this.#close.fire(1);
      });
  }

  output(data: string): void {
    this.#write.fire(data);
  }

  exited(code: number | null): void {
    this.#write.fire(`\r\n[process exited${code === null ? "" : ` with code ${code}`}]\r\n`);
    this.#close.fire(code ?? 0);
  }

  handleInput(data: string): void {
    if (this.coreId) void this.terms.server.request("terminal.input", { id: this.coreId, data }).catch(() => undefined);
  }

  setDimensions(d: vscode.TerminalDimensions): void {
    if (this.coreId)
      void this.terms.server
        .request("terminal.resize", { id: this.coreId, cols: d.columns, rows: d.rows })
        .catch(() => undefined);
  }

  close(): void {
    // Closing the panel tab ends a terminal the person created here; a tool's terminal keeps running for the tool.
    if (this.coreId && this.createdHere)
      void this.terms.server.request("terminal.close", { id: this.coreId }).catch(() => undefined);
    if (this.coreId) this.terms.unregister(this.coreId);
  }

  get createdHere(): boolean {
    return this.backlog === "" && this.#createdHere;
  }
  #createdHere = false;
  markCreatedHere(): this {
    this.#createdHere = true;
    return this;
  }
}

export class SharedTerminals {
  readonly #byId = new Map<string, { pty: SharedPty; terminal?: vscode.Terminal }>();
  readonly #disposables: vscode.Disposable[] = [];

  constructor(readonly server: ServerCaller) {
    this.#disposables.push(
      vscode.window.registerTerminalProfileProvider("ccb.terminal", {
        provideTerminalProfile: () =>
          new vscode.TerminalProfile({ name: "ccb", pty: new SharedPty(this).markCreatedHere() }),
      }),
    );
  }

  /** A new terminal in the panel backed by a core PTY (command "ccb: New shared terminal"). */
  createShared(): string {
    const terminal = vscode.window.createTerminal({ name: "ccb", pty: new SharedPty(this).markCreatedHere() });
    terminal.show(true);
    return terminal.name;
  }

  register(id: string, pty: SharedPty, terminal?: vscode.Terminal): void {
    this.#byId.set(id, { pty, ...(terminal ? { terminal } : {}) });
  }
  unregister(id: string): void {
    this.#byId.delete(id);
  }

  /** Show a core terminal a tool created. */
  attach(id: string, title: string, backlog: string, focus: boolean): boolean {
    if (this.#byId.has(id)) return false;
    const pty = new SharedPty(this, id, backlog);
    const terminal = vscode.window.createTerminal({ name: title, pty });
    this.register(id, pty, terminal);
    if (focus) terminal.show(true);
    return true;
  }

  data(id: string, data: string): void {
    this.#byId.get(id)?.pty.output(data);
  }
  exit(id: string, code: number | null): void {
    this.#byId.get(id)?.pty.exited(code);
  }

  list(): { name: string; coreId?: string }[] {
    return vscode.window.terminals.map((t) => {
      const pty = (t.creationOptions as Partial<vscode.ExtensionTerminalOptions>).pty;
      const entry = [...this.#byId.entries()].find(([, v]) => v.terminal === t || (pty !== undefined && v.pty === pty));
      return { name: t.name, ...(entry ? { coreId: entry[0] } : {}) };
    });
  }

  dispose(): void {
    for (const d of this.#disposables) d.dispose();
  }
}
