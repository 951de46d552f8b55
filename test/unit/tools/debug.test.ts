import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { decide, PermissionRules } from "../../../src/agent/permissions.ts";
import { AGENT_TOOLS } from "../../../src/agent/tools/index.ts";
import { confineDebugParams, confineJoinedSession } from "../../../src/core/editor/debug-confine.ts";
import { Workspace } from "../../../src/core/workspace.ts";
import { workspaceTools } from "../../../src/tools/catalog.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

/** The debug tools' safety surface without a workbench: annotations, ACP permissions, path confinement. */
const ws = tmpdirFixture({ prefix: "ccb-dbg-unit-" });
mkdirSync(join(ws.path, "src"));
writeFileSync(join(ws.path, "src/app.js"), "1;\n");
after(() => ws.cleanup());

const tool = (name: string) => {
  const t = workspaceTools.find((x) => x.name === name);
  assert.ok(t, name);
  return t;
};

describe("debug tools: safety", () => {
  it("the tools that run a program are annotated like terminal_create", () => {
    const terminal = tool("terminal_create").annotations;
    for (const name of ["debug_start", "debug_evaluate", "debug_control"])
      assert.deepEqual(tool(name).annotations, terminal, name);
    for (const name of ["debug_status", "debug_wait", "debug_stack", "debug_variables", "debug_configurations"])
      assert.equal(tool(name).annotations.readOnlyHint, true, name);
    for (const t of workspaceTools.filter((x) => x.name.startsWith("debug_")))
      assert.equal(t.needsBridge, true, t.name);
  });

  it("ccb acp asks before starting a debuggee or evaluating in it, as for a command; reads never ask", () => {
    const rules = new PermissionRules(undefined, ws.path);
    const acp = (name: string) => {
      const t = AGENT_TOOLS.find((x) => x.name === name);
      assert.ok(t, name);
      return t;
    };
    const start = acp("debug_start").acp.access({ name: "Run" });
    assert.equal(start.category, "execute");
    assert.equal(acp("debug_start").acp.kind, "execute");
    for (const mode of ["default", "auto", "acceptEdits"] as const)
      assert.equal(decide(mode, start, rules).kind, "ask", mode);
    assert.equal(decide("plan", start, rules).kind, "deny");
    assert.equal(acp("debug_evaluate").acp.access({ expression: "x" }).category, "execute");
    assert.equal(decide("default", acp("debug_control").acp.access({ action: "continue" }), rules).kind, "ask");
    assert.equal(decide("default", acp("debug_stack").acp.access({}), rules).kind, "allow", "control: reads run");
    const join = acp("debug_join").acp.access({ session: "s-1" });
    assert.equal(decide("default", join, rules).kind, "ask", "joining the person's session asks");
    assert.notEqual(join.ruleKey, acp("debug_join").acp.access({ session: "s-2" }).ruleKey, "per session");
  });

  it("joins only a person's session whose program, cwd and envFile are in the workspace", async () => {
    const w = new Workspace([ws.path]);
    await confineJoinedSession(w, { program: join(w.primary, "src/app.js"), cwd: w.primary });
    await confineJoinedSession(w, {}); // an attach configuration names no file
    await assert.rejects(confineJoinedSession(w, { program: join(w.primary, "src/app.js"), cwd: "/tmp" }), (err) => {
      assert.match(String(err), /PATH_OUTSIDE_WORKSPACE|"cwd" is outside the workspace/);
      assert.doesNotMatch(String(err), /\/tmp/, "the outside path is not shown");
      return true;
    });
    await assert.rejects(confineJoinedSession(w, { program: "/etc/passwd" }), /"program" is outside/);
  });

  it("confines breakpoint files and an inline configuration's program, cwd and envFile", async () => {
    const w = new Workspace([ws.path]);
    const ok = await confineDebugParams(w, "debug.start", {
      configuration: { type: "node", program: "${workspaceFolder}/src/app.js", cwd: "src" },
    });
    const config = ok.configuration as Record<string, string>;
    assert.equal(config.program, join(w.primary, "src/app.js"));
    assert.equal(config.cwd, join(w.primary, "src"));
    await assert.rejects(
      confineDebugParams(w, "debug.start", { configuration: { program: "/etc/passwd" } }),
      /outside|PATH_OUTSIDE/i,
    );
    await assert.rejects(
      confineDebugParams(w, "debug.start", { configuration: { program: "${workspaceFolder}/../../etc/passwd" } }),
      /outside|PATH_OUTSIDE/i,
    );
    await assert.rejects(
      confineDebugParams(w, "debug.start", { configuration: { envFile: "${env:HOME}/.env" } }),
      /"envFile" uses a variable ccb cannot check/,
    );
    await assert.rejects(
      confineDebugParams(w, "debug.start", { configuration: { envFile: "${userHome}/.env" } }),
      /"envFile" is outside the workspace|NOT_FOUND|does not exist/,
    );
    // a named configuration's copy from disk is checked the same way, with its platform override
    await assert.rejects(
      confineDebugParams(w, "debug.start", {
        name: "n",
        launch: { name: "n", program: "src/app.js", linux: { program: "/etc/passwd" } },
      }),
      /"program" is outside the workspace/,
    );
    await assert.rejects(
      confineDebugParams(w, "debug.start", {
        name: "n",
        launch: { name: "n", program: "src/app.js", runtimeExecutable: "/bin/sh" },
      }),
      /"runtimeExecutable" is outside the workspace/,
    );
    await assert.rejects(
      confineDebugParams(w, "debug.start", {
        configuration: { program: "src/app.js", args: ["${command:ccb.diff.accept}"] },
      }),
      /"args" uses \$\{command:…\}/,
    );
    // a name ccb did not find in launch.json (the editor's own copy, e.g. from settings) is not started
    await assert.rejects(
      confineDebugParams(w, "debug.start", { name: "From settings" }),
      /No launch configuration named "From settings" in the workspace's \.vscode\/launch\.json/,
    );
    // control: a command name for the runtime, a workspace program
    const named = await confineDebugParams(w, "debug.start", {
      name: "n",
      launch: { name: "n", program: "${workspaceFolder}/src/app.js", runtimeExecutable: "node" },
    });
    assert.deepEqual(named.launch, { name: "n", program: join(w.primary, "src/app.js"), runtimeExecutable: "node" });
    await assert.rejects(
      confineDebugParams(w, "debug.setBreakpoints", { breakpoints: [{ path: "../x.js", line: 1 }] }),
      /outside|PATH_OUTSIDE/i,
    );
    const bp = await confineDebugParams(w, "debug.setBreakpoints", { breakpoints: [{ path: "src/app.js", line: 1 }] });
    assert.equal((bp.breakpoints as { path: string }[])[0]?.path, join(w.primary, "src/app.js"));
  });
});
