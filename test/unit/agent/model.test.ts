import assert from "node:assert/strict";
import { test } from "node:test";
import { ModelClient } from "../../../src/agent/model.ts";
import { ModelError } from "../../../src/agent/model-error.ts";
import type { ModelSettings } from "../../../src/agent/settings.ts";
import { silentLogger } from "../../../src/core/log.ts";
import { startFakeAnthropic } from "../../helpers/fake-anthropic.ts";

const base: ModelSettings = {
  apiKey: undefined,
  authToken: undefined,
  baseURL: undefined,
  model: "m",
  models: ["m"],
  thinking: "off",
  maxTurns: 5,
  maxTokens: 100,
  permissionMode: undefined,
  prices: {},
  maxRetries: 3,
  retryBaseMs: 5,
  timeoutMs: 30_000,
};
const req = {
  model: "m",
  max_tokens: 10,
  messages: [{ role: "user" as const, content: "hi" }],
  tools: [{ name: "t", input_schema: { type: "object" as const } }],
};

test("model client: API key and auth token reach the API; events arrive as they stream", async () => {
  const api = await startFakeAnthropic({
    script: () => ({ text: "abc ".repeat(20), toolUses: [{ id: "toolu_x", name: "t", input: { a: 1 } }] }),
  });
  try {
    const withKey = new ModelClient({ ...base, apiKey: "sk-ant-key", baseURL: api.url }, silentLogger);
    const kinds: string[] = [];
    const msg = await withKey.stream(req, new AbortController().signal, (e) => kinds.push(e.type));
    assert.equal(msg.stop_reason, "tool_use");
    assert.deepEqual(msg.content.at(-1), { type: "tool_use", id: "toolu_x", name: "t", input: { a: 1 } });
    assert.equal(kinds[0], "message_start");
    assert.equal(kinds.at(-1), "message_stop");
    // this SDK version sends an API key as a bearer credential too
    assert.equal(api.requests[0]!.headers.authorization, "Bearer sk-ant-key");
    const withToken = new ModelClient({ ...base, authToken: "tok-123", baseURL: api.url }, silentLogger);
    await withToken.stream(req, new AbortController().signal, () => undefined);
    assert.equal(api.requests[1]!.headers.authorization, "Bearer tok-123");
  } finally {
    await api.close();
  }
});

test("model client: retries 5xx/overloaded up to maxRetries, not 400/401; missing credentials are a clear ModelError", async () => {
  let n = 0;
  const api = await startFakeAnthropic({
    script: ({ body }) => {
      n++;
      if (body.messages[0].content === "bad")
        return { status: 400, error: { type: "invalid_request_error", message: "nope" } };
      if (body.messages[0].content === "auth")
        return { status: 401, error: { type: "authentication_error", message: "invalid x-api-key" } };
      return { status: 503, error: { type: "api_error", message: "down" } };
    },
  });
  try {
    const c = new ModelClient({ ...base, apiKey: "sk-ant-key", baseURL: api.url }, silentLogger);
    await assert.rejects(
      c.stream(req, new AbortController().signal, () => undefined),
      (e: ModelError) => e instanceof ModelError && /503/.test(e.message),
    );
    assert.equal(n, 4, "1 try + 3 retries");
    n = 0;
    await assert.rejects(
      c.stream({ ...req, messages: [{ role: "user", content: "bad" }] }, new AbortController().signal, () => undefined),
      /400/,
    );
    assert.equal(n, 1);
    n = 0;
    await assert.rejects(
      c.stream(
        { ...req, messages: [{ role: "user", content: "auth" }] },
        new AbortController().signal,
        () => undefined,
      ),
      /refused the credentials \(401\)/,
    );
    assert.equal(n, 1);
    assert.throws(() => new ModelClient(base, silentLogger), /No Anthropic API key/);
  } finally {
    await api.close();
  }
});
