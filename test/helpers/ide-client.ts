import { request } from "node:http";
import WebSocket from "ws";

/**
 * A Claude Code IDE protocol client that copies the real CLI's handshake: ws://127.0.0.1:<port>,
 * subprotocol `mcp`, header `x-claude-code-ide-authorization`, a CLI user-agent, no Origin.
 */

export interface Notification {
  method: string;
  params: any;
}

export class IdeClient {
  readonly ws: WebSocket;
  readonly notifications: Notification[] = [];
  /** Every frame received, parsed. */
  readonly frames: any[] = [];
  #nextId = 1;
  readonly #pending = new Map<number | string, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  readonly #waiters: { pred: (n: Notification) => boolean; resolve: (n: Notification) => void }[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on("message", (data) => {
      const msg = JSON.parse(String(data));
      this.frames.push(msg);
      if (msg.id !== undefined && msg.id !== null && this.#pending.has(msg.id)) {
        const p = this.#pending.get(msg.id)!;
        this.#pending.delete(msg.id);
        if (msg.error) p.reject(Object.assign(new Error(msg.error.message), { code: msg.error.code }));
        else p.resolve(msg.result);
      } else if (msg.method && msg.id === undefined) {
        const n = { method: msg.method, params: msg.params };
        this.notifications.push(n);
        for (const w of [...this.#waiters]) {
          if (w.pred(n)) {
            this.#waiters.splice(this.#waiters.indexOf(w), 1);
            w.resolve(n);
          }
        }
      }
    });
    this.closed = new Promise((resolve) => ws.on("close", (code, reason) => resolve({ code, reason: String(reason) })));
  }

  static connect(
    port: number,
    token: string,
    options: { protocols?: string[]; headers?: Record<string, string>; maxPayload?: number } = {},
  ): Promise<IdeClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}`, options.protocols ?? ["mcp"], {
        headers: {
          "x-claude-code-ide-authorization": token,
          "user-agent": "claude-code/2.1.332 (cli)",
          ...options.headers,
        },
        ...(options.maxPayload ? { maxPayload: options.maxPayload } : {}),
      });
      ws.once("open", () => resolve(new IdeClient(ws)));
      ws.once("error", reject);
      ws.once("unexpected-response", (_req, res) =>
        reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode })),
      );
    });
  }

  request(method: string, params: unknown = {}): Promise<any> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }

  notify(method: string, params: unknown = {}): void {
    this.ws.send(JSON.stringify({ jsonrpc: "2.0", method, params }));
  }

  call(name: string, args: Record<string, unknown> = {}): Promise<any> {
    return this.request("tools/call", {
      name,
      arguments: args,
      _meta: { "claudecode/toolUseId": `toolu_${this.#nextId}`, progressToken: this.#nextId },
    });
  }

  /** initialize -> initialized -> ide_connected -> tools/list, as the CLI does. */
  async handshake(): Promise<{ init: any; tools: any }> {
    const init = await this.request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: { roots: { listChanged: true }, elicitation: {} },
      clientInfo: { name: "claude-code", version: "2.1.332" },
    });
    this.notify("notifications/initialized");
    this.notify("ide_connected", { pid: process.pid });
    const tools = await this.request("tools/list");
    return { init, tools };
  }

  waitForNotification(method: string, pred: (params: any) => boolean = () => true): Promise<Notification> {
    const found = this.notifications.find((n) => n.method === method && pred(n.params));
    if (found) return Promise.resolve(found);
    return new Promise((resolve) =>
      this.#waiters.push({ pred: (n) => n.method === method && pred(n.params), resolve }),
    );
  }

  close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    this.ws.close();
    return this.closed.then(() => undefined);
  }
}

/**
 * One raw upgrade attempt with the given headers: the HTTP status (101 when upgraded) and, if it
 * upgraded, the socket is destroyed at once.
 */
export function rawUpgrade(
  port: number,
  headers: Record<string, string | undefined>,
): Promise<{ status: number; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const h: Record<string, string> = {
      connection: "Upgrade",
      upgrade: "websocket",
      "sec-websocket-version": "13",
      "sec-websocket-key": Buffer.from("0123456789abcdef").toString("base64"),
      host: `127.0.0.1:${port}`,
    };
    for (const [k, v] of Object.entries(headers)) {
      if (v === undefined) delete h[k];
      else h[k] = v;
    }
    const req = request({ host: "127.0.0.1", port, path: "/", headers: h, setHost: false });
    req.on("upgrade", (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, headers: res.headers });
    });
    req.on("response", (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, headers: res.headers });
    });
    req.on("error", reject);
    req.end();
  });
}

export function textsOf(result: any): string[] {
  return (result?.content ?? []).map((c: any) => c.text);
}

export function jsonOf(result: any): any {
  return JSON.parse(result.content[0].text);
}
