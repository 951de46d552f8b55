import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LIMITS } from "../../../src/stream/limits.ts";
import { viewerMessageSchema } from "../../../src/stream/protocol.ts";

const parse = (m: unknown) => viewerMessageSchema.safeParse(m);
const ok = (m: unknown) => {
  const r = parse(m);
  assert.ok(r.success, `${JSON.stringify(m)} should be accepted: ${r.error?.issues[0]?.message}`);
  return r.data;
};
const refused = (m: unknown, why: string) => assert.equal(parse(m).success, false, `${why}: ${JSON.stringify(m)}`);

describe("a viewer's input (src/stream/protocol.ts)", () => {
  it("takes each kind of message and fills the defaults a browser may leave out", () => {
    assert.deepEqual(ok({ type: "resize", width: 1280, height: 800 }), { type: "resize", width: 1280, height: 800 });
    assert.deepEqual(ok({ type: "pointer", action: "down", x: 10.5, y: 0 }), {
      type: "pointer",
      action: "down",
      x: 10.5,
      y: 0,
      button: "left",
      clickCount: 1,
      modifiers: 0,
    });
    assert.deepEqual(ok({ type: "wheel", x: 1, y: 2, deltaX: -120, deltaY: 240.5 }), {
      type: "wheel",
      x: 1,
      y: 2,
      deltaX: -120,
      deltaY: 240.5,
    });
    assert.deepEqual(ok({ type: "key", action: "down", key: "a", text: "a", modifiers: 8 }), {
      type: "key",
      action: "down",
      key: "a",
      code: "",
      text: "a",
      modifiers: 8,
    });
    assert.deepEqual(ok({ type: "text", text: "héllo\n" }), { type: "text", text: "héllo\n" });
  });

  it("keeps sizes within the bounds the browser is allowed to take (and takes the bounds themselves)", () => {
    ok({ type: "resize", width: LIMITS.minSize, height: LIMITS.minSize });
    ok({ type: "resize", width: LIMITS.maxWidth, height: LIMITS.maxHeight });
    refused({ type: "resize", width: LIMITS.minSize - 1, height: 800 }, "too narrow");
    refused({ type: "resize", width: 1280, height: LIMITS.minSize - 1 }, "too low");
    refused({ type: "resize", width: LIMITS.maxWidth + 1, height: 800 }, "wider than 4K");
    refused({ type: "resize", width: 1280, height: LIMITS.maxHeight + 1 }, "taller than 4K");
    refused({ type: "resize", width: 1280.5, height: 800 }, "fractional pixels");
    refused({ type: "resize", width: "1280", height: 800 }, "a string");
    refused({ type: "resize", width: 1e9, height: 1e9 }, "a memory bomb of a page size");
  });

  it("refuses coordinates and deltas that are not finite, negative or huge", () => {
    for (const x of [-1, 10_001, Number.NaN, Number.POSITIVE_INFINITY, "5", null])
      refused({ type: "pointer", action: "move", x, y: 1 }, `x = ${String(x)}`);
    refused({ type: "wheel", x: 1, y: 1, deltaX: 10_001, deltaY: 0 }, "deltaX too big");
    refused({ type: "wheel", x: 1, y: 1, deltaX: 0, deltaY: -10_001 }, "deltaY too small");
    refused({ type: "wheel", x: 1, y: 1, deltaX: 0 }, "deltaY missing");
  });

  it("refuses unknown actions, buttons, click counts and modifier bits", () => {
    refused({ type: "pointer", action: "drag", x: 1, y: 1 }, "unknown action");
    refused({ type: "pointer", action: "down", x: 1, y: 1, button: "back" }, "unknown button");
    refused({ type: "pointer", action: "down", x: 1, y: 1, clickCount: 4 }, "four clicks");
    refused({ type: "pointer", action: "down", x: 1, y: 1, modifiers: 16 }, "a modifier bit CDP does not have");
    refused({ type: "pointer", action: "down", x: 1, y: 1, modifiers: -1 }, "negative modifiers");
    refused({ type: "key", action: "press", key: "a" }, "unknown key action");
  });

  it("bounds every string a viewer sends", () => {
    ok({ type: "key", action: "down", key: "k".repeat(LIMITS.maxKey) });
    refused({ type: "key", action: "down", key: "k".repeat(LIMITS.maxKey + 1) }, "a key name over the limit");
    refused({ type: "key", action: "down", key: "" }, "an empty key");
    refused({ type: "key", action: "down", key: "a", code: "c".repeat(LIMITS.maxKey + 1) }, "a code over the limit");
    refused({ type: "key", action: "down", key: "a", text: "123456789" }, "key text over 8 characters");
    ok({ type: "text", text: "t".repeat(LIMITS.maxText) });
    refused({ type: "text", text: "t".repeat(LIMITS.maxText + 1) }, "a paste over the limit");
    refused({ type: "text", text: "" }, "an empty paste");
  });

  it("refuses anything that is not one of the five messages, and drops keys it does not know", () => {
    for (const m of [
      null,
      7,
      "resize",
      [],
      {},
      { type: "navigate", url: "file:///etc/passwd" },
      { type: "Runtime.evaluate" },
    ])
      refused(m, "not a viewer message");
    // A DevTools method smuggled beside a valid message never reaches the screencast.
    const m = ok(JSON.parse('{"type":"text","text":"x","method":"Page.navigate","__proto__":{"polluted":true}}'));
    assert.deepEqual(Object.keys(m).sort(), ["text", "type"]);
    assert.equal(({} as { polluted?: boolean }).polluted, undefined);
  });
});
