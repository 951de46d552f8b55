import assert from "node:assert/strict";
import { test } from "node:test";
import { boundedNdJsonStream, sniffId } from "../../../../src/protocols/acp/framing.ts";
import { modelHistory, replayUpdates } from "../../../../src/protocols/acp/history.ts";
import { acpUsage, costOf, priceOf } from "../../../../src/protocols/acp/pricing.ts";
import { applySystemPrompt, sessionOptionsFrom } from "../../../../src/protocols/acp/session-options.ts";
import type { StoreRecord } from "../../../../src/protocols/acp/store.ts";
import { tmpdirFixture } from "../../../helpers/tmp.ts";

test("framing: the request id is read from a frame's start or end, never from inside it", () => {
  assert.equal(sniffId('{"jsonrpc":"2.0","id":7,"method":"x","params":{', ""), 7);
  assert.equal(sniffId('{"id":"a\\"b","params":', ""), 'a"b');
  assert.equal(sniffId('{"method":"session/prompt","id":-3,', ""), -3);
  assert.equal(sniffId('{"params":{"x":1', '"tail"}},"jsonrpc":"2.0","id":12}\n'), 12);
  assert.equal(sniffId('{"params":{"id":5,', 'zz"}}'), null, "an id inside params is not the request's");
  assert.equal(sniffId('{"params":{"a":"', 'x","id":9}}'), null, "an id closing a nested object is not the request's");
  assert.equal(sniffId("garbage", "more garbage"), null);
});

async function readAll(chunks: string[], maxFrameBytes: number): Promise<{ messages: unknown[]; written: any[] }> {
  const enc = new TextEncoder();
  const written: any[] = [];
  const out = new WritableStream<Uint8Array>({
    write: (b) =>
      void written.push(
        ...new TextDecoder()
          .decode(b)
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l)),
      ),
  });
  const input = new ReadableStream<Uint8Array>({
    start(c) {
      for (const ch of chunks) c.enqueue(enc.encode(ch));
      c.close();
    },
  });
  const { readable } = boundedNdJsonStream(out, input, { maxFrameBytes });
  const messages: unknown[] = [];
  const r = readable.getReader();
  for (;;) {
    const { value, done } = await r.read();
    if (done) break;
    messages.push(value);
  }
  return { messages, written };
}

test("framing: lines split across chunks and CRLF are joined; an oversized line is answered and skipped; reading goes on", async () => {
  const big = `{"jsonrpc":"2.0","id":3,"method":"m","params":{"t":"${"x".repeat(300)}"}}`;
  const { messages, written } = await readAll(
    [
      '{"jsonrpc":"2.0","id":1,',
      '"method":"a"}\r\n',
      big.slice(0, 100),
      big.slice(100),
      '\n{"jsonrpc":"2.0","id":4,"method":"b"}\n',
      "not json\n",
      '{"id":5,"method":"c"}',
    ],
    200,
  );
  assert.deepEqual(messages, [
    { jsonrpc: "2.0", id: 1, method: "a" },
    { jsonrpc: "2.0", id: 4, method: "b" },
  ]);
  assert.equal(written.length, 3);
  assert.deepEqual([written[0].id, written[0].error.code, written[0].error.data.maxMessageBytes], [3, -32600, 200]);
  assert.deepEqual([written[1].id, written[1].error.code], [null, -32700]);
  assert.deepEqual(
    [written[2].id, written[2].error.code],
    [5, -32600],
    "no jsonrpc member: -32600 with the id (last line, no newline)",
  );
});

test("session options: the shapes acpx and the Claude agent adapter send", () => {
  assert.deepEqual(sessionOptionsFrom({ systemPrompt: "S", claudeCode: { options: { maxTurns: 2 } } }, undefined), {
    systemPrompt: "S",
    maxTurns: 2,
  });
  assert.deepEqual(sessionOptionsFrom({ systemPrompt: { append: "A" }, maxTurns: 3 }, []), {
    systemPrompt: { append: "A" },
    maxTurns: 3,
  });
  assert.deepEqual(
    sessionOptionsFrom({ systemPrompt: "", maxTurns: 0 }, undefined),
    {},
    "empty or invalid values are not options",
  );
  assert.deepEqual(sessionOptionsFrom(null, undefined), {});
  const dir = tmpdirFixture();
  try {
    assert.deepEqual(sessionOptionsFrom(undefined, [dir.path]), { additionalDirectories: [dir.path] });
    assert.throws(() => sessionOptionsFrom(undefined, ["rel"]), /absolute/);
    assert.throws(() => sessionOptionsFrom(undefined, [`${dir.path}/missing`]), /not an existing directory/);
  } finally {
    dir.cleanup();
  }
  assert.equal(applySystemPrompt("base", undefined), "base");
  assert.equal(applySystemPrompt("base", "other"), "other");
  assert.equal(applySystemPrompt("base", { append: "more" }), "base\n\nmore");
});

test("pricing: known models have a cost, unknown ones none; settings override", () => {
  const t = { input: 1_000_000, output: 1_000_000, cacheRead: 1_000_000, cacheWrite: 1_000_000 };
  assert.equal(costOf(t, priceOf("claude-sonnet-4-5")!), 3 + 15 + 0.3 + 3.75);
  assert.equal(priceOf("claude-opus-4-5-20251101")?.input, 5);
  assert.equal(priceOf("claude-opus-4-1")?.input, 15);
  assert.equal(priceOf("claude-sonnet-5-5"), undefined);
  assert.deepEqual(priceOf("claude-sonnet-5-5", { "claude-sonnet-5-5": { input: 1, output: 2 } }), {
    input: 1,
    output: 2,
  });
  assert.deepEqual(acpUsage({ input: 10, output: 5, cacheRead: 2, cacheWrite: 1 }), {
    totalTokens: 18,
    inputTokens: 10,
    outputTokens: 5,
    cachedReadTokens: 2,
    cachedWriteTokens: 1,
  });
});

test("history: compact and clear restart the model's conversation; replay keeps every update", () => {
  const msg = (turn: number, role: "user" | "assistant", text: string): StoreRecord => ({
    t: "message",
    turn,
    message: { role, content: [{ type: "text", text }] },
  });
  const chunk = (turn: number, text: string): StoreRecord => ({
    t: "update",
    turn,
    update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
  });
  const records: StoreRecord[] = [
    { t: "meta", v: 1, sessionId: "s", cwd: "/", createdAt: "" },
    msg(1, "user", "old question"),
    msg(1, "assistant", "old answer"),
    chunk(1, "old answer"),
    { t: "compact", turn: 2, summary: "SUM" },
    chunk(2, "Compacted"),
    msg(3, "user", "new question"),
  ];
  const h = modelHistory(records);
  assert.equal(h.length, 1, "summary and the new question merge into one user message");
  assert.match(JSON.stringify(h), /SUM.*new question/);
  assert.doesNotMatch(JSON.stringify(h), /old question/);
  assert.equal(replayUpdates(records).length, 2);
  assert.deepEqual(modelHistory([...records, { t: "compact", turn: 4, summary: null }]), []);
});
