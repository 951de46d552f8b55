import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { IdeClient, rawUpgrade } from "../../../helpers/ide-client.ts";
import { startTestIde, type TestIde } from "../../../helpers/ide-fixture.ts";

describe("ide server: handshake and auth", () => {
  let t: TestIde;
  before(async () => {
    t = await startTestIde({ maxPayloadBytes: 64 * 1024, pingIntervalMs: 50 });
  });
  after(async () => t.close());

  const good = () => ({ "x-claude-code-ide-authorization": t.ide.authToken, "sec-websocket-protocol": "mcp" });

  it("listens on a port in 10000-65535 and upgrades a correct CLI handshake with the mcp subprotocol", async () => {
    assert.ok(t.ide.port >= 10000 && t.ide.port <= 65535);
    const r = await rawUpgrade(t.ide.port, good());
    assert.equal(r.status, 101);
    assert.equal(r.headers["sec-websocket-protocol"], "mcp");
  });

  const matrix: [string, () => Record<string, string | undefined>, number][] = [
    ["missing token", () => ({ ...good(), "x-claude-code-ide-authorization": undefined }), 401],
    [
      "wrong token of the same length",
      () => ({
        ...good(),
        "x-claude-code-ide-authorization": t.ide.authToken.replace(/^./, (c) => (c === "a" ? "b" : "a")),
      }),
      401,
    ],
    ["wrong length token", () => ({ ...good(), "x-claude-code-ide-authorization": `${t.ide.authToken}x` }), 401],
    ["empty token", () => ({ ...good(), "x-claude-code-ide-authorization": "" }), 401],
    ["browser Origin with the right token", () => ({ ...good(), origin: "http://evil.example" }), 403],
    ["chrome-extension Origin", () => ({ ...good(), origin: "chrome-extension://abcdef" }), 403],
    ["foreign Host (DNS rebinding)", () => ({ ...good(), host: `evil.example:${t.ide.port}` }), 403],
    ["loopback Host on another port", () => ({ ...good(), host: `127.0.0.1:${t.ide.port + 1}` }), 403],
    ["no mcp subprotocol", () => ({ ...good(), "sec-websocket-protocol": undefined }), 400],
  ];
  for (const [name, headers, status] of matrix) {
    it(`refuses before the upgrade: ${name}`, async () => {
      const before = t.ide.stats();
      const r = await rawUpgrade(t.ide.port, headers());
      assert.equal(r.status, status);
      assert.notEqual(r.status, 101);
      assert.equal(t.ide.stats().accepted, before.accepted, "no WebSocket session was created");
      assert.equal(t.ide.stats().refused, before.refused + 1);
    });
  }

  it("the ws client library sees a refused connection as an HTTP error, never an open socket", async () => {
    await assert.rejects(IdeClient.connect(t.ide.port, "nope"), (e: { status?: number }) => e.status === 401);
  });

  it("accepts localhost and [::1] Host names with the port", async () => {
    assert.equal((await rawUpgrade(t.ide.port, { ...good(), host: `localhost:${t.ide.port}` })).status, 101);
    assert.equal((await rawUpgrade(t.ide.port, { ...good(), host: `[::1]:${t.ide.port}` })).status, 101);
  });

  it("answers initialize with the client's version and only the tools capability; notifications get no reply", async () => {
    const c = await t.connect();
    const init = await c.request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: { roots: { listChanged: true }, elicitation: {} },
      clientInfo: { name: "claude-code", version: "2.1.332" },
    });
    assert.equal(init.protocolVersion, "2025-11-25");
    assert.deepEqual(Object.keys(init.capabilities), ["tools"]);
    assert.equal(init.serverInfo.name, "ccb");
    const framesBefore = c.frames.length;
    c.notify("notifications/initialized");
    c.notify("ide_connected", { pid: 4242 });
    c.notify("log_event", { eventName: "x", eventData: {} });
    const tools = await c.request("tools/list");
    assert.equal(c.frames.length, framesBefore + 1, "only the tools/list answer arrived");
    assert.deepEqual(
      tools.tools.map((x: { name: string }) => x.name),
      [
        "openFile",
        "openDiff",
        "getCurrentSelection",
        "getLatestSelection",
        "getOpenEditors",
        "getWorkspaceFolders",
        "getDiagnostics",
        "checkDocumentDirty",
        "saveDocument",
        "close_tab",
        "closeAllDiffTabs",
        "executeCode",
      ],
    );
    for (const tool of tools.tools) assert.equal(tool.inputSchema.type, "object");
    assert.ok(t.ide.clientPids().includes(4242));
  });

  it("answers an unsupported protocol version with one the CLI accepts", async () => {
    const c = await t.connect();
    const init = await c.request("initialize", {
      protocolVersion: "1999-01-01",
      capabilities: {},
      clientInfo: { name: "x", version: "1" },
    });
    assert.ok(["2025-11-25", "2025-06-18", "2025-03-26"].includes(init.protocolVersion));
  });

  it("answers a non-JSON frame with a parse error and keeps the connection", async () => {
    const c = await t.ready();
    c.ws.send("not json");
    const list = await c.request("tools/list");
    assert.equal(list.tools.length, 12);
    assert.ok(c.frames.some((f) => f.error?.code === -32700));
  });

  it("JSON-RPC errors: unknown method -32601, unknown tool -32602, bad envelope -32600; ping works", async () => {
    const c = await t.ready();
    await assert.rejects(c.request("resources/list"), (e: { code?: number }) => e.code === -32601);
    await assert.rejects(c.call("noSuchTool"), (e: { code?: number }) => e.code === -32602);
    await assert.rejects(c.request("tools/call", { arguments: {} }), (e: { code?: number }) => e.code === -32602);
    assert.deepEqual(await c.request("ping"), {});
    c.ws.send(JSON.stringify({ jsonrpc: "1.0", id: 5, method: "ping" }));
    const list = await c.request("tools/list");
    assert.equal(list.tools.length, 12);
    assert.ok(c.frames.some((f) => f.id === 5 && f.error?.code === -32600));
  });

  it("tools/list gives each tool a JSON Schema with its required fields", async () => {
    const c = await t.ready();
    const { tools } = await c.request("tools/list");
    const byName = Object.fromEntries(tools.map((x: { name: string }) => [x.name, x]));
    assert.deepEqual([...byName.openDiff.inputSchema.required].sort(), [
      "new_file_contents",
      "new_file_path",
      "old_file_path",
      "tab_name",
    ]);
    assert.deepEqual(byName.openFile.inputSchema.required, ["filePath"]);
    assert.equal(byName.getDiagnostics.inputSchema.required, undefined);
    assert.equal(byName.getDiagnostics.inputSchema.properties.uri.type, "string");
    for (const tool of tools) assert.equal(typeof tool.description, "string");
  });

  it("closes a connection that sends a frame above the cap with 1009", async () => {
    const c = await t.ready();
    c.ws.send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 99,
        method: "tools/call",
        params: { name: "openDiff", arguments: { x: "y".repeat(80 * 1024) } },
      }),
    );
    const { code } = await c.closed;
    assert.equal(code, 1009);
  });

  it("pings connected clients (keepalive)", async () => {
    const c = await t.ready();
    await new Promise<void>((resolve) => c.ws.once("ping", () => resolve()));
  });

  it("drops a client that stops answering pings", async () => {
    const c = await t.ready();
    // Stop the automatic pong: the raw socket is paused, so the peer goes silent.
    (c.ws as unknown as { _socket: import("node:net").Socket })._socket.pause();
    const before = t.ide.clientCount();
    await new Promise<void>((resolve) => {
      const off = t.ide.onClient((e) => {
        if (e.type === "disconnected") {
          off();
          resolve();
        }
      });
    });
    assert.ok(t.ide.clientCount() < before);
  });

  it("serves several clients at once", async () => {
    const [a, b] = await Promise.all([t.ready(), t.ready()]);
    const [ra, rb] = await Promise.all([a.call("getWorkspaceFolders"), b.call("getWorkspaceFolders")]);
    assert.deepEqual(ra, rb);
  });
});

