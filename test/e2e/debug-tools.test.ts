import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, it } from "node:test";
import { e2e } from "../helpers/fixture.ts";
import { eventually, structured, text, writeLaunchJson } from "../helpers/workbench.ts";

/**
 * The debug tools against real code-server and its built-in JavaScript debugger (ms-vscode.js-debug),
 * through `ccb serve` over MCP with a headless browser on the workbench: breakpoints, variables,
 * evaluate, step, continue to the exit code, conditional breakpoints and logpoints, the bounded
 * wait, stop, containment (ps) and the debuggee's environment (planted secrets, with a control).
 */
const PLANTED_KEY = "sk-ant-planted-debuggee-secret-0123456789";
const PLANTED_TOKEN = "acp-planted-debuggee-token-9876543210";
const PLAIN = "plain-debuggee-control-value-4242";

const f = e2e({
  prefix: "ccb-dbg-",
  dirs: ["outside"],
  workbench: "serve",
  serve: { env: { ANTHROPIC_API_KEY: PLANTED_KEY, ACP_PLANTED_TOKEN: PLANTED_TOKEN, DEBUGTEST_PLAIN: PLAIN } },
  setupTimeout: 400_000,
  files: {
    // A program with a bug: the loop runs one past the end, so the average is NaN and it exits 3.
    "buggy.js": [
      "function average(items) {", // 1
      "  let total = 0;", // 2
      "  for (let i = 0; i <= items.length; i++) {", // 3
      "    total += items[i];", // 4
      "  }", // 5
      "  return total / items.length;", // 6
      "}", // 7
      "const result = average([2, 4, 6]);", // 8
      'console.log("average", result);', // 9
      "process.exitCode = Number.isNaN(result) ? 3 : 0;", // 10
      "",
    ],
    "forever.js": 'setInterval(() => console.log("tick"), 500);\n',
  },
  launch: [{ name: "Run buggy", type: "node", request: "launch", program: "${workspaceFolder}/buggy.js" }],
});
const outside = f.dir("outside");

/**
 * pids running `file` of the workspace, as `ps` lists them (js-debug starts `node ./file` in the
 * workspace folder, so the working directory tells the debuggee from other processes).
 */
function processesRunning(file: string): number[] {
  const out = execFileSync("ps", ["-eww", "-o", "pid=,args="], { encoding: "utf8" });
  return out
    .split("\n")
    .filter((l) => l.includes(file))
    .map((l) => Number(l.trim().split(/\s+/)[0]))
    .filter((pid) => {
      try {
        return realpathSync(`/proc/${pid}/cwd`) === realpathSync(f.ws);
      } catch {
        return false;
      }
    });
}

