import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { z } from "zod";
import { type Core, createCore } from "../../../src/core/core.ts";
import { isCcbError } from "../../../src/core/errors.ts";
import { silentLogger } from "../../../src/core/log.ts";
import { isAlive } from "../../../src/core/terminals/process-tree.ts";
import { workspaceTools } from "../../../src/tools/catalog.ts";
import type { AnyToolDef, ToolResult } from "../../../src/tools/kernel.ts";
import { plainOutput } from "../../../src/tools/shared/terminal.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

/** The terminal tools, as the catalog has them (a new one is checked without being named here). */
const TERMINAL_TOOLS = workspaceTools.filter((t) => t.name.startsWith("terminal_")).map((t) => t.name);

function tool(name: string): AnyToolDef {
  const def = workspaceTools.find((t) => t.name === name);
  assert.ok(def, `tool ${name} is registered`);
  return def;
}

const base = tmpdirFixture({ prefix: "ccb-tools-terminal-" });
const root = join(base.path, "root");
let core: Core;

/** Call a tool as a front end does: parse the arguments with its schema, then execute. */
async function call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
  const def = tool(name);
  return def.execute(def.input.parse(args), { core, signal: new AbortController().signal, log: silentLogger });
}

async function callFails(name: string, args: Record<string, unknown>, code: string): Promise<void> {
  await assert.rejects(call(name, args), (err) => {
    assert.ok(isCcbError(err), `${name}: expected CcbError, got ${String(err)}`);
    assert.equal(err.code, code, `${name} ${JSON.stringify(args)}: ${err.message}`);
    return true;
  });
}

/** terminal_read with waitMs until the raw output since `offset` matches. */
async function readUntil(id: string, pattern: RegExp, offset = 0): Promise<string> {
  let seen = "";
  const deadline = Date.now() + 60_000;
  for (;;) {
    const r = await call("terminal_read", { id, offset, view: "output", waitMs: 1000 });
    const s = r.structured as { output: string; nextOffset: number; end: number; terminal: { running: boolean } };
    seen += s.output;
    offset = s.nextOffset;
    if (pattern.test(seen)) return seen;
    if (!s.terminal.running && s.nextOffset === s.end) throw new Error(`exited before ${pattern}: ${seen}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}: ${seen.slice(-300)}`);
  }
}

before(() => {
  mkdirSync(join(root, "sub"), { recursive: true });
  core = createCore({ roots: [root] });
});
after(async () => {
  await core.dispose();
  base.cleanup();
});

describe("terminal tools: schemas and annotations", () => {
  it("describe every field and state the right hints", () => {
    assert.ok(TERMINAL_TOOLS.length >= 6, `the catalog's terminal tools: ${TERMINAL_TOOLS.join(", ")}`);
    for (const name of TERMINAL_TOOLS) {
      const def = tool(name);
      assert.ok(def.description.length > 80, `${name} has a real description`);
      assert.notEqual(def.title, name);
      for (const [field, schema] of Object.entries((def.input as z.ZodObject).shape)) {
        assert.ok((schema as z.ZodType).description, `${name}.${field} is described`);
      }
      assert.equal(def.needsBridge ?? false, false);
    }
    const hints = (name: string) => tool(name).annotations;
    assert.equal(hints("terminal_list").readOnlyHint, true);
    assert.equal(hints("terminal_read").readOnlyHint, true);
    for (const name of ["terminal_create", "terminal_write", "terminal_kill", "terminal_resize"]) {
      assert.equal(hints(name).readOnlyHint, false, name);
    }
    assert.equal(hints("terminal_kill").destructiveHint, true);
    assert.equal(hints("terminal_create").openWorldHint, true);
    assert.equal(hints("terminal_write").openWorldHint, true);
    assert.equal(hints("terminal_read").openWorldHint, false);
    assert.equal(hints("terminal_resize").destructiveHint, false);
  });

  it("strips escapes from raw output for the text", () => {
    assert.equal(
      plainOutput("\u001b[?2004h$ ls\r\n\u001b[01;34msrc\u001b[0m\r\n\u001b]0;title\u0007done"),
      "$ ls\nsrc\ndone",
    );
  });
});

