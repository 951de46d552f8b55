import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decide, PermissionRules } from "../../../src/agent/permissions.ts";
import { AGENT_TOOLS } from "../../../src/agent/tools/index.ts";
import { TOOL_PROFILES, workspaceTools } from "../../../src/tools/catalog.ts";

/** The task tools' surface without a workbench: annotations, the front ends that offer them, ACP permissions. */
const tool = (name: string) => {
  const t = workspaceTools.find((x) => x.name === name);
  assert.ok(t, name);
  return t;
};
const acp = (name: string) => {
  const t = AGENT_TOOLS.find((x) => x.name === name);
  assert.ok(t, name);
  return t;
};

describe("task tools: surface and safety", () => {
  it("task_run is annotated like terminal_create (it runs a command); task_list only reads; all need the bridge", () => {
    assert.deepEqual(tool("task_run").annotations, tool("terminal_create").annotations);
    assert.equal(tool("task_list").annotations.readOnlyHint, true);
    assert.equal(tool("task_stop").annotations.destructiveHint, true);
    for (const name of ["task_list", "task_run", "task_stop"]) assert.equal(tool(name).needsBridge, true, name);
  });

  it("every front end offers them: MCP (all), `claude` through the editor profile, ccb acp", () => {
    const editor = TOOL_PROFILES.editor.map((t) => t.name);
    const all = TOOL_PROFILES.all.map((t) => t.name);
    for (const name of ["task_list", "task_run", "task_stop"]) {
      assert.ok(all.includes(name), name);
      assert.ok(editor.includes(name), `editor profile: ${name}`);
      assert.equal(acp(name).input, tool(name).input, `acp: ${name}`);
    }
    assert.ok(!editor.includes("terminal_create"), "control: the editor profile leaves out what claude has");
  });

  it("ccb acp asks before running a task, per task; waiting for a run and listing never ask", () => {
    const rules = new PermissionRules(undefined, "/tmp");
    const run = acp("task_run").acp.access({ name: "build" });
    assert.equal(run.category, "execute");
    assert.equal(acp("task_run").acp.kind, "execute");
    for (const mode of ["default", "auto", "acceptEdits"] as const)
      assert.equal(decide(mode, run, rules).kind, "ask", mode);
    assert.equal(decide("plan", run, rules).kind, "deny");
    assert.notEqual(run.ruleKey, acp("task_run").acp.access({ name: "deploy" }).ruleKey, "one rule per task");
    assert.equal(decide("default", acp("task_run").acp.access({ execution: "task-1" }), rules).kind, "allow");
    assert.equal(decide("default", acp("task_list").acp.access({}), rules).kind, "allow", "control: reads run");
    assert.equal(decide("default", acp("task_stop").acp.access({ execution: "task-1" }), rules).kind, "ask");
  });
});