describe("debug tools on the workbench's JavaScript debugger", { timeout: 900_000 }, () => {
  it("lists launch.json; a breakpoint stops it; variables, evaluate, step; continue runs to the exit code", async () => {
    const configs = await f.wb.ok("debug_configurations");
    assert.match(text(configs), /"Run buggy" \(node, launch\)/);

    const set = await f.wb.ok("debug_set_breakpoints", { breakpoints: [{ path: "buggy.js", line: 2 }] });
    assert.match(text(set), /buggy\.js:2/);
    const started = await f.wb.ok("debug_start", { name: "Run buggy" });
    const session = structured(started).session.id as string;
    assert.equal(structured(started).session.byCcb, true);

    const stop = await f.wb.ok("debug_wait", { session, seconds: 60 });
    assert.equal(structured(stop).state, "stopped", text(stop));
    assert.equal(structured(stop).reason, "breakpoint");
    assert.equal(structured(stop).frame.path, "buggy.js");
    assert.equal(structured(stop).frame.line, 2);
    assert.match(text(stop), /Stopped \(breakpoint.*\) in (global\.)?average at buggy\.js:2:/);

    const stack = await f.wb.ok("debug_stack", { session });
    assert.match(text(stack), /#0 (global\.)?average at buggy\.js:2/);
    assert.match(text(stack), /#1 .* at buggy\.js:8/);

    const vars = await f.wb.ok("debug_variables", { session, depth: 2 });
    assert.match(text(vars), /^Local:/m);
    assert.match(text(vars), /items: .* = .*\(3\)/, text(vars));
    assert.match(text(vars), /^\s+0: number = 2$/m, "depth 2 expands the array");

    const ev = await f.wb.ok("debug_evaluate", { session, expression: "items.length * 10" });
    assert.equal(structured(ev).result, "30");

    const step = await f.wb.ok("debug_control", { session, action: "stepOver" });
    assert.equal(structured(step).state, "stopped");
    assert.equal(structured(step).reason, "step");
    assert.equal(structured(step).frame.line, 3);

    await f.wb.ok("debug_clear_breakpoints", { path: "buggy.js" });
    const end = await f.wb.ok("debug_control", { session, action: "continue", seconds: 60 });
    assert.equal(structured(end).state, "ended", text(end));
    assert.equal(structured(end).exitCode, 3, text(end));
    const out = await f.wb.ok("debug_output", { session });
    assert.match(text(out), /average NaN/);
    const again = await f.wb.ok("debug_output", { session });
    assert.doesNotMatch(text(again), /average NaN/, "output since the last read only");
  });

  it("a conditional breakpoint stops only when true; a logpoint logs instead of stopping", async () => {
    await f.wb.ok("debug_set_breakpoints", {
      breakpoints: [
        { path: "buggy.js", line: 4, condition: "i === 3" },
        { path: "buggy.js", line: 6, logMessage: "logpoint total={total}" },
      ],
    });
    const started = await f.wb.ok("debug_start", {
      configuration: { type: "node", request: "launch", name: "inline buggy", program: "buggy.js" },
    });
    const session = structured(started).session.id as string;
    const stop = await f.wb.ok("debug_wait", { session, seconds: 60 });
    assert.equal(structured(stop).frame?.line, 4, text(stop));
    const vars = await f.wb.ok("debug_variables", { session, scope: "Block" });
    assert.match(text(vars), /i: number = 3/, "stopped on the fourth pass only");
    const item = await f.wb.ok("debug_evaluate", { session, expression: "items[i]" });
    assert.equal(structured(item).result, "undefined", "the bug: one past the end");

    const end = await f.wb.ok("debug_control", { session, action: "continue", seconds: 60 });
    assert.equal(structured(end).state, "ended", "the logpoint did not stop it");
    const out = await f.wb.ok("debug_output", { session });
    assert.match(text(out), /logpoint total=NaN/);
    await f.wb.ok("debug_clear_breakpoints", { all: true });
  });

  it("a program that never stops: the wait answers within its bound; stop leaves no process behind", async () => {
    const started = await f.wb.ok("debug_start", {
      configuration: { type: "node", request: "launch", name: "forever", program: "forever.js" },
    });
    const session = structured(started).session.id as string;
    const waited = await f.wb.ok("debug_wait", { session, seconds: 2 });
    assert.equal(structured(waited).state, "running");
    assert.equal(structured(waited).timedOut, true);
    assert.match(text(waited), /Still running/);
    assert.ok(processesRunning("forever.js").length > 0, "positive control: the debuggee runs");

    const stopped = await f.wb.ok("debug_stop", { session });
    assert.equal(structured(stopped).stopped, true);
    assert.equal(structured(stopped).session.state, "ended");
    await eventually(
      "no forever.js process",
      () => (processesRunning("forever.js").length === 0 ? true : undefined),
      30_000,
    );
  });

  it("paths are confined: a breakpoint or a program outside the workspace is refused", async () => {
    const bp = await f.wb.call("debug_set_breakpoints", { breakpoints: [{ path: "/etc/passwd", line: 1 }] });
    assert.equal(bp.isError, true);
    assert.match(text(bp), /PATH_OUTSIDE_WORKSPACE/);
    const prog = await f.wb.call("debug_start", {
      configuration: { type: "node", request: "launch", program: "${workspaceFolder}/../x.js" },
    });
    assert.equal(prog.isError, true);
    assert.match(text(prog), /PATH_OUTSIDE_WORKSPACE|NOT_FOUND/);
    const variable = await f.wb.call("debug_start", {
      configuration: { type: "node", request: "launch", program: "${env:HOME}/x.js" },
    });
    assert.equal(variable.isError, true);
    assert.match(text(variable), /variable ccb cannot check/);
  });

  it("named configurations are confined like inline ones: launch.json (the model can write it) leads nowhere outside", async () => {
    const ran = join(outside, "ran");
    writeFileSync(join(outside, "evil.js"), `require("fs").writeFileSync(${JSON.stringify(ran)}, "ran");\n`);
    writeFileSync(join(outside, "evil.sh"), `#!/bin/sh\necho ran > ${JSON.stringify(ran)}\n`, { mode: 0o755 });
    writeFileSync(join(f.ws, "marks.js"), 'require("fs").writeFileSync("mark.txt", "inside");\n');
    const node = { type: "node", request: "launch" };
    const evil = join(outside, "evil.js");
    writeLaunchJson(f.ws, [
      { name: "Run buggy", ...node, program: "${workspaceFolder}/buggy.js" },
      { name: "Outside program", ...node, program: evil },
      { name: "Up and out", ...node, program: `\${workspaceFolder}/../${basename(outside)}/evil.js` },
      { name: "Override", ...node, program: "${workspaceFolder}/buggy.js", linux: { program: evil } },
      {
        name: "Runtime",
        ...node,
        program: "${workspaceFolder}/buggy.js",
        runtimeExecutable: join(outside, "evil.sh"),
      },
      { name: "Home cwd", ...node, program: "${workspaceFolder}/buggy.js", cwd: "${userHome}" },
      { name: "Env file", ...node, program: "${workspaceFolder}/buggy.js", envFile: "${env:HOME}/.env" },
      { name: "Command", ...node, program: "${workspaceFolder}/buggy.js", args: ["${command:ccb.diff.accept}"] },
      // control: the person's own kind of configuration, every field inside the workspace
      {
        name: "Marks inside",
        ...node,
        program: "${workspaceFolder}/buggy.js",
        cwd: "${workspaceFolder}",
        linux: { program: "${workspaceFolder}/marks.js" },
      },
    ]);
    const refused = async (name: string, code: RegExp, field: string) => {
      const r = await f.wb.call("debug_start", { name });
      assert.equal(r.isError, true, `${name}: ${text(r)}`);
      assert.match(text(r), code, name);
      assert.match(text(r), new RegExp(`"${field}"`), `${name} names the field`);
      assert.ok(!text(r).includes(outside), `${name}: the refusal does not show the outside path`);
    };
    await refused("Outside program", /PATH_OUTSIDE_WORKSPACE/, "program");
    await refused("Up and out", /PATH_OUTSIDE_WORKSPACE/, "program");
    await refused("Override", /PATH_OUTSIDE_WORKSPACE/, "program");
    await refused("Runtime", /PATH_OUTSIDE_WORKSPACE/, "runtimeExecutable");
    await refused("Home cwd", /PATH_OUTSIDE_WORKSPACE/, "cwd");
    await refused("Env file", /variable ccb cannot check/, "envFile");
    await refused("Command", /PERMISSION_DENIED/, "args");
    // control: the workspace's own configuration runs (it writes its mark inside the workspace)
    const started = await f.wb.ok("debug_start", { name: "Marks inside" });
    const end = await f.wb.ok("debug_wait", { session: structured(started).session.id, seconds: 60 });
    assert.equal(structured(end).state, "ended", text(end));
    assert.equal(readFileSync(join(f.ws, "mark.txt"), "utf8"), "inside");
    assert.equal(existsSync(ran), false, "nothing outside ran");
  });

  it("ccb's secrets are not in the debuggee's environment (the plain variable is: control)", async () => {
    await f.wb.ok("debug_set_breakpoints", { breakpoints: [{ path: "buggy.js", line: 2 }] });
    const started = await f.wb.ok("debug_start", { name: "Run buggy" });
    const session = structured(started).session.id as string;
    await f.wb.ok("debug_wait", { session, seconds: 60 });
    const plain = await f.wb.ok("debug_evaluate", { session, expression: "process.env.DEBUGTEST_PLAIN" });
    assert.equal(structured(plain).result, `'${PLAIN}'`, "control: ccb's ordinary environment reaches the debuggee");
    const key = await f.wb.ok("debug_evaluate", { session, expression: "process.env.ANTHROPIC_API_KEY" });
    assert.equal(structured(key).result, "undefined");
    const pid = Number(
      (await f.wb.ok("debug_evaluate", { session, expression: "process.pid" })).structuredContent?.result,
    );
    const environ = readFileSync(`/proc/${pid}/environ`, "latin1");
    assert.ok(environ.includes(PLAIN), "control: /proc environ of the debuggee is readable and holds the plain value");
    assert.ok(!environ.includes(PLANTED_KEY), "no model key");
    assert.ok(!environ.includes(PLANTED_TOKEN), "no ACP token");
    assert.ok(!environ.includes("ANTHROPIC_API_KEY="));
    await f.wb.ok("debug_stop", { session });
    await f.wb.ok("debug_clear_breakpoints", { all: true });
  });

  it("debug_evaluate right after debug_start answers at once: a value, or that nothing is paused yet", {
    timeout: 240_000,
  }, async () => {
    await f.wb.ok("debug_set_breakpoints", { breakpoints: [{ path: "buggy.js", line: 2 }] });
    const started = await f.wb.ok("debug_start", { name: "Run buggy" });
    const session = structured(started).session.id as string;
    // No debug_wait in between: the session may still be starting, running or already stopped.
    const ev = await f.wb.call("debug_evaluate", { session, expression: "6 * 7" });
    if (ev.isError) assert.match(text(ev), /DEBUG_NOT_STOPPED.*(not paused|still starting|running)/s, text(ev));
    else assert.equal(structured(ev).result, "42", text(ev));
    for (const tool of ["debug_stack", "debug_variables"]) {
      const r = await f.wb.call(tool, { session });
      if (r.isError) assert.match(text(r), /DEBUG_NOT_STOPPED/, `${tool}: ${text(r)}`);
    }
    const stop = await f.wb.ok("debug_wait", { session, seconds: 60 });
    assert.equal(structured(stop).state, "stopped", "control: the breakpoint is hit afterwards");
    const after = await f.wb.ok("debug_evaluate", { session, expression: "items.length * 14" });
    assert.equal(structured(after).result, "42", "control: stopped, it evaluates in the frame");
    await f.wb.ok("debug_stop", { session });
    await f.wb.ok("debug_clear_breakpoints", { all: true });
  });

  it("debug_start by name finds a configuration written to .vscode/launch.json a moment before", async () => {
    writeFileSync(
      join(f.ws, ".vscode/launch.json"),
      [
        "{",
        "  // written by the agent just now (JSONC: comments and trailing commas)",
        '  "version": "0.2.0",',
        '  "configurations": [',
        '    { "name": "Run buggy", "type": "node", "request": "launch", "program": "${workspaceFolder}/buggy.js" },',
        '    /* the new one */ { "name": "Run forever fresh", "type": "node", "request": "launch", "program": "${workspaceFolder}/forever.js", },',
        "  ],",
        "}",
        "",
      ].join("\n"),
    );
    const started = await f.wb.ok("debug_start", { name: "Run forever fresh" });
    const session = structured(started).session.id as string;
    assert.equal(structured(started).session.name, "Run forever fresh");
    await eventually("forever.js runs", () => (processesRunning("forever.js").length > 0 ? true : undefined), 60_000);
    await f.wb.ok("debug_stop", { session });
    const missing = await f.wb.call("debug_start", { name: "Run nothing such" });
    assert.equal(missing.isError, true, "control: a name in neither the editor nor the file");
    assert.match(text(missing), /No launch configuration named "Run nothing such"/);
  });

  it("joins a running `node --inspect` with an inline attach configuration: breakpoint, variables, evaluate", async () => {
    writeFileSync(
      join(f.ws, "served.js"),
      [
        "let count = 0;", // 1
        "function tick() {", // 2
        '  const label = "tick-" + count;', // 3
        "  count++;", // 4
        "  return label;", // 5
        "}", // 6
        "setInterval(tick, 100);", // 7
        "",
      ].join("\n"),
    );
    const child = spawn(process.execPath, ["--inspect=127.0.0.1:0", "served.js"], {
      cwd: f.ws,
      stdio: ["ignore", "ignore", "pipe"],
    });
    try {
      let err = "";
      child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
      const port = await eventually(
        "the inspector's port on stderr",
        () => /Debugger listening on ws:\/\/127\.0\.0\.1:(\d+)\//.exec(err)?.[1],
        30_000,
      );
      const started = await f.wb.ok("debug_start", {
        configuration: {
          type: "node",
          request: "attach",
          name: "attach served",
          address: "127.0.0.1",
          port: Number(port),
        },
      });
      const session = structured(started).session.id as string;
      await f.wb.ok("debug_set_breakpoints", { breakpoints: [{ path: "served.js", line: 4 }] });
      const stop = await f.wb.ok("debug_wait", { session, seconds: 60 });
      assert.equal(structured(stop).state, "stopped", text(stop));
      assert.equal(structured(stop).frame.path, "served.js");
      assert.equal(structured(stop).frame.line, 4);
      const vars = await f.wb.ok("debug_variables", { session });
      assert.match(text(vars), /label: string = 'tick-\d+'/, text(vars));
      const ev = await f.wb.ok("debug_evaluate", { session, expression: "process.pid" });
      assert.equal(Number(structured(ev).result), child.pid, "the process started outside the workbench");
      await f.wb.ok("debug_clear_breakpoints", { all: true });
      await f.wb.ok("debug_stop", { session });
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("ending ccb ends a debuggee that is still running (no orphan)", async () => {
    await f.wb.ok("debug_start", {
      configuration: { type: "node", request: "launch", name: "forever 2", program: "forever.js" },
    });
    await eventually("forever.js runs", () => (processesRunning("forever.js").length > 0 ? true : undefined), 60_000);
    await f.wb.stop();
    await eventually(
      "no forever.js after ccb ended",
      () => (processesRunning("forever.js").length === 0 ? true : undefined),
      30_000,
    );
  });
});
