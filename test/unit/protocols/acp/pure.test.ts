import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import fc from "fast-check";
import { availableCommands, expandCommand, loadCommands } from "../../../../src/protocols/acp/commands.ts";
import {
  mapStopReason,
  promptToModel,
  streamEventToUpdate,
  todosToPlan,
} from "../../../../src/protocols/acp/converters.ts";
import {
  INTERRUPTED_TEXT,
  interruptedTurns,
  modelHistory,
  repairHistory,
  replayUpdates,
} from "../../../../src/protocols/acp/history.ts";
import { bypassRefusal, configOptions, MODE_IDS, modeState } from "../../../../src/protocols/acp/modes.ts";
import { decide, isSafeCommand, PermissionRules, type ToolAccess } from "../../../../src/protocols/acp/permissions.ts";
import { loadModelSettings, resolveAgentEnv } from "../../../../src/protocols/acp/settings.ts";
import { SessionStore, type StoreRecord } from "../../../../src/protocols/acp/store.ts";
import { stripAnsi } from "../../../../src/protocols/acp/tools/bash.ts";
import { applyEdit } from "../../../../src/protocols/acp/tools/edit.ts";

const tmp = () => mkdtempSync(join(tmpdir(), "ccb-acp-unit-"));

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

test("permissions: every mode decides as documented", () => {
  const rules = new PermissionRules(undefined, "/p");
  const edit: ToolAccess = { category: "edit", ruleKey: "edit" };
  const exec: ToolAccess = { category: "execute", ruleKey: "bash:rm -rf x" };
  const safe: ToolAccess = { category: "execute", ruleKey: "bash:ls", safe: true };
  const read: ToolAccess = { category: "read", ruleKey: "read" };
  const table: Record<string, string[]> = {
    default: ["allow", "ask", "ask", "ask"],
    acceptEdits: ["allow", "allow", "ask", "ask"],
    plan: ["allow", "deny", "deny", "deny"],
    dontAsk: ["allow", "deny", "deny", "deny"],
    bypassPermissions: ["allow", "allow", "allow", "allow"],
    auto: ["allow", "allow", "ask", "allow"],
  };
  for (const mode of MODE_IDS) {
    assert.deepEqual(
      [read, edit, exec, safe].map((a) => decide(mode, a, rules).kind),
      table[mode],
      mode,
    );
  }
  rules.remember("bash:rm -rf x", "allow");
  assert.equal(decide("default", exec, rules).kind, "allow");
  assert.equal(decide("dontAsk", exec, rules).kind, "allow");
  assert.equal(decide("plan", exec, rules).kind, "deny", "plan mode stays read-only even with rules");
  rules.remember("edit", "deny");
  assert.equal(decide("bypassPermissions", edit, rules).kind, "deny");
  assert.equal(isSafeCommand("git status"), true);
  assert.equal(isSafeCommand("ls -la; rm -rf /"), false);
  assert.equal(isSafeCommand("git push"), false);
  assert.equal(isSafeCommand("find . -delete"), false);
});

