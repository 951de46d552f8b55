import assert from "node:assert/strict";
import { once } from "node:events";
import { after, afterEach, before, describe, it } from "node:test";
import WebSocket from "ws";
import { type Logger, silentLogger } from "../../../src/core/log.ts";
import { Gateway } from "../../../src/net/gateway.ts";
import type { OriginPolicy } from "../../../src/net/origin.ts";
import type { CdpSession } from "../../../src/platform/cdp-pipe.ts";
import { LIMITS } from "../../../src/stream/limits.ts";
import type { StreamEvent } from "../../../src/stream/protocol.ts";
import { Screencast } from "../../../src/stream/screencast.ts";
import { createStreamEndpoint, type StreamEndpoint, streamPolicy } from "../../../src/stream/server.ts";
import { newToken } from "../../../src/util/secrets.ts";
import { until } from "../../helpers/process.ts";

/**
 * The page's DevTools session as the real Screencast sees it (src/platform/cdp-pipe.ts): it records
 * every command and can emit events. The real browser is driven in test/e2e/stream*.test.ts.
 */
class DevToolsRecorder implements CdpSession {
  readonly sent: { method: string; params?: Record<string, unknown> }[] = [];
  readonly #listeners = new Map<string, ((params: Record<string, unknown>) => void)[]>();
  /** Commands that fail (as a crashed target answers). */
  readonly failing = new Set<string>();
  send(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>> {
    this.sent.push(params === undefined ? { method } : { method, params });
    return this.failing.has(method) ? Promise.reject(new Error(`${method}: Target closed`)) : Promise.resolve({});
  }
  on(event: string, listener: (params: Record<string, unknown>) => void): void {
    this.#listeners.set(event, [...(this.#listeners.get(event) ?? []), listener]);
  }
  emit(event: string, params: Record<string, unknown>): void {
    for (const l of this.#listeners.get(event) ?? []) l(params);
  }
  methods(): string[] {
    return this.sent.map((s) => s.method);
  }
}

/** A viewer's socket with its text events in order. */
interface Viewer {
  ws: WebSocket;
  events: StreamEvent[];
  frames: Buffer[];
  next(): Promise<StreamEvent>;
}

type Opened = { viewer: Viewer } | { status: number; body: string };

function open(url: string, options: WebSocket.ClientOptions = {}): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, options);
    const events: StreamEvent[] = [];
    const frames: Buffer[] = [];
    let read = 0;
    let wake: (() => void) | undefined;
    ws.on("message", (data, isBinary) => {
      if (isBinary) frames.push(data as Buffer);
      else events.push(JSON.parse(String(data)) as StreamEvent);
      wake?.();
    });
    const next = async (): Promise<StreamEvent> => {
      while (read >= events.length) {
        if (ws.readyState > WebSocket.OPEN) throw new Error("the viewer's socket closed");
        await new Promise<void>((r) => {
          wake = r;
          ws.once("close", () => r());
        });
      }
      return events[read++] as StreamEvent;
    };
    ws.once("open", () => resolve({ viewer: { ws, events, frames, next } }));
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.once("error", (err) => reject(err));
  });
}

async function viewerOf(url: string, options?: WebSocket.ClientOptions): Promise<Viewer> {
  const r = await open(url, options);
  if (!("viewer" in r)) throw new Error(`refused: ${r.status} ${r.body}`);
  return r.viewer;
}

async function refusal(url: string, options?: WebSocket.ClientOptions): Promise<{ status: number; body: string }> {
  const r = await open(url, options);
  if ("viewer" in r) {
    r.viewer.ws.close();
    throw new Error("a viewer was let in");
  }
  return r;
}

/** A logger that keeps warnings and errors (what a failed input leaves behind). */
function recordingLogger(lines: string[]): Logger {
  const keep = (m: string) => lines.push(m);
  const log: Logger = { ...silentLogger, warn: keep, error: keep, child: () => log };
  return log;
}

