import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PROTOCOL_VERSION_META_KEY, specTypeSchemas } from "@modelcontextprotocol/server";
import fc from "fast-check";
import { admitMessage, isRequest, refuseRequest, specIssues } from "../../../../src/protocols/mcp/edge.ts";

/** What stdio answered before the one pass: the spec's JSONRPCMessage schema, then `refuseRequest`. */
function twoPasses(value: unknown): string {
  if (specIssues(specTypeSchemas.JSONRPCMessage, value)) return "frame -32600";
  if (isRequest(value)) {
    const r = refuseRequest(value);
    if (r) return `refused ${r.code} ${r.message} ${JSON.stringify(r.data)}`;
  }
  return "delivered";
}

function onePass(value: unknown): string {
  const a = admitMessage(value);
  if (a.refusal === undefined) {
    assert.equal(a.message, value, "a delivered message is the parsed value itself");
    return "delivered";
  }
  if (a.frame) return `frame ${a.refusal.code}`;
  return `refused ${a.refusal.code} ${a.refusal.message} ${JSON.stringify(a.refusal.data)}`;
}

const any = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
);
const id = fc.oneof(fc.integer(), fc.string(), fc.double(), fc.constant(null), fc.constant(undefined), fc.constant({}));
const method = fc.constantFrom(
  "tools/call",
  "tools/list",
  "initialize",
  "ping",
  "logging/setLevel",
  "resources/read",
  "resources/list",
  "server/discover",
  "notifications/initialized",
  "notifications/cancelled",
  "acme/unknown",
);
const meta = fc.record(
  {
    progressToken: fc.oneof(fc.integer(), fc.string(), fc.double(), fc.constant({})),
    [PROTOCOL_VERSION_META_KEY]: fc.oneof(fc.constantFrom("2026-07-28", "2025-11-25", "2099-01-01"), any),
    "io.modelcontextprotocol/clientInfo": fc.oneof(fc.constant({ name: "t", version: "1" }), any),
  },
  { requiredKeys: [] },
);
const params = fc.oneof(
  fc.constant(undefined),
  any,
  fc.record(
    {
      name: fc.oneof(fc.constantFrom("fs_read", "nope"), any),
      arguments: fc.oneof(fc.constant({ path: "a.txt" }), any),
      uri: fc.oneof(fc.constant("file:///a"), any),
      cursor: fc.oneof(fc.string(), any),
      level: fc.oneof(fc.constantFrom("info", "loud"), any),
      protocolVersion: fc.oneof(fc.constant("2025-11-25"), any),
      capabilities: fc.oneof(fc.constant({}), any),
      clientInfo: fc.oneof(fc.constant({ name: "t", version: "1" }), any),
      requestId: id,
      _meta: fc.oneof(meta, any),
    },
    { requiredKeys: [] },
  ),
);
const message = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant("2.0"), fc.constant("2.0"), fc.constant("1.0"), any),
    id,
    method: fc.oneof(method, any),
    params,
    result: fc.oneof(fc.constant({}), any),
    error: fc.oneof(fc.constant({ code: -1, message: "x" }), any),
  },
  { requiredKeys: [] },
);

describe("admitMessage: one pass, the same answers as the two checks it replaces", () => {
  it("answers every generated value as JSONRPCMessage-then-refuseRequest did (code, text, data, delivery)", () => {
    fc.assert(
      fc.property(fc.oneof(message, any), (value) => {
        // JSON round trip: a frame's value is what JSON.parse gives (no undefined members).
        const v = JSON.parse(JSON.stringify(value) ?? "null") as unknown;
        assert.equal(onePass(v), twoPasses(v));
      }),
      { numRuns: 4000 },
    );
  });

  it("refuses, one by one, the cases where the method's schema alone would have answered otherwise", () => {
    // Each would pass or get -32602 from the tools/call schema, but is no JSON-RPC request: -32600.
    for (const v of [
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: 5 },
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: [] },
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x", _meta: { progressToken: {} } } },
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x" }, result: {} },
      { jsonrpc: "2.0", id: 1.5, method: "tools/call", params: { name: "x" } },
      { jsonrpc: "2.0", id: 2 ** 53, method: "ping" },
      { jsonrpc: "1.0", id: 1, method: "tools/call", params: { name: "x" } },
    ]) {
      assert.equal(onePass(v), "frame -32600", JSON.stringify(v));
      assert.equal(twoPasses(v), "frame -32600", JSON.stringify(v));
    }
  });

  it("a valid call of either era is delivered; bad params, an unknown version are refused with the request's id", () => {
    const ok = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "fs_read", arguments: { path: "a" } } };
    assert.equal(admitMessage(ok).refusal, undefined);
    const modern = { ...ok, params: { ...ok.params, _meta: { [PROTOCOL_VERSION_META_KEY]: "2026-07-28" } } };
    assert.equal(admitMessage(modern).refusal, undefined);
    const bad = admitMessage({ ...ok, params: { name: 5 } });
    assert.equal(bad.refusal?.code, -32602);
    assert.match(bad.refusal?.message ?? "", /^Invalid params for tools\/call: name: /);
    assert.equal(bad.refusal && bad.id, 7);
    const future = admitMessage({
      ...ok,
      params: { ...ok.params, _meta: { [PROTOCOL_VERSION_META_KEY]: "2099-01-01" } },
    });
    assert.equal(future.refusal?.code, -32022);
    assert.deepEqual(future.refusal?.data, { supported: ["2026-07-28"], requested: "2099-01-01" });
  });
});
