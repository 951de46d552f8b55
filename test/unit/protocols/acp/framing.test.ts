import assert from "node:assert/strict";
import { test } from "node:test";
import { boundedNdJsonStream, sniffId } from "../../../../src/protocols/acp/framing.ts";

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
