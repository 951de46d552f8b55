import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { createCore } from "../../../src/core/core.ts";
import type { EditorBridge } from "../../../src/core/editor/bridge.ts";
import { isCcbError } from "../../../src/core/errors.ts";
import { workspaceTools } from "../../../src/tools/catalog.ts";
import type { AnyToolDef } from "../../../src/tools/kernel.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

const ws = tmpdirFixture();
const outside = tmpdirFixture();
after(() => {
  ws.cleanup();
  outside.cleanup();
});
writeFileSync(join(ws.path, "a.ts"), "export const a = 1;\n");
writeFileSync(join(outside.path, "secret.ts"), "secret\n");
symlinkSync(join(outside.path, "secret.ts"), join(ws.path, "link.ts"));
mkdirSync(join(ws.path, "sub"));

const editorToolNames = [
  "vscode_open",
  "editor_open",
  "editor_state",
  "editor_set_selection",
  "editor_apply_edits",
  "diagnostics_get",
  "vscode_list_commands",
  "vscode_execute_command",
  "extensions_list",
  "extensions_install",
  "extensions_uninstall",
  "language_document_symbols",
  "language_workspace_symbols",
  "language_definition",
  "language_references",
  "language_hover",
  "language_implementations",
  "language_type_definition",
  "language_signature_help",
  "language_call_hierarchy",
  "language_type_hierarchy",
  "refactor_rename",
  "refactor_move",
  "refactor_code_actions",
  "refactor_apply_code_action",
  "refactor_source_action",
  "refactor_format",
];

function tool(name: string): AnyToolDef {
  const t = workspaceTools.find((x) => x.name === name);
  assert.ok(t, `${name} is registered`);
  return t;
}

const minimalArgs: Record<string, unknown> = {
  vscode_open: {},
  editor_open: { path: "a.ts" },
  editor_state: {},
  editor_set_selection: {
    path: "a.ts",
    selections: [{ anchor: { line: 1, column: 1 }, active: { line: 1, column: 2 } }],
  },
  editor_apply_edits: {
    path: "a.ts",
    edits: [{ range: { start: { line: 1, column: 1 }, end: { line: 1, column: 1 } }, newText: "x" }],
  },
  diagnostics_get: {},
  vscode_list_commands: {},
  vscode_execute_command: { command: "noop" },
  extensions_list: {},
  extensions_install: { id: "pub.ext" },
  extensions_uninstall: { id: "pub.ext" },
  language_document_symbols: { path: "a.ts" },
  language_workspace_symbols: { query: "a" },
  language_definition: { path: "a.ts", position: { line: 1, column: 14 } },
  language_references: { path: "a.ts", position: { line: 1, column: 14 } },
  language_hover: { path: "a.ts", position: { line: 1, column: 14 } },
  language_implementations: { path: "a.ts", position: { line: 1, column: 14 } },
  language_type_definition: { path: "a.ts", position: { line: 1, column: 14 } },
  language_signature_help: { path: "a.ts", position: { line: 1, column: 14 } },
  language_call_hierarchy: { path: "a.ts", position: { line: 1, column: 14 } },
  language_type_hierarchy: { path: "a.ts", position: { line: 1, column: 14 } },
  refactor_rename: { path: "a.ts", position: { line: 1, column: 14 }, newName: "b" },
  refactor_move: { from: "a.ts", to: "b.ts" },
  refactor_code_actions: { path: "a.ts" },
  refactor_apply_code_action: { id: "a1" },
  refactor_source_action: { path: "a.ts" },
  refactor_format: { path: "a.ts" },
};

describe("editor tools without a workbench", () => {
  const core = createCore({ roots: [ws.path] });
  core.claimEditor("test").clear("OpenVSCode runtime not installed: run `ccb runtime fetch`");
  for (const name of editorToolNames) {
    test(`${name} fails with BRIDGE_UNAVAILABLE and the reason`, async () => {
      const t = tool(name);
      assert.equal(t.needsBridge, true);
      const args = t.input.parse(minimalArgs[name]);
      await assert.rejects(
        t.execute(args, { core, signal: new AbortController().signal, log: core.log }),
        (err: unknown) => {
          assert.ok(isCcbError(err, "BRIDGE_UNAVAILABLE"), String(err));
          assert.match((err as Error).message, /ccb runtime fetch/);
          return true;
        },
      );
    });
  }
  test("refactor_move without a workbench says the editor is needed and that a plain move updates no import", async () => {
    const t = tool("refactor_move");
    await assert.rejects(
      t.execute(t.input.parse({ from: "a.ts", to: "sub/a.ts" }), {
        core,
        signal: new AbortController().signal,
        log: core.log,
      }),
      (err: unknown) => {
        assert.ok(isCcbError(err, "BRIDGE_UNAVAILABLE"), String(err));
        assert.match((err as { hint?: string }).hint ?? "", /needs the editor.*plain move.*updates no import/s);
        return true;
      },
    );
  });
  test("every field of every editor tool is described", () => {
    for (const name of editorToolNames) {
      const schema = tool(name).input.toJSONSchema() as { properties?: Record<string, { description?: string }> };
      for (const [field, prop] of Object.entries(schema.properties ?? {})) {
        assert.ok(prop.description, `${name}.${field} has a description`);
      }
    }
  });
});

