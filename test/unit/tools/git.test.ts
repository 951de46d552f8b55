import assert from "node:assert/strict";
import { existsSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { z } from "zod";
import { createCore } from "../../../src/core/core.ts";
import { isCcbError } from "../../../src/core/errors.ts";
import { silentLogger } from "../../../src/core/log.ts";
import { workspaceTools } from "../../../src/tools/catalog.ts";
import type { AnyToolDef, ToolResult } from "../../../src/tools/kernel.ts";
import { git } from "../../helpers/git.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

function tool(name: string): AnyToolDef {
  const def = workspaceTools.find((t) => t.name === name);
  assert.ok(def, `tool ${name} is registered`);
  return def;
}

async function fixture() {
  const ws = tmpdirFixture({ git: true });
  const outside = tmpdirFixture();
  writeFileSync(join(ws.path, "a.txt"), "alpha\n");
  git(ws.path, "add", ".");
  git(ws.path, "commit", "-q", "-m", "initial");
  const core = createCore({ roots: [ws.path] });
  /** Call a tool as a front end does: parse the arguments with its schema, then execute. */
  const call = (
    name: string,
    args: Record<string, unknown>,
    signal = new AbortController().signal,
  ): Promise<ToolResult> => {
    const def = tool(name);
    return def.execute(def.input.parse(args), { core, signal, log: silentLogger });
  };
  return {
    ws: ws.path,
    outside: outside.path,
    call,
    async [Symbol.asyncDispose]() {
      await core.dispose();
      ws.cleanup();
      outside.cleanup();
    },
  };
}

test("git tools: annotations and described schemas", () => {
  for (const name of ["git_status", "git_diff"]) {
    const def = tool(name);
    assert.deepEqual(def.annotations, {
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
  }
  assert.deepEqual(tool("git_run").annotations, {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: true,
  });
  for (const name of ["git_status", "git_diff", "git_run"]) {
    const def = tool(name);
    assert.ok(def.description.length > 80, `${name} has a real description`);
    const json = z.toJSONSchema(def.input) as { properties: Record<string, { description?: string }> };
    for (const [field, schema] of Object.entries(json.properties))
      assert.ok(schema.description, `${name}.${field} is described`);
  }
  assert.throws(() => tool("git_run").input.parse({ args: [] }));
  assert.throws(() => tool("git_run").input.parse({ args: ["status"], timeoutMs: 10_000_000 }));
  assert.throws(() => tool("git_diff").input.parse({ maxBytes: 0 }));
});

test("git_status: text and structured content", async () => {
  await using fx = await fixture();
  const clean = await fx.call("git_status", {});
  assert.match(clean.text, /^repository \.\n## main\nclean/);
  assert.equal(clean.structured?.clean, true);

  writeFileSync(join(fx.ws, "a.txt"), "alpha 2\n");
  writeFileSync(join(fx.ws, "new.txt"), "new\n");
  git(fx.ws, "mv", "a.txt", "b.txt");
  const r = await fx.call("git_status", {});
  assert.match(r.text, /^R[.M] a\.txt -> b\.txt$/m);
  assert.match(r.text, /^\?\? new\.txt$/m);
  const entries = r.structured?.entries as { path: string; origPath?: string; kind: string }[];
  assert.deepEqual(entries.find((e) => e.path === "b.txt")?.origPath, "a.txt");
  assert.equal(r.structured?.branch, "main");
  assert.equal(r.structured?.clean, false);

  await assert.rejects(fx.call("git_status", { path: fx.outside }), (e: unknown) =>
    isCcbError(e, "PATH_OUTSIDE_WORKSPACE"),
  );
});

test("git_diff: staged and unstaged, truncation is announced in text and structure", async () => {
  await using fx = await fixture();
  const none = await fx.call("git_diff", {});
  assert.equal(none.text, "No unstaged changes.");
  writeFileSync(join(fx.ws, "a.txt"), `${"x".repeat(100)}\n`.repeat(200));
  const unstaged = await fx.call("git_diff", {});
  assert.match(unstaged.text, /^diff --git a\/a\.txt b\/a\.txt/);
  assert.equal(unstaged.structured?.truncated, false);
  assert.equal((await fx.call("git_diff", { staged: true })).text, "No staged changes.");
  git(fx.ws, "add", "a.txt");
  assert.match((await fx.call("git_diff", { staged: true })).text, /^\+x{100}$/m);
  const capped = await fx.call("git_diff", { staged: true, maxBytes: 1000 });
  assert.equal(capped.structured?.truncated, true);
  assert.match(capped.text, /\[The diff is larger than 1000 bytes and was truncated/);
  await assert.rejects(fx.call("git_diff", { paths: ["../x"] }), (e: unknown) =>
    isCcbError(e, "PATH_OUTSIDE_WORKSPACE"),
  );
});

test("git_run: commit and log, exit codes as results, refusals and escapes as errors", async () => {
  await using fx = await fixture();
  writeFileSync(join(fx.ws, "a.txt"), "changed\n");
  const commit = await fx.call("git_run", { args: ["commit", "-am", "second"] });
  assert.match(commit.text, /^git commit -am second\nexit code 0\n\[stdout\]\n\[main [0-9a-f]+\] second/);
  assert.equal(commit.structured?.exitCode, 0);
  const log = await fx.call("git_run", { args: ["log", "--format=%s"] });
  assert.equal(log.structured?.stdout, "second\ninitial\n");
  const failed = await fx.call("git_run", { args: ["checkout", "no-such-branch"] });
  assert.notEqual(failed.structured?.exitCode, 0);
  assert.match(failed.text, /\[stderr\]\nerror: pathspec 'no-such-branch'/);
  const capped = await fx.call("git_run", { args: ["log", "-p"], maxBytes: 10 });
  assert.equal(capped.structured?.truncated, true);
  assert.match(capped.text, /\[output truncated/);

  await assert.rejects(
    fx.call("git_run", { args: ["-c", "core.hooksPath=x", "commit", "-m", "x"] }),
    (e: unknown) => isCcbError(e, "GIT_REFUSED") && e.toUserText().includes("terminal"),
  );
  await assert.rejects(fx.call("git_run", { args: ["config", "core.fsmonitor", "touch x"] }), (e: unknown) =>
    isCcbError(e, "GIT_REFUSED"),
  );
  symlinkSync(fx.outside, join(fx.ws, "out"));
  await assert.rejects(fx.call("git_run", { args: ["log", "--output=out/log.txt"] }), (e: unknown) =>
    isCcbError(e, "PATH_OUTSIDE_WORKSPACE"),
  );
  assert.equal(existsSync(join(fx.outside, "log.txt")), false);
  await assert.rejects(fx.call("git_run", { args: ["status"], cwd: "out" }), (e: unknown) =>
    isCcbError(e, "PATH_OUTSIDE_WORKSPACE"),
  );
});

test("git_run: the tool's AbortSignal cancels the command", async () => {
  await using fx = await fixture();
  const { silentServer } = await import("../../helpers/git.ts");
  const server = await silentServer();
  try {
    const ac = new AbortController();
    const running = fx.call("git_run", { args: ["ls-remote", `git://127.0.0.1:${server.port}/x`] }, ac.signal);
    await server.connected;
    ac.abort();
    await assert.rejects(running, (e: unknown) => isCcbError(e, "ABORTED"));
    await server.closed;
  } finally {
    await server.close();
  }
});