describe("terminal tools: a shell session", () => {
  it("creates, types, reads, resizes, lists and kills", async () => {
    const created = await call("terminal_create", {
      command: "bash",
      args: ["--norc", "--noprofile"],
      cwd: "sub",
      cols: 100,
      rows: 20,
      title: "build",
      input: "echo first-$((1+1))\n",
    });
    const t = (
      created.structured as { terminal: { id: string; backend: string; isPty: boolean; pid: number; cwd: string } }
    ).terminal;
    assert.equal(t.backend, "node-pty");
    assert.equal(t.isPty, true);
    assert.equal(t.cwd, join(base.path, "root", "sub"));
    assert.match(created.text, new RegExp(`^Started ${t.id} "build"`));
    await readUntil(t.id, /first-2/);

    const wrote = await call("terminal_write", { id: t.id, data: "echo second-$((2+2))\n" });
    const offset = (wrote.structured as { offset: number }).offset;
    assert.ok(offset > 0);
    const since = await readUntil(t.id, /second-4/, offset);
    assert.ok(!since.includes("first-2"), "reading from the returned offset skips earlier output");

    const screen = await call("terminal_read", { id: t.id });
    assert.match(screen.text, /--- screen/);
    assert.match(screen.text, /^second-4$/m);
    assert.ok(!("output" in (screen.structured ?? {})), "the default view is the screen only");

    await call("terminal_resize", { id: t.id, cols: 77, rows: 22 });
    const sized = await call("terminal_write", { id: t.id, data: "stty size\n" });
    await readUntil(t.id, /^22 77\r?$/m, (sized.structured as { offset: number }).offset);

    // ctrl+c interrupts a running command through the PTY's line discipline.
    // Wait until the command runs in the foreground (typed-ahead ctrl+c could reach the shell instead).
    const started = await call("terminal_write", {
      id: t.id,
      data: "bash -c 'echo ready-$((2+3)); exec sleep 1000'\n",
    });
    await readUntil(t.id, /ready-5/, (started.structured as { offset: number }).offset);
    const interrupted = await call("terminal_write", { id: t.id, keys: ["ctrl+c"], data: "" });
    await call("terminal_write", { id: t.id, data: "echo after-$((3+3))\n" });
    await readUntil(t.id, /after-6/, (interrupted.structured as { offset: number }).offset);

    const listed = await call("terminal_list", {});
    assert.match(listed.text, new RegExp(`^${t.id} "build": bash --norc --noprofile — running`, "m"));
    assert.equal((await call("terminal_list", { running: false })).text, "No terminals.");

    const killed = await call("terminal_kill", { id: t.id, remove: true });
    assert.match(killed.text, /Killed and removed: .*killed by SIG(TERM|KILL)/);
    assert.equal(isAlive(t.pid), false);
    await callFails("terminal_read", { id: t.id }, "TERMINAL_NOT_FOUND");
  });

  it("reports exit codes, refuses writes after exit and bad input", async () => {
    const created = await call("terminal_create", { command: "bash", args: ["-c", "echo out; exit 7"] });
    const id = (created.structured as { terminal: { id: string } }).terminal.id;
    await core.terminals.local.waitForExit(id);
    const r = await call("terminal_read", { id, view: "both" });
    assert.match(r.text, /exited with code 7/);
    assert.match(r.text, /--- output ---\nout\n/);
    await callFails("terminal_write", { id, data: "x" }, "TERMINAL_EXITED");
    await callFails("terminal_write", { id }, "INVALID_ARGUMENT");
    await callFails("terminal_create", { cwd: ".." }, "PATH_OUTSIDE_WORKSPACE");
    await callFails("terminal_create", { command: "npm run build" }, "NOT_FOUND");
    assert.throws(() => tool("terminal_kill").input.parse({ id, signal: "SIGSEGV" }));
    assert.throws(() => tool("terminal_resize").input.parse({ id, cols: 0, rows: 10 }));
  });

  it("says when a terminal is the pipe fallback", async () => {
    const pipeCore = createCore({ roots: [root] });
    const saved = process.env.CCB_PTY_BACKEND;
    process.env.CCB_PTY_BACKEND = "pipe";
    try {
      // The backend is chosen on first use: this fresh core picks the pipe fallback.
      const def = tool("terminal_create");
      const r = await def.execute(def.input.parse({ command: "cat" }), {
        core: pipeCore,
        signal: new AbortController().signal,
        log: silentLogger,
      });
      assert.match(r.text, /pipe fallback, no TTY/);
      assert.match(r.text, /cannot be resized/);
      const id = (r.structured as { terminal: { id: string; isPty: boolean } }).terminal.id;
      const resize = tool("terminal_resize");
      await assert.rejects(
        resize.execute(resize.input.parse({ id, cols: 50, rows: 10 }), {
          core: pipeCore,
          signal: new AbortController().signal,
          log: silentLogger,
        }),
        (err) => isCcbError(err, "UNSUPPORTED"),
      );
    } finally {
      if (saved === undefined) delete process.env.CCB_PTY_BACKEND;
      else process.env.CCB_PTY_BACKEND = saved;
      await pipeCore.dispose();
    }
  });
});
