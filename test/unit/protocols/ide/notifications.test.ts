import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it, mock } from "node:test";
import { silentLogger } from "../../../../src/core/log.ts";
import type { EditorSelection } from "../../../../src/protocols/ide/editor.ts";
import { Notifier } from "../../../../src/protocols/ide/notifications.ts";
import type { IdeClient } from "../../../helpers/ide-client.ts";
import { startTestIde, type TestIde } from "../../../helpers/ide-fixture.ts";

function sel(filePath: string, text: string, line = 0): EditorSelection {
  return { filePath, text, range: { start: { line, character: 0 }, end: { line, character: text.length } } };
}

describe("Notifier (fake timers)", () => {
  it("debounces bursts, de-duplicates, and waits 500 ms after initialized before the first notification", () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    try {
      const sent: { method: string; params: any }[] = [];
      const n = new Notifier({ log: silentLogger, debounceMs: 100, readyDelayMs: 500 });
      n.addClient(1, (method, params) => sent.push({ method, params }));
      n.selection(sel("/w/a.ts", "early"));
      mock.timers.tick(100);
      assert.equal(sent.length, 0, "nothing before the client is initialized");
      n.clientInitialized(1);
      mock.timers.tick(499);
      assert.equal(sent.length, 0, "nothing in the first 500 ms after initialized");
      mock.timers.tick(1);
      assert.deepEqual(
        sent.map((s) => s.params.text),
        ["early"],
        "the current selection once ready",
      );
      for (const t of ["a", "ab", "abc", "abcd"]) {
        n.selection(sel("/w/a.ts", t));
        mock.timers.tick(50);
      }
      assert.equal(sent.length, 1, "still inside the debounce window");
      mock.timers.tick(100);
      assert.deepEqual(
        sent.map((s) => s.params.text),
        ["early", "abcd"],
      );
      n.selection(sel("/w/a.ts", "abcd"));
      mock.timers.tick(100);
      assert.equal(sent.length, 2, "an identical selection is not sent again");
      n.selection(null);
      mock.timers.tick(100);
      assert.equal(sent.length, 2, "no editor: nothing to send");
      assert.deepEqual(sent[1], {
        method: "selection_changed",
        params: {
          text: "abcd",
          filePath: "/w/a.ts",
          fileUrl: "file:///w/a.ts",
          selection: { start: { line: 0, character: 0 }, end: { line: 0, character: 4 }, isEmpty: false },
        },
      });
      n.dispose();
    } finally {
      mock.timers.reset();
    }
  });

  it("queues at_mentioned until a client is ready, then delivers each once", () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    try {
      const n = new Notifier({ log: silentLogger, readyDelayMs: 500 });
      n.atMentioned({ filePath: "/w/a.ts", lineStart: 1, lineEnd: 3 });
      n.atMentioned({ filePath: "/w/b.ts", lineStart: 0, lineEnd: 0 });
      assert.equal(n.queuedMentions, 2);
      const sent: any[] = [];
      n.addClient(7, (method, params) => sent.push({ method, params }));
      n.atMentioned({ filePath: "/w/c.ts", lineStart: 2, lineEnd: 2 });
      assert.equal(sent.length, 0, "connected but not ready: still queued");
      n.clientInitialized(7);
      mock.timers.tick(500);
      assert.deepEqual(sent, [
        { method: "at_mentioned", params: { filePath: "/w/a.ts", lineStart: 1, lineEnd: 3 } },
        { method: "at_mentioned", params: { filePath: "/w/b.ts", lineStart: 0, lineEnd: 0 } },
        { method: "at_mentioned", params: { filePath: "/w/c.ts", lineStart: 2, lineEnd: 2 } },
      ]);
      assert.equal(n.queuedMentions, 0);
      n.atMentioned({ filePath: "/w/d.ts", lineStart: 4, lineEnd: 5 });
      assert.equal(sent.length, 4, "a ready client gets it at once");
      n.dispose();
    } finally {
      mock.timers.reset();
    }
  });
});

describe("ide notifications over the socket", () => {
  let t: TestIde;
  let a: IdeClient;
  let file: string;
  before(async () => {
    t = await startTestIde({ files: { "a.ts": "abcdef\n" } });
    file = join(t.workspace, "a.ts");
    a = await t.ready();
  });
  after(async () => t.close());

  const selections = (c: IdeClient) =>
    c.notifications.filter((n) => n.method === "selection_changed").map((n) => n.params.text);

  it("a burst becomes one selection_changed with the last selection; identical ones are dropped", async () => {
    for (const s of ["a", "ab", "abc", "abcd"]) t.editor.emit({ type: "selection", selection: sel(file, s) });
    await a.waitForNotification("selection_changed", (p) => p.text === "abcd");
    t.editor.emit({ type: "selection", selection: sel(file, "abcd") });
    t.editor.emit({ type: "selection", selection: sel(file, "marker", 0) });
    await a.waitForNotification("selection_changed", (p) => p.text === "marker");
    assert.deepEqual(selections(a), ["abcd", "marker"]);
  });

  it("goes to every ready client, never to one that has not finished its handshake", async () => {
    const b = await t.ready();
    const late = await t.connect();
    await late.request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "claude-code", version: "2.1.332" },
    });
    await b.waitForNotification("selection_changed", (p) => p.text === "marker");
    t.editor.emit({ type: "selection", selection: sel(file, "everyone", 0) });
    await Promise.all([
      a.waitForNotification("selection_changed", (p) => p.text === "everyone"),
      b.waitForNotification("selection_changed", (p) => p.text === "everyone"),
    ]);
    assert.equal(late.notifications.length, 0);
    late.notify("notifications/initialized");
    const first = await late.waitForNotification("selection_changed");
    assert.equal(first.params.text, "everyone", "a client that becomes ready gets the current selection");
  });

  it("at_mentioned waits for a client: queued with nobody connected, delivered after the handshake", async () => {
    for (const c of t.clients) c.ws.terminate();
    await Promise.all(t.clients.map((c) => c.closed));
    await new Promise<void>((resolve) => {
      const check = () => (t.ide.clientCount() === 0 ? resolve() : setImmediate(check));
      check();
    });
    t.editor.emit({ type: "atMention", filePath: file, lineStart: 0, lineEnd: 4 });
    assert.equal(t.ide.notifier.queuedMentions, 1);
    const c = await t.ready();
    const m = await c.waitForNotification("at_mentioned");
    assert.deepEqual(m.params, { filePath: file, lineStart: 0, lineEnd: 4 });
    assert.equal(t.ide.notifier.queuedMentions, 0);
  });
});
