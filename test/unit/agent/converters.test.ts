import assert from "node:assert/strict";
import { test } from "node:test";
import { mapStopReason, promptToModel, streamEventToUpdate, todosToPlan } from "../../../src/agent/converters.ts";

test("converters: stream events map to chunks; stop reasons map exhaustively", () => {
  assert.deepEqual(
    streamEventToUpdate({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "hi" } }),
    { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" } },
  );
  assert.deepEqual(
    streamEventToUpdate({ type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "hm" } }),
    { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hm" } },
  );
  assert.equal(
    streamEventToUpdate({
      type: "content_block_delta",
      index: 0,
      delta: { type: "input_json_delta", partial_json: "{" },
    }),
    undefined,
  );
  assert.equal(streamEventToUpdate({ type: "message_stop" }), undefined);
  assert.equal(mapStopReason("tool_use"), "continue");
  assert.equal(mapStopReason("end_turn"), "end_turn");
  assert.equal(mapStopReason("max_tokens"), "max_tokens");
  assert.equal(mapStopReason("refusal"), "refusal");
  assert.equal(mapStopReason(null), "end_turn");
  assert.deepEqual(promptToModel([{ type: "resource", resource: { uri: "file:///a.ts", text: "code" } }]), [
    { type: "text", text: '<file uri="file:///a.ts">\ncode\n</file>' },
  ]);
  assert.deepEqual(promptToModel([]), [{ type: "text", text: "(empty prompt)" }]);
  assert.deepEqual(todosToPlan([{ content: "a", status: "pending", priority: "high" }]), {
    sessionUpdate: "plan",
    entries: [{ content: "a", status: "pending", priority: "high" }],
  });
});
