import type { ChildProcess } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { spawnCcb } from "./cli.ts";

export type Update = acp.SessionNotification;
export type PermissionHandler = (
  params: acp.RequestPermissionRequest,
  signal: AbortSignal,
) => Promise<acp.RequestPermissionResponse> | acp.RequestPermissionResponse;

export interface AgentHarnessOptions {
  apiUrl?: string;
  /** Data folder (sessions, permission rules); shared across restarts in a test. */
  dataDir: string;
  env?: Record<string, string>;
  clientCapabilities?: acp.ClientCapabilities;
  onPermission?: PermissionHandler;
  /** CLI arguments (default ["acp"]; Zed uses ["--acp"]). */
  argv?: string[];
  /** Extra client request handlers (fs/*, terminal/*). */
  configure?: (client: acp.ClientApp) => acp.ClientApp;
}

/**
 * A spawned `ccb acp` driven by the SDK's own client (`acp.client` over `ndJsonStream`). Every
 * stdout line is also checked to be a JSON-RPC frame (`strayStdout` collects anything else).
 */
export class AgentHarness {
  readonly updates: Update[] = [];
  readonly strayStdout: string[] = [];
  /** Every JSON-RPC frame the agent wrote, as parsed from stdout (before the SDK client validates it). */
  readonly frames: any[] = [];
  readonly permissionRequests: acp.RequestPermissionRequest[] = [];
  stderr = "";
  private waiters: { pred: (u: Update) => boolean; resolve: (u: Update) => void }[] = [];
  private permWaiters: ((p: acp.RequestPermissionRequest) => void)[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(
    readonly child: ChildProcess,
    readonly conn: acp.ClientConnection,
  ) {
    this.exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  }

  get agent(): acp.ClientContext {
    return this.conn.agent;
  }

  static start(o: AgentHarnessOptions): AgentHarness {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: o.dataDir,
      CCB_DATA_DIR: o.dataDir,
      XDG_CONFIG_HOME: join(o.dataDir, "config"),
      CCB_LOG_LEVEL: process.env.ACP_TEST_LOG ?? "warn",
      CCB_RETRY_BASE_MS: "20",
      ...(o.apiUrl ? { ANTHROPIC_BASE_URL: o.apiUrl, ANTHROPIC_API_KEY: "sk-ant-test-key-0123456789" } : {}),
      ...o.env,
    };
    const child = spawnCcb(o.argv ?? ["acp"], { env });
    let h!: AgentHarness;
    const tap = new PassThrough();
    let buf = "";
    child.stdout!.on("data", (d: Buffer) => {
      buf += d.toString("utf8");
      let i: number;
      while ((i = buf.indexOf("\n")) !== -1) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (!line.trim()) continue;
        try {
          const m = JSON.parse(line);
          if (m?.jsonrpc !== "2.0") h.strayStdout.push(line);
          else if (line.length < 1_000_000) h.onFrame(m);
        } catch {
          h.strayStdout.push(line);
        }
      }
      tap.write(d);
    });
    child.stdout!.on("end", () => tap.end());
    child.stderr!.on("data", (d: Buffer) => {
      h.stderr += d.toString("utf8");
      if (process.env.ACP_TEST_LOG) process.stderr.write(d);
    });
    let app = acp
      .client({ name: "ccb-test" })
      .onNotification(acp.methods.client.session.update, ({ params }) => h.onUpdate(params))
      .onRequest(acp.methods.client.session.requestPermission, async ({ params, signal }) => {
        h.permissionRequests.push(params);
        for (const w of h.permWaiters.splice(0)) w(params);
        if (!o.onPermission) return { outcome: { outcome: "cancelled" } };
        return o.onPermission(params, signal);
      });
    if (o.configure) app = o.configure(app);
    const stream = acp.ndJsonStream(
      Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
      Readable.toWeb(tap) as ReadableStream<Uint8Array>,
    );
    const conn = app.connect(stream);
    h = new AgentHarness(child, conn);
    return h;
  }

  private frameWaiters: { pred: (f: any) => boolean; resolve: (f: any) => void }[] = [];

  private onFrame(f: any): void {
    this.frames.push(f);
    for (const w of [...this.frameWaiters]) {
      if (w.pred(f)) {
        this.frameWaiters.splice(this.frameWaiters.indexOf(w), 1);
        w.resolve(f);
      }
    }
  }

  /** The first frame the agent wrote (or writes) that matches. */
  waitForFrame(pred: (f: any) => boolean): Promise<any> {
    const found = this.frames.find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => this.frameWaiters.push({ pred, resolve }));
  }

  private onUpdate(u: Update): void {
    this.updates.push(u);
    for (const w of [...this.waiters]) {
      if (w.pred(u)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(u);
      }
    }
  }

  waitForUpdate(pred: (u: Update) => boolean): Promise<Update> {
    const found = this.updates.find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ pred, resolve }));
  }

  waitForPermission(): Promise<acp.RequestPermissionRequest> {
    return new Promise((resolve) => this.permWaiters.push(resolve));
  }

  async initialize(caps: acp.ClientCapabilities = {}): Promise<acp.InitializeResponse> {
    return this.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: caps,
      clientInfo: { name: "ccb-test", version: "1" },
    });
  }

  async newSession(cwd: string, mcpServers: acp.McpServer[] = []): Promise<acp.NewSessionResponse> {
    return this.agent.request(acp.methods.agent.session.new, { cwd, mcpServers });
  }

  prompt(sessionId: string, text: string): Promise<acp.PromptResponse> {
    return this.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  }

  updatesOf(sessionId: string, kind?: string): acp.SessionUpdate[] {
    return this.updates
      .filter((u) => u.sessionId === sessionId && (!kind || u.update.sessionUpdate === kind))
      .map((u) => u.update);
  }

  textOf(sessionId: string): string {
    return this.updatesOf(sessionId, "agent_message_chunk")
      .map((u) =>
        (u as { content: { type: string; text?: string } }).content.type === "text"
          ? (u as { content: { text: string } }).content.text
          : "",
      )
      .join("");
  }

  async close(): Promise<void> {
    this.conn.close();
    this.child.stdin?.end();
    const t = setTimeout(() => this.child.kill("SIGKILL"), 5000);
    if (this.child.exitCode === null && this.child.signalCode === null) await this.exited;
    clearTimeout(t);
  }

  kill9(): Promise<unknown> {
    this.child.kill("SIGKILL");
    this.conn.close();
    return this.exited;
  }
}

export function tempDataDir(): { path: string; cleanup(): void } {
  const path = realpathSync(mkdtempSync(join(tmpdir(), "ccb-acp-data-")));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}