/** The stream endpoint over the real Screencast, mounted on a real gateway as `ccb stream` and the App mount it. */
async function mount(origin: OriginPolicy) {
  const page = new DevToolsRecorder();
  const logged: string[] = [];
  const log = recordingLogger(logged);
  const token = newToken(32);
  const screencast = new Screencast({ page, width: 800, height: 600, quality: 60, maxFps: 1000, log });
  await screencast.attach();
  const endpoint: StreamEndpoint = createStreamEndpoint({ screencast, token, maxFps: 12, log });
  const gateway = new Gateway({ host: "127.0.0.1", port: 0, log });
  gateway.addUpgrade(
    "/stream",
    (req, socket, head) => endpoint.handleUpgrade(req, socket, head),
    streamPolicy(token, origin),
  );
  await gateway.listen();
  const ws = gateway.url.replace(/^http/, "ws");
  return {
    page,
    logged,
    token,
    endpoint,
    gateway,
    wsUrl: `${ws}/stream`,
    withToken: `${ws}/stream?token=${token}`,
    async close() {
      endpoint.close();
      await screencast.close();
      await gateway.close();
    },
  };
}

describe("the /stream endpoint (src/stream/server.ts) behind its policy", () => {
  let s: Awaited<ReturnType<typeof mount>>;
  const viewers: Viewer[] = [];
  const connect = async (url = s.withToken, options?: WebSocket.ClientOptions) => {
    const v = await viewerOf(url, options);
    viewers.push(v);
    return v;
  };
  before(async () => {
    s = await mount({ kind: "same" });
  });
  afterEach(async () => {
    for (const v of viewers.splice(0)) {
      if (v.ws.readyState !== WebSocket.CLOSED) {
        v.ws.close();
        await once(v.ws, "close");
      }
    }
    await until(() => !s.endpoint.viewerConnected(), "the viewer gone");
  });
  after(() => s.close());

  it("lets a viewer in with the token in the query or as a bearer header, and says hello", async () => {
    const v = await connect();
    assert.deepEqual(await v.next(), { type: "hello", width: 800, height: 600, maxFps: 12 });
    assert.equal(s.endpoint.viewerConnected(), true);
    await until(() => s.page.methods().includes("Page.startScreencast"), "the screencast started");
    v.ws.close();
    await once(v.ws, "close");
    await until(() => s.page.methods().at(-1) === "Page.stopScreencast", "the screencast stopped when it left");
    const b = await connect(s.wsUrl, { headers: { authorization: `Bearer ${s.token}` } });
    assert.equal((await b.next()).type, "hello");
  });

  it("refuses a viewer without the token, with a wrong one, or with it anywhere else (401, nothing started)", async () => {
    const before = s.page.sent.length;
    const wrong = `${s.token.slice(0, -1)}${s.token.endsWith("a") ? "b" : "a"}`;
    const attempts: [string, WebSocket.ClientOptions?][] = [
      [s.wsUrl],
      [`${s.wsUrl}?token=`],
      [`${s.wsUrl}?token=${wrong}`],
      [`${s.wsUrl}?token=${s.token}x`],
      [`${s.wsUrl}?token=${s.token.slice(0, -1)}`],
      [`${s.wsUrl}?Token=${s.token}`],
      [s.wsUrl, { headers: { authorization: `Bearer ${wrong}` } }],
      [s.wsUrl, { headers: { authorization: `Basic ${s.token}` } }],
      [s.wsUrl, { headers: { cookie: `token=${s.token}` } }],
      [s.wsUrl, { headers: { "x-token": s.token } }],
    ];
    for (const [url, options] of attempts) {
      const r = await refusal(url, options);
      assert.equal(r.status, 401, `${url} ${JSON.stringify(options ?? {})}`);
    }
    assert.equal(s.endpoint.viewerConnected(), false);
    assert.equal(s.page.sent.length, before, "no DevTools command for a refused viewer");
    assert.ok(!s.logged.join("\n").includes(s.token), "the token is in no log line");
  });

  it("`ccb stream`'s own listener refuses another site's page even with the token (403); its own origin is let in", async () => {
    const r = await refusal(s.withToken, { headers: { origin: "https://evil.example" } });
    assert.equal(r.status, 403);
    const r2 = await refusal(s.withToken, { headers: { origin: "null" } });
    assert.equal(r2.status, 403, "an opaque (sandboxed) origin");
    const own = await connect(s.withToken, { headers: { origin: s.gateway.url } });
    assert.equal((await own.next()).type, "hello", "positive control: the viewer page's own origin");
  });

  it("takes one viewer at a time (409 with the reason); the next one gets in once it left", async () => {
    const first = await connect();
    await first.next();
    const second = await refusal(s.withToken);
    assert.equal(second.status, 409);
    assert.match(second.body, /another viewer is connected/);
    first.ws.close();
    await once(first.ws, "close");
    await until(() => !s.endpoint.viewerConnected(), "the first viewer gone");
    const third = await connect();
    assert.equal((await third.next()).type, "hello");
  });

  it("answers bad input with a clear error, sends none of it to the browser, and keeps the viewer", async () => {
    const v = await connect();
    await v.next();
    await until(() => s.page.methods().includes("Page.startScreencast"), "the screencast started");
    const before = s.page.sent.length;
    v.ws.send("{not json");
    assert.deepEqual(await v.next(), { type: "error", message: "invalid JSON" });
    const bad = [
      { type: "navigate", url: "javascript:alert(1)" },
      { type: "resize", width: 10, height: 10 },
      { type: "pointer", action: "down", x: -5, y: 1 },
      { type: "text", text: "t".repeat(LIMITS.maxText + 1) },
      { method: "Runtime.evaluate", params: { expression: "1" } },
      null,
      [],
    ];
    for (const m of bad) {
      // Each refusal is answered before the next message's (invalid JSON is the marker after it).
      v.ws.send(JSON.stringify(m));
      v.ws.send("{");
      const e = await v.next();
      assert.equal(e.type, "error", JSON.stringify(m));
      assert.match((e as { message: string }).message, /^invalid input: ./, JSON.stringify(m));
      assert.deepEqual(await v.next(), { type: "error", message: "invalid JSON" });
    }
    v.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    assert.equal(s.page.sent.length, before, "nothing reached DevTools");
    // Nothing was lost: the connection is the same and the next good input goes through, in order.
    v.ws.send(JSON.stringify({ type: "text", text: "a" }));
    v.ws.send(JSON.stringify({ type: "key", action: "down", key: "Enter", modifiers: 2 }));
    v.ws.send(JSON.stringify({ type: "resize", width: 1024, height: 700 }));
    assert.deepEqual(await v.next(), { type: "resized", width: 1024, height: 700 });
    assert.deepEqual(s.page.sent.slice(before, before + 2), [
      { method: "Input.insertText", params: { text: "a" } },
      { method: "Input.dispatchKeyEvent", params: { type: "rawKeyDown", key: "Enter", code: "", modifiers: 2 } },
    ]);
    assert.deepEqual(s.page.sent[before + 2], {
      method: "Emulation.setDeviceMetricsOverride",
      params: { width: 1024, height: 700, deviceScaleFactor: 1, mobile: false },
    });
  });

  it("a frame over the cap ends that viewer only (1009); the listener and the next viewer carry on", async () => {
    const v = await connect();
    await v.next();
    v.ws.send(JSON.stringify({ type: "text", text: "x".repeat(LIMITS.maxFrameBytes) }));
    const [code] = (await once(v.ws, "close")) as [number];
    assert.equal(code, 1009);
    await until(() => !s.endpoint.viewerConnected(), "the oversized viewer gone");
    const next = await connect();
    assert.equal((await next.next()).type, "hello");
    next.ws.send(JSON.stringify({ type: "text", text: "x".repeat(LIMITS.maxText) }));
    await until(() => s.page.sent.at(-1)?.method === "Input.insertText", "positive control: the largest paste passes");
  });

  it("a viewer that vanishes mid-stream ends its own connection only", async () => {
    const v = await connect();
    await v.next();
    v.ws.terminate();
    await until(() => !s.endpoint.viewerConnected(), "the vanished viewer let go");
    const next = await connect();
    assert.equal((await next.next()).type, "hello");
  });

  it("a browser that fails a command is logged, not a crash: the viewer stays and is told of the resize it asked", async () => {
    const v = await connect();
    await v.next();
    s.page.failing.add("Input.insertText");
    try {
      v.ws.send(JSON.stringify({ type: "text", text: "lost" }));
      v.ws.send(JSON.stringify({ type: "resize", width: 640, height: 480 }));
      assert.deepEqual(await v.next(), { type: "resized", width: 640, height: 480 });
      assert.ok(
        s.logged.some((l) => /stream input failed: Input\.insertText: Target closed/.test(l)),
        s.logged.join("\n"),
      );
      assert.equal(v.ws.readyState, WebSocket.OPEN);
    } finally {
      s.page.failing.delete("Input.insertText");
    }
  });

  it("sends the browser's frames to the viewer as binary messages and acks every frame", async () => {
    const v = await connect();
    await v.next();
    await until(() => s.page.methods().includes("Page.startScreencast"), "the screencast started");
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xd9]);
    s.page.emit("Page.screencastFrame", {
      sessionId: 41,
      data: jpeg.toString("base64"),
      metadata: { deviceWidth: 640, deviceHeight: 480 },
    });
    await until(() => v.frames.length === 1, "the frame arrived");
    assert.deepEqual(v.frames[0], jpeg);
    // A frame rendered at a size no longer emulated is acked but not shown.
    s.page.emit("Page.screencastFrame", {
      sessionId: 42,
      data: jpeg.toString("base64"),
      metadata: { deviceWidth: 300, deviceHeight: 300 },
    });
    await until(
      () => s.page.sent.some((c) => c.method === "Page.screencastFrameAck" && c.params?.sessionId === 42),
      "the stale frame acked",
    );
    assert.deepEqual(
      s.page.sent.filter((c) => c.method === "Page.screencastFrameAck").map((c) => c.params?.sessionId),
      [41, 42],
    );
    assert.equal(v.frames.length, 1);
  });

  it("drives the browser only with the screencast's own commands", () => {
    const allowed = new Set([
      "Page.enable",
      "Page.startScreencast",
      "Page.stopScreencast",
      "Page.screencastFrameAck",
      "Emulation.setDeviceMetricsOverride",
      "Input.dispatchMouseEvent",
      "Input.dispatchKeyEvent",
      "Input.insertText",
    ]);
    assert.ok(s.page.sent.length > 10, "the tests above drove it");
    assert.deepEqual(
      s.page.methods().filter((m) => !allowed.has(m)),
      [],
    );
  });
});

