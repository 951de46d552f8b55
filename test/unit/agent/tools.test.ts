import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { toolsForModel } from "../../../src/agent/model-tools.ts";
import { BUILTIN_TOOLS } from "../../../src/agent/tools/index.ts";
import { createClientIO } from "../../../src/agent/tools/io.ts";
import type { AcpTool, AgentToolContext as ToolContext } from "../../../src/agent/tools/types.ts";
import { type Core, createCore } from "../../../src/core/core.ts";
import { runTool } from "../../../src/tools/kernel.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

const tool = (name: string): AcpTool => BUILTIN_TOOLS.find((t) => t.name === name)!;

describe("acp tools on the core (no client fs/terminal)", () => {
  const dir = tmpdirFixture({ git: true });
  let core: Core;
  const plans: unknown[] = [];
  const progress: unknown[] = [];
  let ctx: ToolContext;
  before(() => {
    writeFileSync(join(dir.path, "a.ts"), "export const alpha = 1;\nexport const beta = 2;\n");
    writeFileSync(join(dir.path, "b.md"), "# notes\nalpha here\n");
    execFileSync("git", ["-C", dir.path, "add", "."], { env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null" } });
    execFileSync("git", ["-C", dir.path, "commit", "-qm", "init"], {
      env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null" },
    });
    core = createCore({ roots: [dir.path] });
    ctx = {
      sessionId: "s",
      cwd: dir.path,
      core,
      io: createClientIO({}, core, "s", dir.path),
      signal: new AbortController().signal,
      log: core.log,
      progress: (f) => progress.push(f),
      setPlan: (t) => plans.push(t),
    };
  });
  after(async () => {
    await core.dispose();
    dir.cleanup();
  });

  test("every tool has a JSON schema for the model", () => {
    const api = toolsForModel(BUILTIN_TOOLS);
    assert.deepEqual(
      api.map((t) => t.name),
      ["read", "write", "edit", "glob", "grep", "bash", "git", "todo_write", "exit_plan_mode"],
    );
    for (const t of api) assert.equal((t.input_schema as { type: string }).type, "object");
  });

  test("read numbers lines; edit and write change files through the core with full diffs", async () => {
    const r = await runTool(tool("read"), { path: "a.ts" }, ctx);
    assert.match(r.text, /^\s+1\texport const alpha = 1;\n\s+2\texport const beta = 2;/);
    const e = await runTool(tool("edit"), { path: "a.ts", old_string: "beta = 2", new_string: "beta = 3" }, ctx);
    assert.deepEqual(e.content, [
      {
        type: "diff",
        path: join(dir.path, "a.ts"),
        oldText: "export const alpha = 1;\nexport const beta = 2;\n",
        newText: "export const alpha = 1;\nexport const beta = 3;\n",
      },
    ]);
    assert.equal(readFileSync(join(dir.path, "a.ts"), "utf8"), "export const alpha = 1;\nexport const beta = 3;\n");
    await runTool(tool("write"), { path: "sub/new.txt", content: "n\n" }, ctx);
    assert.equal(readFileSync(join(dir.path, "sub/new.txt"), "utf8"), "n\n");
    await assert.rejects(runTool(tool("read"), { path: "../outside" }, ctx), /outside the workspace/);
    assert.deepEqual(tool("edit").acp.locations({ path: "a.ts" } as never, ctx), [{ path: join(dir.path, "a.ts") }]);
  });

  test("glob and grep use the core's file list and search", async () => {
    const g = await runTool(tool("glob"), { pattern: "**/*.ts" }, ctx);
    assert.match(g.text, /a\.ts/);
    assert.doesNotMatch(g.text, /b\.md/);
    const s = await runTool(tool("grep"), { pattern: "alph[a]" }, ctx);
    assert.match(s.text, /a\.ts:1:export const alpha/);
    assert.match(s.text, /b\.md:2:alpha here/);
    // hits carry their absolute paths (a display path mapped lexically), with lines
    assert.deepEqual(
      [...(s.locations ?? [])].sort((x, y) => x.path.localeCompare(y.path)),
      [
        { path: join(dir.path, "a.ts"), line: 1 },
        { path: join(dir.path, "b.md"), line: 2 },
      ],
    );
  });

  test("bash runs in the core's terminal (output never on our stdout) and is killed on abort", async () => {
    const seen: string[] = [];
    const off = core.terminals.local.onEvent((e) => e.type === "created" && seen.push(e.id));
    const r = await runTool(tool("bash"), { command: "echo out-$((1+1)); echo err >&2; exit 3" }, ctx);
    assert.match(r.text, /out-2/);
    assert.match(r.text, /exit code 3/);
    assert.equal(r.isError, true);
    assert.equal(core.terminals.local.list().length, 0, "the finished command's terminal is removed");
    const ac = new AbortController();
    const running = runTool(tool("bash"), { command: "sleep 30" }, { ...ctx, signal: ac.signal });
    setImmediate(() => ac.abort());
    const killed = await running;
    assert.match(killed.text, /cancelled/);
    off();
    assert.equal(seen.length, 2, "both commands ran in core terminals");
  });

  test("git runs read-only subcommands without asking, others need permission; todo_write sets the plan", async () => {
    assert.equal(tool("git").acp.access({ args: ["status"] }).category, "read");
    assert.equal(tool("git").acp.access({ args: ["push"] }).category, "execute");
    const r = await runTool(tool("git"), { args: ["log", "--oneline"] }, ctx);
    assert.match(r.text, /init/);
    await runTool(tool("todo_write"), { todos: [{ content: "x", status: "pending" }] }, ctx);
    assert.deepEqual(plans.at(-1), [{ content: "x", status: "pending" }]);
  });
});
