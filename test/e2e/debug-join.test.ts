import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { e2e } from "../helpers/fixture.ts";
import { eventually, structured, text, writeLaunchJson } from "../helpers/workbench.ts";

/**
 * Joining a debug session the person started: real code-server with its JavaScript debugger behind
 * `ccb serve`, and a real Chromium as the person's window (it opens the link ccb printed, is
 * focused, so its extension host serves). The person starts debugging from the workbench's UI
 * (F5 on launch.json, the command palette); the agent lists the sessions, is refused until it
 * joins, joins, and reads the stack and a variable. A session of a program outside the workspace
 * cannot be joined.
 */
const f = e2e({
  prefix: "ccb-dbgjoin-",
  dirs: ["outside"],
  workbench: "serve",
  person: true,
  files: {
    // Line 1 is a statement of the module's own: js-debug sets a breakpoint of its own on line 1
    // column 1 of every file given a breakpoint (its module entry breakpoint), and V8 resolves it,
    // in a script already running, into the first function declared from there on (a greet on line
    // 1 put it on greet's first statement, app.js:2:19). Under load js-debug then reports a hit of
    // it as a stop ("pause: Paused on debugger statement"; the CI run, reproduced here): its answer
    // to setting it and V8's pause arrive in one read, before it knows the breakpoint is its own.
    // Here it resolves to line 1, which has run and never runs again (test/README.md, debug-join).
    "app.js": [
      'const greeting = "hello ";', // 1
      "function greet(name) {", // 2
      "  const message = greeting + name;", // 3
      "  return message;", // 4
      "}", // 5
      'setInterval(() => greet("person"), 100);', // 6
      "",
    ],
  },
});
const outside = f.dir("outside");
writeFileSync(join(outside, "elsewhere.js"), "setInterval(() => {}, 100);\n");
writeLaunchJson(f.ws, [
  { name: "Person app", type: "node", request: "launch", program: "${workspaceFolder}/app.js" },
  { name: "Elsewhere app", type: "node", request: "launch", program: join(outside, "elsewhere.js") },
]);

/** Evaluate in the person's workbench (the App page frames it, same origin). */
async function inWorkbench<T>(expression: string): Promise<T> {
  const r = (await f.window.cdp.send("Runtime.evaluate", {
    expression: `(() => { const document = window.document.getElementById("wb").contentDocument; const window_ = window.document.getElementById("wb").contentWindow; return (${expression}); })()`,
    returnByValue: true,
  })) as { result: { value?: unknown }; exceptionDetails?: { text: string } };
  if (r.exceptionDetails) throw new Error(`page: ${r.exceptionDetails.text}`);
  return r.result.value as T;
}

/** A key as the person presses it (to the focused frame: the workbench). */
async function press(key: string, code: string, keyCode: number, modifiers = 0): Promise<void> {
  const base = { key, code, windowsVirtualKeyCode: keyCode, nativeVirtualKeyCode: keyCode, modifiers };
  await f.window.cdp.send("Input.dispatchKeyEvent", { type: "rawKeyDown", ...base });
  await f.window.cdp.send("Input.dispatchKeyEvent", { type: "keyUp", ...base });
}

async function sessions(): Promise<Array<Record<string, any>>> {
  return structured(await f.wb.ok("debug_status")).sessions;
}

before(
  async () => {
    await eventually(
      "the workbench is loaded in the person's window",
      async () =>
        (await inWorkbench<boolean>(`!!document?.querySelector(".monaco-workbench .part.statusbar")`).catch(
          () => false,
        ))
          ? true
          : undefined,
      300_000,
    );
    await eventually(
      "the editor has read launch.json",
      async () => (/"Person app"/.test(text(await f.wb.ok("debug_configurations"))) ? true : undefined),
      120_000,
    );
  },
  { timeout: 700_000 },
);