describe("the App's /stream (any origin: the token is the credential)", () => {
  let s: Awaited<ReturnType<typeof mount>>;
  before(async () => {
    s = await mount({ kind: "any" });
  });
  after(() => s.close());

  it("lets the host's page in from its own origin with the token, and nobody without it", async () => {
    const r = await refusal(s.wsUrl, { headers: { origin: "https://host.example" } });
    assert.equal(r.status, 401);
    const v = await viewerOf(s.withToken, { headers: { origin: "https://host.example" } });
    assert.equal((await v.next()).type, "hello");
    v.ws.close();
    await once(v.ws, "close");
  });
});

describe("pointer input as the browser gets it (src/stream/screencast.ts)", () => {
  it("clamps coordinates to the page, keeps the held buttons and sends moves without a button", async () => {
    const page = new DevToolsRecorder();
    const screencast = new Screencast({ page, width: 800, height: 600, quality: 60, maxFps: 12, log: silentLogger });
    await screencast.attach();
    await screencast.input({
      type: "pointer",
      action: "down",
      x: 9000,
      y: 10,
      button: "right",
      clickCount: 1,
      modifiers: 0,
    });
    await screencast.input({
      type: "pointer",
      action: "move",
      x: 5,
      y: 9000,
      button: "none",
      clickCount: 3,
      modifiers: 1,
    });
    await screencast.input({ type: "pointer", action: "up", x: 5, y: 5, button: "right", clickCount: 1, modifiers: 0 });
    const mouse = page.sent.filter((c) => c.method === "Input.dispatchMouseEvent").map((c) => c.params);
    assert.deepEqual(mouse, [
      { type: "mousePressed", x: 800, y: 10, button: "right", buttons: 2, clickCount: 1, modifiers: 0 },
      { type: "mouseMoved", x: 5, y: 600, button: "none", buttons: 2, clickCount: 0, modifiers: 1 },
      { type: "mouseReleased", x: 5, y: 5, button: "right", buttons: 0, clickCount: 1, modifiers: 0 },
    ]);
    await screencast.close();
  });
});
