import assert from "node:assert/strict";
import { test } from "node:test";
import { acpUsage, costOf, priceOf } from "../../../src/agent/pricing.ts";

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
