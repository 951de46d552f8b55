import assert from "node:assert/strict";
import { once } from "node:events";
import { symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { WebSocket } from "ws";
import { type Core, createCore } from "../../../src/core/core.ts";
import { isCcbError } from "../../../src/core/errors.ts";
import {
  BRIDGE_PROTOCOL_VERSION,
  CLOSE_BAD_FRAME,
  CLOSE_BAD_TOKEN,
  CLOSE_TIMEOUT,
} from "../../../src/editor-wire/contract.ts";
import { BridgeServer } from "../../../src/workbench/bridge-server.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

const ws = tmpdirFixture();
const outside = tmpdirFixture();
writeFileSync(join(ws.path, "a.txt"), "a\n");
writeFileSync(join(outside.path, "x.txt"), "x\n");
symlinkSync(join(outside.path, "x.txt"), join(ws.path, "escape.txt"));

let core: Core;
let bridge: BridgeServer;
let server: Server;
let url: string;

before(async () => {
  core = createCore({ roots: [ws.path] });
  bridge = new BridgeServer({
    core,
    editor: core.claimEditor("test"),
    log: core.log,
    silenceTimeoutMs: 600,
    helloTimeoutMs: 400,
  });
  server = createServer((_req, res) => res.writeHead(404).end());
  server.on("upgrade", (req, socket, head) => bridge.handleUpgrade(req, socket, head));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/bridge`;
});

after(async () => {
  await bridge.close();
  server.close();
  await core.dispose();
  ws.cleanup();
  outside.cleanup();
});

interface Client {
  ws: WebSocket;
  frames: Array<Record<string, unknown>>;
  next(type: string): Promise<Record<string, unknown>>;
  send(frame: unknown): void;
  closed: Promise<number>;
}

async function connect(
  options: { token?: string; focused?: boolean; clientId?: string; hello?: boolean } = {},
): Promise<Client> {
  const sock = new WebSocket(url);
  const frames: Array<Record<string, unknown>> = [];
  const waiters: Array<{ type: string; resolve: (f: Record<string, unknown>) => void }> = [];
  sock.on("message", (d) => {
    const f = JSON.parse(d.toString()) as Record<string, unknown>;
    const i = waiters.findIndex((w) => w.type === f.type);
    if (i >= 0) waiters.splice(i, 1)[0]?.resolve(f);
    else frames.push(f);
  });
  const closed = new Promise<number>((resolve) => sock.on("close", (code) => resolve(code)));
  await once(sock, "open");
  const client: Client = {
    ws: sock,
    frames,
    closed,
    send: (f) => sock.send(typeof f === "string" ? f : JSON.stringify(f)),
    next(type) {
      const i = frames.findIndex((f) => f.type === type);
      if (i >= 0) return Promise.resolve(frames.splice(i, 1)[0] as Record<string, unknown>);
      return new Promise((resolve) => waiters.push({ type, resolve }));
    },
  };
  if (options.hello ?? true) {
    client.send({
      type: "hello",
      protocol: BRIDGE_PROTOCOL_VERSION,
      token: options.token ?? bridge.token,
      clientId: options.clientId ?? Math.random().toString(36).slice(2),
      focused: options.focused ?? false,
      extensionVersion: "test",
      vscodeVersion: "test",
      workspaceFolders: [ws.path],
    });
  }
  return client;
}

describe("bridge server", () => {
  test("a wrong token is closed with 4401 and never serves", async () => {
    const c = await connect({ token: "x".repeat(43) });
    assert.equal(await c.closed, CLOSE_BAD_TOKEN);
    assert.equal(core.bridge.status().connected, false);
  });

  test("bad JSON is closed with 4400", async () => {
    const c = await connect({ hello: false });
    c.send("{not json");
    assert.equal(await c.closed, CLOSE_BAD_FRAME);
  });

  test("no hello in time is closed with 4408", async () => {
    const c = await connect({ hello: false });
    assert.equal(await c.closed, CLOSE_TIMEOUT);
  });

  test("a silent connection is closed with 4408 and the slot is cleared", async () => {
    const c = await connect();
    assert.equal((await c.next("welcome")).type, "welcome");
    assert.deepEqual(await c.next("role"), { type: "role", role: "active" });
    assert.equal(core.bridge.status().connected, true);
    const cleared = new Promise<string>((resolve) => {
      const off = core.bridge.onChange((s) => {
        if (s.connected) return;
        off();
        resolve(s.reason);
      });
    });
    assert.equal(await c.closed, CLOSE_TIMEOUT);
    assert.match(await cleared, /no workbench tab/i);
  });

  test("calls round-trip, paths are confined, symlink escapes refused before sending", async () => {
    const c = await connect();
    await c.next("role");
    const pending = bridge.call("document.isDirty", { path: "a.txt" });
    const req = await c.next("request");
    assert.equal(req.method, "document.isDirty");
    assert.deepEqual(req.params, { path: join(ws.path, "a.txt") });
    c.send({ type: "response", id: req.id, result: { isOpen: true, isDirty: true } });
    assert.deepEqual(await pending, { isOpen: true, isDirty: true });

    await assert.rejects(bridge.call("editor.applyEdits", { path: "escape.txt", edits: [] }), (e: unknown) =>
      isCcbError(e, "PATH_OUTSIDE_WORKSPACE"),
    );
    await assert.rejects(
      bridge.call("commands.execute", { command: "x", args: [{ $type: "uri", path: join(outside.path, "x.txt") }] }),
      (e: unknown) => isCcbError(e, "PATH_OUTSIDE_WORKSPACE"),
    );
    await assert.rejects(
      bridge.call("diff.open", { id: "1", path: "escape.txt", proposedText: "", title: "t" }),
      (e: unknown) => isCcbError(e, "PATH_OUTSIDE_WORKSPACE"),
    );

    const failing = bridge.call("document.save", { path: "a.txt" });
    const req2 = await c.next("request");
    c.send({ type: "response", id: req2.id, error: { code: "VERSION_CONFLICT", message: "changed" } });
    await assert.rejects(failing, (e: unknown) => isCcbError(e, "VERSION_CONFLICT"));

    const wrongShape = bridge.call("document.save", { path: "a.txt" });
    const req3 = await c.next("request");
    c.send({ type: "response", id: req3.id, result: { nope: 1 } });
    await assert.rejects(wrongShape, (e: unknown) => isCcbError(e, "BRIDGE_ERROR"));

    const ac = new AbortController();
    const aborted = bridge.call(
      "diff.open",
      { id: "d", path: "a.txt", proposedText: "b", title: "t" },
      { signal: ac.signal },
    );
    await c.next("request");
    ac.abort();
    await assert.rejects(aborted, (e: unknown) => isCcbError(e, "ABORTED"));

    const leaving = bridge.call("editor.state", {});
    await c.next("request");
    c.ws.close();
    await assert.rejects(leaving, (e: unknown) => isCcbError(e, "BRIDGE_UNAVAILABLE"));
  });

  test("several hosts: the last focused serves, focus loss does not move the role, departure hands over", async () => {
    const roles: string[] = [];
    const off = bridge.onActiveChange((a) => roles.push(a?.clientId ?? "none"));
    const a = await connect({ clientId: "A" });
    await a.next("role");
    const b = await connect({ clientId: "B" });
    await b.next("welcome");
    assert.equal(bridge.active?.clientId, "A", "the first host keeps serving while nobody is focused");
    b.send({ type: "focus", focused: true });
    assert.deepEqual(await b.next("role"), { type: "role", role: "active" });
    assert.deepEqual(await a.next("role"), { type: "role", role: "standby" });
    b.send({ type: "focus", focused: false });
    a.send({ type: "ping" });
    await a.next("pong");
    assert.equal(bridge.active?.clientId, "B", "losing focus alone does not hand the role over");
    b.ws.close();
    assert.deepEqual(await a.next("role"), { type: "role", role: "active" });
    assert.deepEqual(roles, ["A", "B", "A"]);
    off();
    a.ws.close();
    await a.closed;
  });

  test("serving role: an unfocused (hidden, or ccb's headless) host keeps it until a focused window opens; that one takes over on its hello; a hello's default focus corrected to false gives it back", async () => {
    const roles: string[] = [];
    const off = bridge.onActiveChange((a) => roles.push(a?.clientId ?? "none"));
    const headless = await connect({ clientId: "H" });
    await headless.next("role");
    const hidden = await connect({ clientId: "X" });
    await hidden.next("welcome");
    hidden.send({ type: "focus", focused: false });
    headless.send({ type: "ping" });
    await headless.next("pong");
    assert.equal(bridge.active?.clientId, "H", "a hidden window never takes the role");
    const person = await connect({ clientId: "P", focused: true });
    assert.deepEqual(
      await person.next("role"),
      { type: "role", role: "active" },
      "a person's focused tab serves as it loads",
    );
    assert.deepEqual(await headless.next("role"), { type: "role", role: "standby" });
    // A host whose hello carried the extension host's default (focused) and then learnt the window is not focused.
    const unsure = await connect({ clientId: "U", focused: true });
    assert.deepEqual(await unsure.next("role"), { type: "role", role: "active" });
    assert.deepEqual(await person.next("role"), { type: "role", role: "standby" });
    unsure.send({ type: "focus", focused: false });
    assert.deepEqual(await person.next("role"), { type: "role", role: "active" }, "the real focus holder gets it back");
    person.ws.close();
    assert.deepEqual(
      await headless.next("role"),
      { type: "role", role: "active" },
      "no window was ever focused: the first connected (headless) serves",
    );
    assert.deepEqual(roles, ["H", "P", "U", "P", "H"]);
    off();
    for (const c of [headless, hidden, unsure]) c.ws.close();
    await Promise.all([headless.closed, hidden.closed, unsure.closed]);
  });

  test("events from the extension reach subscribers", async () => {
    const c = await connect();
    await c.next("welcome");
    const got = new Promise<unknown>((resolve) => {
      const off = bridge.onEvent((e) => {
        off();
        resolve(e);
      });
    });
    c.send({ type: "event", event: { type: "atMentioned", path: join(ws.path, "a.txt"), lineStart: 1, lineEnd: 3 } });
    assert.deepEqual(await got, { type: "atMentioned", path: join(ws.path, "a.txt"), lineStart: 1, lineEnd: 3 });
    c.ws.close();
    await c.closed;
  });
});
