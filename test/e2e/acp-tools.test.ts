import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type * as acp from "@agentclientprotocol/sdk";
import { AgentHarness, tempDataDir } from "../helpers/acp-harness.ts";
import { lastToolResults, toolThenText } from "../helpers/acp-scripts.ts";
import { type FakeAnthropic, startFakeAnthropic } from "../helpers/fake-anthropic.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

const pick =
  (kind: acp.PermissionOptionKind) =>
  (p: acp.RequestPermissionRequest): acp.RequestPermissionResponse => {
    const o = p.options.find((x) => x.kind === kind);
    assert.ok(o, `option ${kind} offered`);
    return { outcome: { outcome: "selected", optionId: o.optionId } };
  };

describe("ccb acp: edits, diffs and permission answers", () => {
  let api: FakeAnthropic;
  const data = tempDataDir();
  const project = tmpdirFixture({ git: true });
  const file = join(project.path, "greeting.txt");
  before(async () => {
    // "edit N" -> an edit replacing line N; results -> "Done: <result text>"
    api = await startFakeAnthropic({
      script: toolThenText(
        (prompt) => {
          const m = /^edit (\d+)/.exec(prompt);
          return m
            ? [
                {
                  name: "edit",
                  input: { path: "greeting.txt", old_string: `line ${m[1]}`, new_string: `LINE ${m[1]}` },
                },
              ]
            : undefined;
        },
        (results) => `Done: ${JSON.stringify(results[0]?.content)}`,
      ),
    });
  });
  after(async () => {
    await api.close();
    data.cleanup();
    project.cleanup();
  });

  test("reject once, allow once (diff + absolute locations), allow always (holds after a restart)", async () => {
    writeFileSync(file, "line 1\nline 2\nline 3\n");
    let answer: (p: acp.RequestPermissionRequest) => acp.RequestPermissionResponse = pick("reject_once");
    let h = AgentHarness.start({ apiUrl: api.url, dataDir: data.path, onPermission: (p) => answer(p) });
    try {
      await h.initialize();
      const { sessionId } = await h.newSession(project.path);

      // reject once: nothing changes, the model is told
      assert.equal((await h.prompt(sessionId, "edit 1")).stopReason, "end_turn");
      assert.equal(readFileSync(file, "utf8"), "line 1\nline 2\nline 3\n");
      const rejected = lastToolResults(api.requests.at(-1)!.body)[0]!;
      assert.equal(rejected.is_error, true);
      assert.match(JSON.stringify(rejected.content), /rejected/);
      const perm = h.permissionRequests[0]!;
      assert.deepEqual(perm.options.map((o) => o.kind).sort(), [
        "allow_always",
        "allow_once",
        "reject_always",
        "reject_once",
      ]);
      const permDiff = (perm.toolCall.content ?? []).find((c) => c.type === "diff") as
        | { path: string; oldText: string; newText: string }
        | undefined;
      assert.ok(permDiff, "the permission request shows the diff");
      assert.equal(permDiff.path, file);
      const failed = h.updatesOf(sessionId, "tool_call_update").at(-1) as { status?: string };
      assert.equal(failed.status, "failed");

      // allow once: the edit lands; tool_call carries kind edit, absolute locations, full-file diff
      answer = pick("allow_once");
      assert.equal((await h.prompt(sessionId, "edit 2")).stopReason, "end_turn");
      assert.equal(readFileSync(file, "utf8"), "line 1\nLINE 2\nline 3\n");
      const call = h.updatesOf(sessionId, "tool_call").at(-1) as acp.ToolCall;
      assert.equal(call.kind, "edit");
      assert.deepEqual(call.locations, [{ path: file }]);
      const done = h
        .updatesOf(sessionId, "tool_call_update")
        .filter((u) => (u as acp.ToolCallUpdate).toolCallId === call.toolCallId)
        .at(-1) as acp.ToolCallUpdate;
      assert.equal(done.status, "completed");
      const diff = done.content?.find((c) => c.type === "diff") as {
        path: string;
        oldText: string | null;
        newText: string;
      };
      assert.deepEqual(diff, {
        type: "diff",
        path: file,
        oldText: "line 1\nline 2\nline 3\n",
        newText: "line 1\nLINE 2\nline 3\n",
      });
      assert.equal(h.permissionRequests.length, 2);

      // allow always: remembered for this project
      answer = pick("allow_always");
      await h.prompt(sessionId, "edit 3");
      assert.equal(readFileSync(file, "utf8"), "line 1\nLINE 2\nLINE 3\n");
      assert.equal(h.permissionRequests.length, 3);
      writeFileSync(file, "line 1\nline 2\nline 3\n");
      await h.prompt(sessionId, "edit 1");
      assert.equal(h.permissionRequests.length, 3, "no new question after allow always");
      assert.equal(readFileSync(file, "utf8"), "LINE 1\nline 2\nline 3\n");
      assert.deepEqual(h.strayStdout, []);
    } finally {
      await h.close();
    }

    // a new process, a new session in the same project: the rule still holds
    answer = pick("reject_once");
    h = AgentHarness.start({ apiUrl: api.url, dataDir: data.path, onPermission: (p) => answer(p) });
    try {
      await h.initialize();
      const { sessionId } = await h.newSession(project.path);
      await h.prompt(sessionId, "edit 2");
      assert.equal(h.permissionRequests.length, 0);
      assert.equal(readFileSync(file, "utf8"), "LINE 1\nLINE 2\nline 3\n");
    } finally {
      await h.close();
    }
  });

  test("a new file gets a diff with oldText null; acceptEdits needs no question; plan mode refuses until approved", async () => {
    const api2 = await startFakeAnthropic({
      script: toolThenText((prompt) => {
        if (prompt.startsWith("create"))
          return [{ name: "write", input: { path: "new/file.txt", content: "fresh\n" } }];
        if (prompt.startsWith("plan")) return [{ name: "exit_plan_mode", input: { plan: "1. change it" } }];
        if (prompt.startsWith("write")) return [{ name: "write", input: { path: "planned.txt", content: "x" } }];
        return undefined;
      }),
    });
    let answer = pick("allow_once");
    const h = AgentHarness.start({ apiUrl: api2.url, dataDir: data.path, onPermission: (p) => answer(p) });
    try {
      await h.initialize();
      const { sessionId } = await h.newSession(project.path);
      await h.agent.request("session/set_mode", { sessionId, modeId: "acceptEdits" });
      await h.waitForUpdate((u) => u.sessionId === sessionId && u.update.sessionUpdate === "current_mode_update");
      await h.prompt(sessionId, "create it");
      assert.equal(h.permissionRequests.length, 0);
      const abs = join(project.path, "new/file.txt");
      assert.equal(readFileSync(abs, "utf8"), "fresh\n");
      const done = h.updatesOf(sessionId, "tool_call_update").at(-1) as acp.ToolCallUpdate;
      assert.deepEqual(
        done.content?.find((c) => c.type === "diff"),
        { type: "diff", path: abs, oldText: null, newText: "fresh\n" },
      );

      // plan mode: writes refused without asking
      await h.agent.request("session/set_mode", { sessionId, modeId: "plan" });
      await h.prompt(sessionId, "write planned");
      assert.equal(h.permissionRequests.length, 0);
      assert.match(JSON.stringify(lastToolResults(api2.requests.at(-1)!.body)[0]?.content), /Plan mode is read-only/);
      // approving the plan switches mode (allow_always option = accept edits)
      answer = pick("allow_always");
      await h.prompt(sessionId, "plan done");
      assert.equal(h.permissionRequests.length, 1);
      assert.equal(h.permissionRequests[0]!.toolCall.kind, "switch_mode");
      const modes = h
        .updatesOf(sessionId, "current_mode_update")
        .map((u) => (u as { currentModeId: string }).currentModeId);
      assert.deepEqual(modes, ["acceptEdits", "plan", "acceptEdits"]);
      await h.prompt(sessionId, "write planned");
      assert.equal(readFileSync(join(project.path, "planned.txt"), "utf8"), "x");
    } finally {
      await h.close();
      await api2.close();
    }
  });
});
