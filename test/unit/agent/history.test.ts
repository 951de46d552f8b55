import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import {
  INTERRUPTED_TEXT,
  interruptedTurns,
  modelHistory,
  repairHistory,
  replayUpdates,
} from "../../../src/agent/history.ts";
import type { StoreRecord } from "../../../src/agent/store.ts";

test("history: replay marks interrupted turns; repair answers dangling tool_use and merges user messages", () => {
  const records: StoreRecord[] = [
    { t: "meta", v: 1, sessionId: "s", cwd: "/p", createdAt: "x" },
    { t: "turn_start", turn: 1, at: "x" },
    { t: "update", turn: 1, update: { sessionUpdate: "user_message_chunk", content: { type: "text", text: "q1" } } },
    { t: "message", turn: 1, message: { role: "user", content: [{ type: "text", text: "q1" }] } },
    {
      t: "message",
      turn: 1,
      message: { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "read", input: {} }] },
    },
    { t: "turn_start", turn: 2, at: "x" },
    { t: "message", turn: 2, message: { role: "user", content: [{ type: "text", text: "q2" }] } },
  ];
  assert.deepEqual(interruptedTurns(records), [1, 2]);
  const replay = replayUpdates(records);
  assert.equal(
    replay.filter(
      (u) => u.sessionUpdate === "agent_message_chunk" && (u.content as { text: string }).text === INTERRUPTED_TEXT,
    ).length,
    2,
  );
  const h = modelHistory(records);
  assert.deepEqual(
    h.map((m) => m.role),
    ["user", "assistant", "user"],
  );
  const last = h[2]!.content as { type: string; tool_use_id?: string }[];
  assert.equal(last[0]!.type, "tool_result");
  assert.equal(last[0]!.tool_use_id, "t1");
  assert.equal(last[1]!.type, "text");
  // property: repaired histories alternate roles and answer every tool_use
  fc.assert(
    fc.property(
      fc.array(fc.record({ role: fc.constantFrom("user", "assistant"), tool: fc.boolean() }), { maxLength: 12 }),
      (spec) => {
        const msgs = spec.map((s, i) =>
          s.role === "assistant" && s.tool
            ? {
                role: "assistant" as const,
                content: [{ type: "tool_use" as const, id: `t${i}`, name: "x", input: {} }],
              }
            : { role: s.role as "user" | "assistant", content: [{ type: "text" as const, text: `m${i}` }] },
        );
        const out = repairHistory(msgs);
        for (let i = 1; i < out.length; i++) assert.notEqual(out[i]!.role, out[i - 1]!.role);
        out.forEach((m, i) => {
          if (m.role !== "assistant") return;
          const uses = (m.content as { type: string; id?: string }[]).filter((b) => b.type === "tool_use");
          const next = (out[i + 1]?.content ?? []) as { type: string; tool_use_id?: string }[];
          for (const u of uses) assert.ok(next.some((b) => b.type === "tool_result" && b.tool_use_id === u.id));
        });
      },
    ),
  );
});

test("history: compact and clear restart the model's conversation; replay keeps every update", () => {
  const msg = (turn: number, role: "user" | "assistant", text: string): StoreRecord => ({
    t: "message",
    turn,
    message: { role, content: [{ type: "text", text }] },
  });
  const chunk = (turn: number, text: string): StoreRecord => ({
    t: "update",
    turn,
    update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
  });
  const records: StoreRecord[] = [
    { t: "meta", v: 1, sessionId: "s", cwd: "/", createdAt: "" },
    msg(1, "user", "old question"),
    msg(1, "assistant", "old answer"),
    chunk(1, "old answer"),
    { t: "compact", turn: 2, summary: "SUM" },
    chunk(2, "Compacted"),
    msg(3, "user", "new question"),
  ];
  const h = modelHistory(records);
  assert.equal(h.length, 1, "summary and the new question merge into one user message");
  assert.match(JSON.stringify(h), /SUM.*new question/);
  assert.doesNotMatch(JSON.stringify(h), /old question/);
  assert.equal(replayUpdates(records).length, 2);
  assert.deepEqual(modelHistory([...records, { t: "compact", turn: 4, summary: null }]), []);
});
