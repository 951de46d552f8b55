import assert from "node:assert/strict";
import { test } from "node:test";
import {
  ExtensionFrame,
  extensionMethods,
  HelloFrame,
  mapTaggedPaths,
  parseFrame,
  ServerFrame,
  serverMethods,
} from "../../../src/editor-wire/contract.ts";

test("frames: valid ones parse, bad JSON and unknown shapes do not", () => {
  assert.equal(parseFrame(ExtensionFrame, "{"), undefined);
  assert.equal(parseFrame(ExtensionFrame, JSON.stringify({ type: "nope" })), undefined);
  assert.deepEqual(parseFrame(ExtensionFrame, JSON.stringify({ type: "ping" })), { type: "ping" });
  assert.deepEqual(parseFrame(ServerFrame, JSON.stringify({ type: "role", role: "standby" })), {
    type: "role",
    role: "standby",
  });
  assert.equal(parseFrame(ServerFrame, JSON.stringify({ type: "role", role: "boss" })), undefined);
  const ev = {
    type: "event",
    event: {
      type: "selectionChanged",
      path: "/w/a.ts",
      text: "x",
      selection: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } },
      isEmpty: false,
    },
  };
  assert.deepEqual(parseFrame(ExtensionFrame, JSON.stringify(ev)), ev);
  assert.equal(
    parseFrame(ExtensionFrame, JSON.stringify({ type: "event", event: { type: "atMentioned", path: "/a" } })),
    undefined,
  );
  assert.equal(parseFrame(HelloFrame, JSON.stringify({ type: "hello", token: "t" })), undefined);
});

test("every method has params and result schemas and a timeout", () => {
  for (const [name, spec] of Object.entries({ ...extensionMethods, ...serverMethods })) {
    assert.ok(spec.params && spec.result, name);
    assert.equal(typeof spec.timeoutMs, "number", name);
  }
  assert.equal(extensionMethods["diff.open"].timeoutMs, 0, "a diff waits for the person, not a clock");
  assert.ok(
    extensionMethods["diff.open"].params.safeParse({ id: "1", path: "/a", proposedText: "", title: "t" }).success,
  );
  assert.ok(extensionMethods["diff.open"].result.safeParse({ outcome: "accepted", finalText: "x" }).success);
});

test("mapTaggedPaths rewrites uri/location paths, leaves other values, refuses file: URIs", async () => {
  const args = [
    { $type: "uri", path: "a.ts" },
    { $type: "position", line: 1, character: 2 },
    { nested: [{ $type: "location", path: "b.ts", range: {} }] },
    3,
    "s",
  ];
  const out = await mapTaggedPaths(args, async (p) => `/root/${p}`);
  assert.deepEqual(out, [
    { $type: "uri", path: "/root/a.ts" },
    { $type: "position", line: 1, character: 2 },
    { nested: [{ $type: "location", path: "/root/b.ts", range: {} }] },
    3,
    "s",
  ]);
  await assert.rejects(
    mapTaggedPaths([{ $type: "uri", uri: "file:///etc/passwd" }], async (p) => p),
    TypeError,
  );
  assert.deepEqual(await mapTaggedPaths([{ $type: "uri", uri: "untitled:1" }], async (p) => p), [
    { $type: "uri", uri: "untitled:1" },
  ]);
});