test("permissions: always-rules persist per project", () => {
  const dir = tmp();
  try {
    const a = PermissionRules.forProject(dir, "/proj/a");
    a.remember("edit", "allow");
    a.remember("bash:make", "deny");
    const again = PermissionRules.forProject(dir, "/proj/a");
    assert.equal(again.isAllowed("edit"), true);
    assert.equal(again.isDenied("bash:make"), true);
    assert.equal(PermissionRules.forProject(dir, "/proj/b").isAllowed("edit"), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("modes: bypassPermissions refused as root outside a sandbox, with the reason", () => {
  const root = { uid: 0, env: {}, containerMarker: false };
  assert.match(bypassRefusal(root)!, /root outside a sandbox/);
  assert.equal(bypassRefusal({ ...root, containerMarker: true }), undefined);
  assert.equal(bypassRefusal({ ...root, env: { CCB_SANDBOX: "1" } }), undefined);
  assert.equal(bypassRefusal({ uid: 1000, env: {}, containerMarker: false }), undefined);
  assert.ok(!modeState("default", root).availableModes.some((m) => m.id === "bypassPermissions"));
  const opts = configOptions({ mode: "plan", model: "m1", models: ["m1", "m2"], thought: "off" }, root);
  assert.deepEqual(
    opts.map((o) => [o.id, o.category, o.currentValue]),
    [
      ["mode", "mode", "plan"],
      ["model", "model", "m1"],
      ["thought_level", "thought_level", "off"],
    ],
  );
});

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

test("store: append-only JSONL, torn last line ignored, fork, list by cwd, delete", () => {
  const dir = tmp();
  try {
    const store = new SessionStore(dir);
    const w = store.create("ccb-aaaaaaaa", "/p");
    w.append({ t: "title", title: "hello" });
    writeFileSync(store.pathOf("ccb-aaaaaaaa"), '{"t":"turn_start","tu', { flag: "a" });
    const s = store.read("ccb-aaaaaaaa");
    assert.equal(s.title, "hello");
    assert.equal(s.records.length, 2);
    store.fork("ccb-aaaaaaaa", "ccb-bbbbbbbb", "/p");
    store.create("ccb-cccccccc", "/q");
    assert.deepEqual(
      store
        .list("/p")
        .map((x) => x.sessionId)
        .sort(),
      ["ccb-aaaaaaaa", "ccb-bbbbbbbb"],
    );
    assert.equal(store.list().length, 3);
    assert.equal(store.delete("ccb-bbbbbbbb"), true);
    assert.equal(store.exists("ccb-bbbbbbbb"), false);
    assert.throws(() => store.pathOf("../../etc/passwd"), /Invalid session id/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("settings: env beats project beats user; empty PATH/HOME are clear errors", () => {
  const dir = tmp();
  try {
    const cwd = join(dir, "proj");
    mkdirSync(join(cwd, ".ccb"), { recursive: true });
    mkdirSync(join(dir, "cfg", "ccb"), { recursive: true });
    writeFileSync(
      join(dir, "cfg", "ccb", "settings.json"),
      JSON.stringify({
        env: { ANTHROPIC_API_KEY: "user-key", ANTHROPIC_BASE_URL: "http://user" },
        model: "user-model",
        thinking: "low",
      }),
    );
    writeFileSync(
      join(cwd, ".ccb", "settings.json"),
      JSON.stringify({ env: { ANTHROPIC_BASE_URL: "http://project" }, model: "project-model" }),
    );
    const env = { PATH: "/bin", HOME: dir, XDG_CONFIG_HOME: join(dir, "cfg") };
    const agentEnv = resolveAgentEnv(env);
    assert.equal(agentEnv.dataDir, join(dir, ".local", "share", "ccb"));
    const s = loadModelSettings(agentEnv, cwd, env);
    assert.equal(s.apiKey, "user-key");
    assert.equal(s.baseURL, "http://project");
    assert.equal(s.model, "project-model");
    assert.equal(s.thinking, "low");
    assert.ok(s.models.includes("project-model"));
    const s2 = loadModelSettings(agentEnv, cwd, {
      ...env,
      ANTHROPIC_MODEL: "env-model",
      ANTHROPIC_BASE_URL: "http://env",
    });
    assert.equal(s2.model, "env-model");
    assert.equal(s2.baseURL, "http://env");
    assert.throws(() => resolveAgentEnv({ HOME: dir }), /PATH is empty/);
    assert.throws(() => resolveAgentEnv({ PATH: "/bin", HOME: "" }), /HOME is not set/);
    assert.equal(resolveAgentEnv({ PATH: "/bin", CCB_DATA_DIR: "/data" }).dataDir, "/data");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("commands: built-ins, project files with frontmatter, $ARGUMENTS expansion", () => {
  const dir = tmp();
  try {
    mkdirSync(join(dir, ".claude", "commands"), { recursive: true });
    mkdirSync(join(dir, ".ccb", "commands"), { recursive: true });
    writeFileSync(join(dir, ".claude", "commands", "fix.md"), "Fix issue $ARGUMENTS now");
    writeFileSync(join(dir, ".ccb", "commands", "review.md"), "---\ndescription: Our review\n---\nReview strictly.");
    const cmds = loadCommands(dir, undefined, undefined);
    assert.equal(cmds.find((c) => c.name === "review")?.description, "Our review", "project overrides built-in");
    assert.equal(expandCommand("/fix 42", cmds), "Fix issue 42 now");
    assert.equal(expandCommand("/review focus on tests", cmds), "Review strictly.\n\nfocus on tests");
    assert.equal(expandCommand("/unknown x", cmds), undefined);
    assert.equal(expandCommand("not a command", cmds), undefined);
    assert.ok(availableCommands(cmds).some((c) => c.name === "init"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("edit tool: exact replacement, uniqueness, replace_all; bash output loses ANSI codes", () => {
  assert.equal(applyEdit("a b a", { path: "f", old_string: "b", new_string: "$&c" }, "/f"), "a $&c a");
  assert.throws(() => applyEdit("a b a", { path: "f", old_string: "a", new_string: "x" }, "/f"), /occurs 2 times/);
  assert.equal(applyEdit("a b a", { path: "f", old_string: "a", new_string: "x", replace_all: true }, "/f"), "x b x");
  assert.throws(() => applyEdit("abc", { path: "f", old_string: "zz", new_string: "x" }, "/f"), /not found/);
  assert.equal(stripAnsi("\x1b[31mred\x1b[0m\r\nok"), "red\nok");
});