describe("joining a debug session the person started in the workbench", { timeout: 900_000 }, () => {
  let session = "";

  it("the person presses F5: the session is listed as theirs, and ccb's tools refuse it until joined", async () => {
    await inWorkbench(`(window_.focus(), document.querySelector(".monaco-workbench")?.focus(), true)`);
    await f.window.cdp.send("Runtime.evaluate", { expression: `document.getElementById("wb").focus()` });
    await press("F5", "F5", 116);
    const theirs = await eventually(
      "the person's session in debug_status",
      async () => (await sessions()).find((s) => s.name === "Person app" && s.state === "running"),
      120_000,
    );
    session = theirs.id;
    assert.equal(theirs.byCcb, false, "the person started it, not ccb");
    assert.equal(theirs.joined, false);
    assert.equal(theirs.request, "launch");
    assert.match(
      text(await f.wb.ok("debug_status")),
      /"Person app" \(.* launch, session .*, running, the person's: debug_join/,
    );

    const refused = await f.wb.call("debug_stack", { session });
    assert.equal(refused.isError, true);
    assert.match(text(refused), /PERMISSION_DENIED.*started by the person.*debug_join/s);
    const byDefault = await f.wb.call("debug_evaluate", { expression: "1 + 1" });
    assert.equal(byDefault.isError, true, "without a session id the person's session is not taken either");
    assert.match(text(byDefault), /No debug session ccb started or joined\. The person's: "Person app"/);
  });

  it("the agent joins it: stack and a variable of the person's program", async () => {
    const joined = await f.wb.ok("debug_join", { session });
    assert.equal(structured(joined).joined, true);
    assert.match(text(joined), /Joined "Person app".*the person's, joined/);
    assert.equal((await sessions()).find((s) => s.id === session)?.joined, true);

    await f.wb.ok("debug_set_breakpoints", { breakpoints: [{ path: "app.js", line: 4 }] });
    const stop = await f.wb.ok("debug_wait", { session, seconds: 60 });
    assert.equal(structured(stop).state, "stopped", text(stop));
    assert.equal(structured(stop).frame.path, "app.js", text(stop));
    assert.equal(structured(stop).frame.line, 4, text(stop));
    const stack = await f.wb.ok("debug_stack", { session });
    assert.match(text(stack), /#0 (global\.)?greet at app\.js:4/, text(stack));
    const vars = await f.wb.ok("debug_variables", { session });
    assert.match(text(vars), /name: string = 'person'/, text(vars));
    assert.match(text(vars), /message: string = 'hello person'/, text(vars));
    const ev = await f.wb.ok("debug_evaluate", { session, expression: "message.toUpperCase()" });
    assert.equal(structured(ev).result, "'HELLO PERSON'");
    // The default session is now the joined one.
    const byDefault = await f.wb.ok("debug_evaluate", { expression: "name.length" });
    assert.equal(structured(byDefault).result, "6");
    await f.wb.ok("debug_clear_breakpoints", { all: true });
    const end = await f.wb.ok("debug_stop", { session });
    assert.equal(structured(end).session.state, "ended");
  });

  it("a session of a program outside the workspace, started from the command palette, cannot be joined", async () => {
    await inWorkbench(`(window_.focus(), true)`);
    await press("F1", "F1", 112);
    await eventually(
      "the command palette is open",
      async () =>
        (await inWorkbench<boolean>(`!!document.querySelector(".quick-input-widget input:focus")`)) ? true : undefined,
      30_000,
    );
    await press("a", "KeyA", 65, 2); // Ctrl+A: replace the palette's ">" prefix
    await f.window.cdp.send("Input.insertText", { text: "debug Elsewhere app" });
    await eventually(
      "the palette offers the configuration",
      async () =>
        (await inWorkbench<boolean>(
          `[...document.querySelectorAll(".quick-input-list .monaco-list-row")].some((r) => r.textContent.includes("Elsewhere app"))`,
        ))
          ? true
          : undefined,
      30_000,
    );
    await press("Enter", "Enter", 13);
    const theirs = await eventually(
      "the person's second session in debug_status",
      async () => (await sessions()).find((s) => s.name === "Elsewhere app" && s.state === "running"),
      120_000,
    );
    assert.equal(theirs.byCcb, false);
    const join = await f.wb.call("debug_join", { session: theirs.id });
    assert.equal(join.isError, true);
    assert.match(text(join), /PATH_OUTSIDE_WORKSPACE.*"program" is outside the workspace/s);
    assert.doesNotMatch(text(join), new RegExp(outside), "the outside path is not shown");
    const still = await f.wb.call("debug_evaluate", { session: theirs.id, expression: "process.env" });
    assert.equal(still.isError, true, "refused, not joined");
    assert.match(text(still), /PERMISSION_DENIED/);
    assert.equal((await sessions()).find((s) => s.id === theirs.id)?.joined, false);
  });
});