describe("editor tools with a bridge", () => {
  const core = createCore({ roots: [ws.path] });
  const calls: { method: string; params: unknown }[] = [];
  const answers: Record<string, unknown> = {};
  const bridge: EditorBridge = {
    async call(method, params) {
      calls.push({ method, params });
      return answers[method];
    },
    onEvent: () => () => {},
  };
  const editor = core.claimEditor("test");
  editor.set(bridge);
  editor.setWorkbench({ url: "http://127.0.0.1:1/ide/SECRETSECRETSECRETSECRET/", runtime: "code-server" });
  const ctx = { core, signal: new AbortController().signal, log: core.log };

  test("vscode_open puts the URL only in meta", async () => {
    const r = await tool("vscode_open").execute({}, ctx);
    assert.doesNotMatch(r.text, /SECRET/);
    assert.doesNotMatch(JSON.stringify(r.structured), /SECRET/);
    assert.match(JSON.stringify(r.meta), /SECRET/);
  });

  test("a symlink that escapes the workspace is refused before the bridge is called", async () => {
    calls.length = 0;
    const t = tool("editor_apply_edits");
    const args = t.input.parse({ ...(minimalArgs.editor_apply_edits as object), path: "link.ts" });
    await assert.rejects(t.execute(args, ctx), (err: unknown) => isCcbError(err, "PATH_OUTSIDE_WORKSPACE"));
    assert.equal(calls.length, 0);
  });

  test("vscode_execute_command confines tagged URI arguments", async () => {
    calls.length = 0;
    answers["commands.execute"] = { result: null };
    const t = tool("vscode_execute_command");
    await assert.rejects(
      t.execute(t.input.parse({ command: "x", args: [{ $type: "uri", path: "link.ts" }] }), ctx),
      (err: unknown) => isCcbError(err, "PATH_OUTSIDE_WORKSPACE"),
    );
    assert.equal(calls.length, 0);
    await t.execute(
      t.input.parse({
        command: "x",
        args: [
          { $type: "uri", path: "a.ts" },
          { $type: "position", line: 0, character: 1 },
        ],
      }),
      ctx,
    );
    assert.deepEqual(calls[0]?.params, {
      command: "x",
      args: [
        { $type: "uri", path: join(ws.path, "a.ts") },
        { $type: "position", line: 0, character: 1 },
      ],
      waitMs: 15_000,
    });
  });

  test("vscode_execute_command refuses ccb's review commands and runCommands before the bridge (control: other commands run)", async () => {
    answers["commands.execute"] = { result: true };
    const t = tool("vscode_execute_command");
    for (const command of [
      "ccb.diff.accept",
      "ccb.diff.acceptHunk",
      "ccb.diff.reject",
      "ccb.diff.rejectHunk",
      "ccb.checkpoints.undo",
      "ccb.checkpoints.restore",
      "ccb.sendSelection",
      " CCB.Diff.Accept",
      "runCommands",
    ]) {
      calls.length = 0;
      await assert.rejects(t.execute(t.input.parse({ command, args: [{ hunk: 0 }] }), ctx), (err: unknown) => {
        assert.ok(isCcbError(err, "PERMISSION_DENIED"), `${command}: ${String(err)}`);
        assert.match((err as Error).message, /person/);
        return true;
      });
      assert.equal(calls.length, 0, `${command} never reaches the workbench`);
    }
    for (const command of ["ccb.terminals.list", "ccb.terminal.new", "editor.action.formatDocument"]) {
      calls.length = 0;
      await t.execute(t.input.parse({ command }), ctx);
      assert.equal(calls[0]?.method, "commands.execute", command);
    }
  });

  test("1-based tool positions become zero-based wire positions", async () => {
    calls.length = 0;
    answers["language.definition"] = {
      locations: [
        { path: join(ws.path, "a.ts"), range: { start: { line: 0, character: 13 }, end: { line: 0, character: 14 } } },
      ],
    };
    const t = tool("language_definition");
    const r = await t.execute(t.input.parse({ path: "a.ts", position: { line: 1, column: 14 } }), ctx);
    assert.deepEqual(calls[0]?.params, { path: join(ws.path, "a.ts"), position: { line: 0, character: 13 } });
    assert.match(r.text, /a\.ts:1:14/);
  });

  test("an answer of the wrong shape is a BRIDGE_ERROR, not a success", async () => {
    answers["extensions.list"] = { nope: true };
    await assert.rejects(tool("extensions_list").execute({}, ctx), (err: unknown) => isCcbError(err, "BRIDGE_ERROR"));
  });
});
