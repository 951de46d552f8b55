import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { repoRoot } from "../helpers/cli.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { bootWorkbench, eventually, text, type Workbench } from "../helpers/workbench.ts";

/**
 * The task tools against real code-server, through `ccb serve` over MCP with a headless browser on
 * the workbench: a tasks.json `tsc` task with the `$tsc` problem matcher (a type error gives a
 * non-zero exit, the output's tail and the problem at its file and line; the fix gives exit 0 and no
 * problem), an npm script the npm extension detects, the bounded wait (TIMEOUT, wait again, stop),
 * the cwd confinement, and the task's environment (planted secrets absent, a plain variable present).
 */
const ws = tmpdirFixture({ prefix: "ccb-task-ws-" });
const home = tmpdirFixture({ prefix: "ccb-task-home-" });
const PLANTED_KEY = "sk-ant-planted-task-secret-0123456789abcdef";
const PLANTED_TOKEN = "acp-planted-task-token-9876543210fedcba";
const PLAIN = "plain-task-control-value-4242";

const tsc = `${JSON.stringify(process.execPath)} ${JSON.stringify(join(repoRoot, "node_modules/typescript/bin/tsc"))}`;
const BAD = 'export const ok = 1;\nexport const n: number = "not a number";\n';
const GOOD = "export const ok = 1;\nexport const n: number = 42;\n";

writeFileSync(join(ws.path, "bad.ts"), BAD);
writeFileSync(
  join(ws.path, "tsconfig.json"),
  JSON.stringify({ compilerOptions: { strict: true, noEmit: true }, files: ["bad.ts"] }),
);
writeFileSync(
  join(ws.path, "package.json"),
  JSON.stringify({
    name: "task-fixture",
    version: "1.0.0",
    scripts: { greet: "node -e \"console.log('npm says', 6 * 7)\"" },
  }),
);
mkdirSync(join(ws.path, ".vscode"));
writeFileSync(
  join(ws.path, ".vscode/tasks.json"),
  JSON.stringify({
    version: "2.0.0",
    tasks: [
      { label: "check types", type: "shell", command: `${tsc} -p . --pretty false`, problemMatcher: "$tsc" },
      { label: "slow", type: "shell", command: "echo started; sleep 120; echo finished" },
      { label: "print env", type: "shell", command: "env | tee env-dump.txt" },
      { label: "outside", type: "shell", command: "pwd", options: { cwd: "/tmp" } },
      { label: "escape", type: "shell", command: "pwd", options: { cwd: "${workspaceFolder}/.." } },
    ],
  }),
);

let wb: Workbench;
const structured = (r: { structuredContent?: Record<string, unknown> }) => r.structuredContent as Record<string, any>;

before(
  async () => {
    wb = await bootWorkbench(ws.path, home.path, [], {
      env: { ANTHROPIC_API_KEY: PLANTED_KEY, ACP_PLANTED_TOKEN: PLANTED_TOKEN, TASKTEST_PLAIN: PLAIN },
    });
  },
  { timeout: 400_000 },
);

after(async () => {
  await wb?.stop();
  ws.cleanup();
  home.cleanup();
});

