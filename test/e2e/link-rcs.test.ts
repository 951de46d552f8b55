import assert from "node:assert/strict";
import { once } from "node:events";
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type WebSocket, WebSocketServer } from "ws";
import { repoRoot, spawnCcb } from "../helpers/cli.ts";
import { stopProcess, waitForOutput } from "../helpers/process.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

const RCS_TOKEN = "rcs-account-token-abcdef";
const SECRET = "env-secret-0123456789";

/** A fake Remote Control Server: the registration REST endpoint and the relay WebSocket. */
class FakeRcs {
  registrations: { auth: string | undefined; body: Record<string, unknown> }[] = [];
  connections: { protocol: string; identify?: Record<string, unknown> }[] = [];
  keepAlives = 0;
  refuse = false;
  sockets: WebSocket[] = [];
  readonly #waiters: { pred: () => boolean; resolve: () => void }[] = [];
  readonly server = createServer((req, res) => this.#rest(req, res));
  readonly wss = new WebSocketServer({ noServer: true, handleProtocols: (p) => [...p][0] ?? false });
  url = "";

  async start(): Promise<void> {
    this.server.on("upgrade", (req, socket, head) => {
      if (req.url !== "/acp/ws") return socket.destroy();
      const proto = String(req.headers["sec-websocket-protocol"] ?? "");
      if (proto !== `rcs.auth.${Buffer.from(SECRET).toString("base64url")}`) {
        socket.end("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n");
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        const conn: { protocol: string; identify?: Record<string, unknown> } = { protocol: ws.protocol };
        this.connections.push(conn);
        this.sockets.push(ws);
        ws.on("message", (d) => {
          const msg = JSON.parse(d.toString()) as Record<string, unknown>;
          if (msg.type === "identify") {
            conn.identify = msg;
            ws.send(JSON.stringify({ type: "identified", agent_id: msg.agent_id }));
          } else if (msg.type === "keep_alive") this.keepAlives++;
          else this.frames.push(msg);
          this.#check();
        });
        this.#check();
      });
    });
    this.server.listen(0, "127.0.0.1");
    await once(this.server, "listening");
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  frames: Record<string, unknown>[] = [];

  #rest(req: IncomingMessage, res: import("node:http").ServerResponse): void {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      if (req.method === "POST" && req.url === "/v1/environments/bridge") {
        if (this.refuse || req.headers.authorization !== `Bearer ${RCS_TOKEN}`) {
          res.writeHead(403, { "content-type": "application/json" }).end(JSON.stringify({ error: "token revoked" }));
          return;
        }
        this.registrations.push({ auth: req.headers.authorization, body: JSON.parse(body) });
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ environment_id: "env-1", environment_secret: SECRET, status: "active" }));
        this.#check();
        return;
      }
      res.writeHead(404).end();
    });
  }

  waitFor(pred: () => boolean): Promise<void> {
    if (pred()) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ pred, resolve }));
  }

  #check(): void {
    for (const w of [...this.#waiters]) {
      if (w.pred()) {
        this.#waiters.splice(this.#waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

describe("ccb link with a remote control server", () => {
  const rcs = new FakeRcs();
  const home = tmpdirFixture({ prefix: "ccb-rcs-" });
  let link: ReturnType<typeof spawnCcb>;

  before(async () => {
    await rcs.start();
    link = spawnCcb(
      [
        "link",
        "--port",
        "0",
        "--host",
        "127.0.0.1",
        "--debug",
        "--",
        process.execPath,
        join(repoRoot, "test/fixtures/echo-agent.mjs"),
      ],
      {
        cwd: repoRoot,
        env: {
          ...process.env,
          ACP_AUTH_TOKEN: "local-token-xyz-0123456789",
          ACP_RCS_URL: rcs.url,
          ACP_RCS_TOKEN: RCS_TOKEN,
          CCB_RCS_KEEPALIVE_MS: "100",
          CCB_RCS_BACKOFF_MS: "50",
          XDG_STATE_HOME: join(home.path, "state"),
          XDG_CONFIG_HOME: join(home.path, "config"),
        },
      },
    );
    await waitForOutput(link, /listening on/);
  });
  after(async () => {
    await stopProcess(link);
    await rcs.close();
    home.cleanup();
  });

  it("registers, connects with the rcs.auth subprotocol and identifies", async () => {
    await rcs.waitFor(() => rcs.connections[0]?.identify !== undefined);
    assert.equal(rcs.registrations.length, 1);
    const body = rcs.registrations[0]?.body ?? {};
    assert.equal(body.worker_type, "acp");
    assert.equal(typeof body.machine_name, "string");
    assert.equal(typeof body.bridge_id, "string");
    assert.equal(rcs.connections[0]?.identify?.agent_id, "env-1");
  });

  it("relays JSON-RPC both ways and sends keep-alives", async () => {
    const ws = rcs.sockets[0] as WebSocket;
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: 42, method: "echo", params: { hello: "rcs" } }));
    await rcs.waitFor(() => rcs.frames.some((f) => f.id === 42));
    assert.deepEqual(
      rcs.frames.find((f) => f.id === 42),
      { jsonrpc: "2.0", id: 42, result: { hello: "rcs" } },
    );
    await rcs.waitFor(() => rcs.keepAlives >= 2);
  });

  it("reconnects after a drop, reusing the registration", async () => {
    rcs.sockets[0]?.terminate();
    await rcs.waitFor(() => rcs.connections.length >= 2 && rcs.connections[1]?.identify !== undefined);
    assert.equal(rcs.registrations.length, 1, "no second registration");
    const ws = rcs.sockets[1] as WebSocket;
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: 43, method: "echo", params: { again: true } }));
    await rcs.waitFor(() => rcs.frames.some((f) => f.id === 43));
  });

  it("logs frames with tokens redacted under --debug", () => {
    const dir = join(home.path, "state/ccb");
    const file = readdirSync(dir).find((f) => f.startsWith("link-frames-"));
    assert.ok(file, "a frame log exists");
    const text = readFileSync(join(dir, file), "utf8");
    assert.match(text, /client->agent .*"id":42/);
    assert.doesNotMatch(text, /env-secret-0123456789|local-token-xyz/);
  });
});

describe("ccb link when the remote control server refuses", () => {
  it("exits with a clear error", async () => {
    const rcs = new FakeRcs();
    rcs.refuse = true;
    await rcs.start();
    try {
      const child = spawnCcb(
        [
          "link",
          "--port",
          "0",
          "--host",
          "127.0.0.1",
          "--",
          process.execPath,
          join(repoRoot, "test/fixtures/echo-agent.mjs"),
        ],
        {
          cwd: repoRoot,
          env: { ...process.env, ACP_AUTH_TOKEN: "t-0123456789abcdef", ACP_RCS_URL: rcs.url, ACP_RCS_TOKEN: "bad" },
        },
      );
      let err = "";
      child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
      const [code] = (await once(child, "exit")) as [number];
      assert.equal(code, 1);
      assert.match(err, /refused the registration \(HTTP 403\)/);
      assert.match(err, /ACP_RCS_TOKEN/);
    } finally {
      await rcs.close();
    }
  });
});
