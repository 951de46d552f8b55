// An editor answer is checked against the contract once: by a bridge that checks its answers as they
// come off its wire (checksAnswers: the bridge server, the remote bridge), else by callEditor.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { callEditor, checkAnswer, type EditorBridge } from "../../../../src/core/editor/bridge.ts";
import { isCcbError } from "../../../../src/core/errors.ts";

function bridge(answer: unknown, checksAnswers?: boolean): EditorBridge & { calls: number } {
  return {
    calls: 0,
    ...(checksAnswers ? { checksAnswers } : {}),
    async call() {
      this.calls++;
      return answer;
    },
    onEvent: () => () => {},
  };
}

describe("callEditor checks an answer once", () => {
  it("a bridge that does not check its answers gets them checked here", async () => {
    const b = bridge({ isOpen: true, isDirty: false });
    assert.deepEqual(await callEditor(b, "document.isDirty", { path: "/a" }), { isOpen: true, isDirty: false });
    await assert.rejects(callEditor(bridge({ nope: 1 }), "document.isDirty", { path: "/a" }), (e: unknown) =>
      isCcbError(e, "BRIDGE_ERROR"),
    );
  });

  it("a bridge that checks its answers is not checked again (a shape the contract refuses passes through: control)", async () => {
    const odd = { nope: 1 };
    assert.equal(await callEditor(bridge(odd, true), "document.isDirty", { path: "/a" }), odd);
  });

  it("checkAnswer: the contract's shape, or BRIDGE_ERROR with a hint", () => {
    assert.deepEqual(checkAnswer("document.isDirty", { isOpen: false, isDirty: false }), {
      isOpen: false,
      isDirty: false,
    });
    assert.throws(
      () => checkAnswer("document.isDirty", "yes"),
      (e: unknown) => isCcbError(e, "BRIDGE_ERROR") && /different versions/.test((e as { hint?: string }).hint ?? ""),
    );
  });
});