describe("task tools on the workbench's tasks", { timeout: 900_000 }, () => {
  it("task_list shows tasks.json's tasks and the npm script the npm extension detects", async () => {
    const list = await eventually(
      "the npm script is detected",
      async () => {
        const r = await wb.ok("task_list");
        return structured(r).tasks.some((t: any) => t.source === "npm" && /greet/.test(t.name)) ? r : undefined;
      },
      120_000,
    );
    const tasks = structured(list).tasks as any[];
    const check = tasks.find((t) => t.name === "check types");
    assert.ok(check, text(list));
    assert.equal(check.source, "Workspace");
    assert.deepEqual(check.problemMatchers, ["$tsc"]);
    assert.match(text(list), /"check types" \(source Workspace, type shell\) matchers \$tsc/);
  });

  it("a $tsc task: a type error gives a non-zero exit, the output and the problem at bad.ts:2; the fix gives exit 0 and none", async () => {
    const failed = await wb.ok("task_run", { name: "check types", timeoutMs: 120_000 });
    const f = structured(failed);
    assert.equal(f.state, "ended", text(failed));
    assert.equal(f.timedOut, false);
    assert.notEqual(f.exitCode, 0, text(failed));
    assert.match(f.output, /bad\.ts\(2,14\): error TS2322/, "the output's tail holds tsc's report");
    assert.equal(f.problems.length, 1, text(failed));
    const p = f.problems[0];
    assert.equal(p.path, "bad.ts");
    assert.equal(p.range.start.line, 2);
    assert.equal(p.range.start.column, 14);
    assert.equal(p.severity, "error");
    assert.match(p.message, /Type 'string' is not assignable to type 'number'/);
    assert.match(text(failed), /bad\.ts:2:14 error: Type 'string' is not assignable/);
    // the same problem is in the workbench's Problems panel
    const diags = await wb.ok("diagnostics_get", { path: "bad.ts" });
    assert.match(text(diags), /bad\.ts:2:14.* error: Type 'string' is not assignable/);

    // run again with the same error: the matcher reports it again (not only on a first run)
    const again = await wb.ok("task_run", { name: "check types", timeoutMs: 120_000 });
    assert.equal(structured(again).problems.length, 1, text(again));
    assert.equal(structured(again).problems[0].range.start.line, 2);

    writeFileSync(join(ws.path, "bad.ts"), GOOD);
    const fixed = await wb.ok("task_run", { name: "check types", source: "Workspace", timeoutMs: 120_000 });
    assert.equal(structured(fixed).exitCode, 0, text(fixed));
    assert.deepEqual(structured(fixed).problems, [], text(fixed));
    assert.match(text(fixed), /No problems reported/);
    writeFileSync(join(ws.path, "bad.ts"), BAD);
  });

  it("runs the detected npm script", async () => {
    const r = await wb.ok("task_run", { name: "greet", source: "npm", timeoutMs: 120_000 });
    assert.equal(structured(r).exitCode, 0, text(r));
    assert.match(structured(r).output, /npm says 42/);
    assert.match(structured(r).command, /npm.* run greet|npm run greet/);
  });

  it("a task that runs too long: TIMEOUT within the bound, still running; wait again, stop, then its end", async () => {
    const t0 = Date.now();
    const r = await wb.ok("task_run", { name: "slow", timeoutMs: 3_000 });
    const waited = Date.now() - t0;
    assert.ok(waited < 100_000, `answered before the task's own end (${waited} ms)`);
    const s = structured(r);
    assert.equal(s.timedOut, true);
    assert.equal(s.state, "running");
    assert.equal(s.exitCode, null);
    assert.match(text(r), /^TIMEOUT: the task "slow" is still running/);
    assert.match(text(r), new RegExp(`task_stop \\{"execution":"${s.execution}"\\}`));
    assert.match(s.output, /started/);
    const again = await wb.ok("task_run", { execution: s.execution, timeoutMs: 500 });
    assert.equal(structured(again).timedOut, true, "control: still running");
    const stop = await wb.ok("task_stop", { execution: s.execution });
    assert.equal(structured(stop).stopped, true);
    const end = await wb.ok("task_run", { execution: s.execution, timeoutMs: 60_000 });
    assert.equal(structured(end).state, "ended", text(end));
    assert.notEqual(structured(end).exitCode, 0);
    assert.doesNotMatch(structured(end).output, /finished/);
  });

  it("a task's cwd must be inside the workspace", async () => {
    for (const name of ["outside", "escape"]) {
      const r = await wb.call("task_run", { name });
      assert.equal(r.isError, true, name);
      assert.match(text(r), /PATH_OUTSIDE_WORKSPACE|outside/i, text(r));
    }
  });

  it("ccb's secrets are not in a task's environment (the plain variable is: control)", async () => {
    const r = await wb.ok("task_run", { name: "print env", timeoutMs: 60_000 });
    assert.equal(structured(r).exitCode, 0, text(r));
    // read what the task itself wrote, below any masking of tool results
    const dump = readFileSync(join(ws.path, "env-dump.txt"), "utf8");
    assert.ok(dump.includes(`TASKTEST_PLAIN=${PLAIN}`), "control: ccb's ordinary environment reaches the task");
    assert.ok(!dump.includes(PLANTED_KEY), "no model key");
    assert.ok(!dump.includes(PLANTED_TOKEN), "no ACP token");
    assert.ok(!/^ANTHROPIC_API_KEY=/m.test(dump));
    assert.ok(!/^ACP_PLANTED_TOKEN=/m.test(dump));
    assert.match(structured(r).output, new RegExp(`TASKTEST_PLAIN=${PLAIN}`));
  });
});
