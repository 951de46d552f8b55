import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { spawnCcb } from "./cli.ts";

export type V2Update = acp.UpdateSessionNotification;

/**
 * A spawned `ccb acp` driven by the SDK's own ACP v2 client (`client()` over `ndJsonStream`):
 * it records every `session/update`, answers permission requests with `onPermission`.
 */
export class V2Harness {
  readonly updates: V2Update[] = [];
  readonly permissionRequests: acp.RequestPermissionRequest[] = [];
  stderr = "";
  private waiters: { pred: (u: V2Update) => boolean; resolve: (u: V2Update) => void }[] = [];

  private constructor(
    readonly child: ChildProcess,
    readonly conn: acp.ClientConnection,
  ) {}

  get agent(): acp.ClientContext {
    return this.conn.agent;
  }

  static start(o: {
    apiUrl: string;
    dataDir: string;
    onPermission?: (p: acp.RequestPermissionRequest) => acp.RequestPermissionResponse;
  }): V2Harness {
    const child = spawnCcb(["acp"], {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: o.dataDir,
        CCB_DATA_DIR: o.dataDir,
        XDG_CONFIG_HOME: join(o.dataDir, "config"),
        CCB_LOG_LEVEL: process.env.ACP_TEST_LOG ?? "warn",
        ANTHROPIC_BASE_URL: o.apiUrl,
        ANTHROPIC_API_KEY: "sk-ant-test-key-0123456789",
      },
    });
    let h!: V2Harness;
    child.stderr!.on("data", (d: Buffer) => {
      h.stderr += d.toString("utf8");
      if (process.env.ACP_TEST_LOG) process.stderr.write(d);
    });
    const app = acp
      .client({ name: "ccb-v2-test" })
      .onNotification(acp.methods.client.session.update, ({ params }) => h.onUpdate(params))
      .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
        h.permissionRequests.push(params);
        return o.onPermission ? o.onPermission(params) : { outcome: { outcome: "cancelled" } };
      });
    const conn = app.connect(
      acp.ndJsonStream(
        Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
        Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
      ),
    );
    h = new V2Harness(child, conn);
    return h;
  }

  private onUpdate(u: V2Update): void {
    this.updates.push(u);
    for (const w of [...this.waiters])
      if (w.pred(u)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(u);
      }
  }

  /** The next update (from now on, or already received at index >= `from`) matching `pred`. */
  waitFor(pred: (u: V2Update) => boolean, from = this.updates.length): Promise<V2Update> {
    const seen = this.updates.slice(from).find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ pred, resolve }));
  }

  /** Send a prompt; resolves with its acknowledgment and the idle state that ended the turn. */
  async prompt(sessionId: string, text: string): Promise<{ messageId: string; stopReason: unknown; from: number }> {
    const from = this.updates.length;
    const ack = await this.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text }],
    });
    const idle = await this.waitFor((u) => isIdle(u, sessionId), from);
    return { messageId: ack.messageId, stopReason: (idle.update as { stopReason?: unknown }).stopReason, from };
  }

  /** The text of the agent's message chunks since update index `from`. */
  textSince(sessionId: string, from: number): string {
    return this.updates
      .slice(from)
      .filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === "agent_message_chunk")
      .map((u) => (u.update as { content: { text?: string } }).content.text ?? "")
      .join("");
  }

  async close(): Promise<void> {
    this.child.stdin?.end();
    if (this.child.exitCode === null) await new Promise((r) => this.child.once("exit", r));
  }
}

export function isIdle(u: V2Update, sessionId: string): boolean {
  return (
    u.sessionId === sessionId &&
    u.update.sessionUpdate === "state_update" &&
    (u.update as { state?: string }).state === "idle" &&
    (u.update as { stopReason?: unknown }).stopReason != null
  );
}

/** The processes below `pid` (children, grandchildren...), read from /proc. */
export function descendants(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parent.set(Number(name), Number(fields[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [child, pp] of parent) {
      if (pp !== p) continue;
      out.push(child);
      walk(child);
    }
  };
  walk(pid);
  return out;
}