describe("ide server: lock file", () => {
  it("writes the lock file while running (0600 in a 0700 folder) and removes it on close", async () => {
    const t = await startTestIde();
    try {
      assert.equal(t.ide.lockPath, `${t.lockDir}/${t.ide.port}.lock`);
      const body = JSON.parse(readFileSync(t.ide.lockPath, "utf8"));
      assert.deepEqual(Object.keys(body).sort(), [
        "authToken",
        "ideName",
        "pid",
        "runningInWindows",
        "transport",
        "workspaceFolders",
      ]);
      assert.equal(body.pid, process.pid);
      assert.deepEqual(body.workspaceFolders, [t.workspace]);
      assert.equal(body.ideName, `ccb (project) · ccb ide · pid ${process.pid}`);
      assert.equal(body.transport, "ws");
      assert.equal(body.runningInWindows, false);
      assert.ok(Buffer.from(body.authToken, "base64url").length >= 16);
      assert.equal(statSync(t.ide.lockPath).mode & 0o777, 0o600);
      assert.equal(statSync(t.lockDir).mode & 0o777, 0o700);
    } finally {
      await t.close();
    }
    assert.equal(existsSync(t.ide.lockPath), false);
  });

  it("uses a new token per server", async () => {
    const a = await startTestIde();
    const b = await startTestIde();
    try {
      assert.notEqual(a.ide.authToken, b.ide.authToken);
      assert.notEqual(a.ide.port, b.ide.port);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
