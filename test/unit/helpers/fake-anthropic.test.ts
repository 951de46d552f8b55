import assert from "node:assert/strict";
import { test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { isSideRequest, sequence, startFakeAnthropic } from "../../helpers/fake-anthropic.ts";

test("fake Anthropic API streams text, thinking and tool_use through the real SDK", async () => {
  const api = await startFakeAnthropic({
    script: sequence([
      {
        thinking: "let me think",
        text: "Hello, streaming world! ".repeat(4),
        toolUses: [{ id: "toolu_1", name: "read", input: { path: "/a" } }],
      },
    ]),
  });
  try {
    const client = new Anthropic({ apiKey: "sk-test", baseURL: api.url, maxRetries: 0 });
    const stream = client.messages.stream({
      model: "m",
      max_tokens: 100,
      messages: [{ role: "user", content: "hi" }],
      tools: [{ name: "read", input_schema: { type: "object" } }],
    });
    const texts: string[] = [];
    stream.on("text", (t) => texts.push(t));
    const final = await stream.finalMessage();
    assert.ok(texts.length > 1, "text arrives in several deltas");
    assert.equal(texts.join(""), "Hello, streaming world! ".repeat(4));
    assert.equal(final.stop_reason, "tool_use");
    assert.deepEqual(
      final.content.map((c) => c.type),
      ["thinking", "text", "tool_use"],
    );
    const tool = final.content[2];
    assert.ok(tool?.type === "tool_use");
    assert.deepEqual(tool.input, { path: "/a" });
    const req = await api.waitForRequest(1);
    assert.equal(req.body.stream, true);
    assert.equal(isSideRequest(req.body), false);
  } finally {
    await api.close();
  }
});

test("fake Anthropic API: JSON mode, side requests, errors, count_tokens and other paths", async () => {
  const api = await startFakeAnthropic({
    script: ({ index, body }) =>
      index === 1
        ? { status: 529, error: { type: "overloaded_error", message: "Overloaded" } }
        : isSideRequest(body)
          ? { text: "A title" }
          : { text: "x" },
  });
  try {
    const client = new Anthropic({ apiKey: "sk-test", baseURL: api.url, maxRetries: 0 });
    const msg = await client.messages.create({
      model: "m",
      max_tokens: 10,
      messages: [{ role: "user", content: "hi" }],
    });
    assert.deepEqual(msg.content, [{ type: "text", text: "A title" }]);
    await assert.rejects(
      client.messages.create({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }),
      (e: any) => e.status === 529,
    );
    const count = await fetch(`${api.url}/v1/messages/count_tokens`, {
      method: "POST",
      body: JSON.stringify({ messages: [] }),
    });
    assert.equal(typeof ((await count.json()) as any).input_tokens, "number");
    const other = await fetch(`${api.url}/v1/whatever`);
    assert.equal(other.status, 404);
    assert.equal(((await other.json()) as any).type, "error");
    assert.equal((await fetch(api.url, { method: "HEAD" })).status, 200);
    const beta = await fetch(`${api.url}/v1/messages?beta=true`, {
      method: "POST",
      body: JSON.stringify({ model: "m", messages: [], tools: [{ name: "t" }] }),
    });
    assert.equal(((await beta.json()) as any).type, "message");
    assert.equal(api.requests.length, 3);
  } finally {
    await api.close();
  }
});

test("fake Anthropic API: hangAfterFirstChunk keeps the stream open until the client aborts", async () => {
  const api = await startFakeAnthropic({
    script: () => ({ text: "first chunk and more text after it", hangAfterFirstChunk: true }),
  });
  try {
    const client = new Anthropic({ apiKey: "sk-test", baseURL: api.url, maxRetries: 0 });
    const ac = new AbortController();
    const stream = client.messages.stream(
      {
        model: "m",
        max_tokens: 10,
        messages: [{ role: "user", content: "hi" }],
        tools: [{ name: "t", input_schema: { type: "object" } }],
      },
      { signal: ac.signal },
    );
    const first = new Promise<string>((r) => stream.once("text", r));
    assert.equal(await first, "first chunk and more tex");
    await api.waitForFirstByte(1);
    ac.abort();
    await assert.rejects(stream.finalMessage());
  } finally {
    await api.close();
  }
});
