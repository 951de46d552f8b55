import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, it } from "node:test";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { LineStdioTransport } from "../../../../src/protocols/mcp/stdio.ts";

/** A transport on in-memory streams: what it delivers, and the frames it writes back. */
async function harness(maxFrameBytes?: number) {
  const input = new PassThrough();
  const output = new PassThrough();
  const t = new LineStdioTransport(input, output, maxFrameBytes === undefined ? {} : { maxFrameBytes });
  const got: JSONRPCMessage[] = [];
  const errors: string[] = [];
  let closed = 0;
  t.onmessage = (m) => got.push(m);
  t.onerror = (e) => errors.push(e.message);
  t.onclose = () => closed++;
  await t.start();
  let written = "";
  output.setEncoding("utf8").on("data", (d: string) => (written += d));
  const replies = () =>
    written
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: unknown; error?: { code: number; message: string } });
  /** Let the stream events run. */
  const settle = () => new Promise((r) => setImmediate(r));
  return { input, output, t, got, errors, replies, settle, closed: () => closed };
}

const req = (id: number, extra = "") => `{"jsonrpc":"2.0","id":${id},"method":"ping"${extra}}`;

describe("LineStdioTransport framing", () => {
  it("joins a frame split across chunks, byte by byte included", async () => {
    const h = await harness();
    const frame = Buffer.from(`${req(1)}\n`);
    h.input.write(frame.subarray(0, 10));
    h.input.write(frame.subarray(10, 11));
    await h.settle();
    assert.equal(h.got.length, 0);
    for (const b of frame.subarray(11)) h.input.write(Buffer.from([b]));
    await h.settle();
    assert.deepEqual(h.got, [{ jsonrpc: "2.0", id: 1, method: "ping" }]);
  });

  it("splits several frames in one chunk, in order, and keeps a trailing partial frame", async () => {
    const h = await harness();
    h.input.write(`${req(1)}\n${req(2)}\n${req(3)}\n{"jsonrpc":"2.0",`);
    await h.settle();
    assert.deepEqual(
      h.got.map((m) => (m as { id: number }).id),
      [1, 2, 3],
    );
    h.input.write(`"id":4,"method":"ping"}\n`);
    await h.settle();
    assert.deepEqual(
      h.got.map((m) => (m as { id: number }).id),
      [1, 2, 3, 4],
    );
  });

  it("accepts CRLF line ends and skips blank lines without an answer", async () => {
    const h = await harness();
    h.input.write(`${req(1)}\r\n\r\n   \n${req(2)}\r\n`);
    await h.settle();
    assert.deepEqual(
      h.got.map((m) => (m as { id: number }).id),
      [1, 2],
    );
    assert.deepEqual(h.replies(), []);
  });

  it("a multi-byte character split across chunks arrives whole", async () => {
    const h = await harness();
    const frame = Buffer.from(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"é€😀"}}\n`);
    const cut = frame.indexOf(0xe2) + 1; // inside the 3-byte sequence of €
    h.input.write(frame.subarray(0, cut));
    h.input.write(frame.subarray(cut));
    await h.settle();
    assert.equal((h.got[0] as unknown as { params: { s: string } }).params.s, "é€😀");
  });

  it("invalid UTF-8 inside a string becomes U+FFFD; outside one it is a Parse error; the connection goes on", async () => {
    const h = await harness();
    h.input.write(
      Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"a'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('b"}}\n'),
      ]),
    );
    h.input.write(
      Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":2,'), Buffer.from([0xc3]), Buffer.from('"method":"ping"}\n')]),
    );
    h.input.write(`${req(3)}\n`);
    await h.settle();
    assert.deepEqual(
      h.got.map((m) => (m as { id: number }).id),
      [1, 3],
    );
    assert.equal((h.got[0] as unknown as { params: { s: string } }).params.s, "a\ufffd\ufffdb");
    assert.deepEqual(h.replies(), [
      { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error: the frame is not valid JSON." } },
    ]);
    assert.equal(h.closed(), 0);
  });

  it("answers JSON that is not JSON-RPC with Invalid Request carrying its id", async () => {
    const h = await harness();
    h.input.write('{"id":7,"hello":1}\n[1,2]\n');
    await h.settle();
    assert.deepEqual(h.got, []);
    assert.deepEqual(
      h.replies().map((r) => [r.id, r.error?.code]),
      [
        [7, -32600],
        [null, -32600],
      ],
    );
  });
});

describe("LineStdioTransport: each message checked once, here", () => {
  it("answers a request with bad params (-32602) or an unknown 2026 version (-32022) itself and delivers the rest", async () => {
    const h = await harness();
    const call = (id: number, params: unknown) =>
      `${JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params })}\n`;
    h.input.write(call(1, { name: 5 }));
    h.input.write(call(2, { name: "fs_read", _meta: { "io.modelcontextprotocol/protocolVersion": "2099-01-01" } }));
    h.input.write(call(3, { name: "fs_read", arguments: { path: "a" } }));
    h.input.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    await h.settle();
    assert.deepEqual(
      h.got.map((m) => (m as { id?: number }).id ?? (m as { method?: string }).method),
      [3, "notifications/initialized"],
    );
    const replies = h.replies();
    assert.deepEqual(
      replies.map((r) => [r.id, r.error?.code]),
      [
        [1, -32602],
        [2, -32022],
      ],
    );
    assert.match(replies[0]?.error?.message ?? "", /^Invalid params for tools\/call: name: /);
    // the client's mistakes are answered, not reported as errors of the transport
    assert.deepEqual(h.errors, []);
  });
});

describe("LineStdioTransport frame cap", () => {
  it("an oversized frame whose id is at its start is answered at once with that id, and the next frame still works", async () => {
    const h = await harness(1024);
    h.input.write(`{"jsonrpc":"2.0","id":"big-1","method":"tools/call","params":{"x":"${"a".repeat(1500)}`);
    await h.settle();
    assert.deepEqual(
      h.replies().map((r) => r.id),
      ["big-1"],
    );
    h.input.write(`${"b".repeat(3000)}"}}\n${req(2)}\n`);
    await h.settle();
    const replies = h.replies();
    assert.equal(replies.length, 1, "answered once");
    assert.equal(replies[0]?.error?.code, -32600);
    assert.match(replies[0]?.error?.message ?? "", /at most 1024 bytes/);
    assert.deepEqual(
      h.got.map((m) => (m as { id: number }).id),
      [2],
    );
  });

  it("an oversized frame with its id at the end (as the SDK writes) is answered at its end with that id", async () => {
    const h = await harness(1024);
    const frame = `{"method":"tools/call","params":{"x":"${"a".repeat(5000)}"},"jsonrpc":"2.0","id":99}\n`;
    for (let i = 0; i < frame.length; i += 700) h.input.write(frame.slice(i, i + 700));
    await h.settle();
    assert.deepEqual(
      h.replies().map((r) => [r.id, r.error?.code]),
      [[99, -32600]],
    );
    assert.deepEqual(h.got, []);
  });

  it("an oversized frame in one chunk with other frames around it: only it is refused", async () => {
    const h = await harness(1024);
    h.input.write(`${req(1)}\n{"jsonrpc":"2.0","id":5,"method":"x","params":{"x":"${"a".repeat(2000)}"}}\n${req(3)}\n`);
    await h.settle();
    assert.deepEqual(
      h.got.map((m) => (m as { id: number }).id),
      [1, 3],
    );
    assert.deepEqual(
      h.replies().map((r) => [r.id, r.error?.code]),
      [[5, -32600]],
    );
  });

  it("a frame of exactly the cap is accepted", async () => {
    const h = await harness(1024);
    const head = '{"jsonrpc":"2.0","id":1,"method":"x","params":{"x":"';
    const tail = '"}}';
    h.input.write(`${head}${"a".repeat(1024 - head.length - tail.length)}${tail}\n`);
    await h.settle();
    assert.equal(h.got.length, 1);
    assert.deepEqual(h.replies(), []);
  });
});

describe("LineStdioTransport lifecycle", () => {
  it("the end of input closes the transport once; sends after close are dropped", async () => {
    const h = await harness();
    h.input.end(`${req(1)}\n`);
    await h.settle();
    await h.settle();
    assert.equal(h.got.length, 1);
    assert.equal(h.closed(), 1);
    await h.t.send({ jsonrpc: "2.0", id: 1, result: {} });
    await h.t.close();
    assert.equal(h.closed(), 1);
  });

  it("writes one line of JSON per message", async () => {
    const h = await harness();
    await h.t.send({ jsonrpc: "2.0", id: 1, result: { text: "a\nb" } });
    await h.settle();
    assert.deepEqual(h.replies(), [{ jsonrpc: "2.0", id: 1, result: { text: "a\nb" } }]);
  });
});
