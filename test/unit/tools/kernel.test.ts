import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { toolsForModel } from "../../../src/agent/model-tools.ts";
import {
  AGENT_TOOLS,
  BUILTIN_TOOLS,
  CHECKPOINT_TOOLS,
  DEBUG_TOOLS,
  EDITOR_TOOLS,
  TASK_TOOLS,
} from "../../../src/agent/tools/index.ts";
import { type AgentToolContext, defineAcpTool, previewOf } from "../../../src/agent/tools/types.ts";
import { type Core, createCore } from "../../../src/core/core.ts";
import { CcbError, isCcbError } from "../../../src/core/errors.ts";
import { silentLogger } from "../../../src/core/log.ts";
import { registerSecret, resetSecretsForTests } from "../../../src/core/secret-vault.ts";
import { ideToolList, RpcSession } from "../../../src/protocols/ide/rpc.ts";
import { IDE_TOOLS } from "../../../src/protocols/ide/tools/index.ts";
import { type AnyIdeTool, defineIdeTool, type IdeToolDeps, runIdeTool } from "../../../src/protocols/ide/tools/tool.ts";
import { createMcpServer, mcpToolList } from "../../../src/protocols/mcp/server.ts";
import { workspaceTools } from "../../../src/tools/catalog.ts";
import {
  argumentErrorText,
  defineTool,
  inputSchema,
  READ_ONLY,
  runTool,
  sanitizeMessage,
  toolFailure,
  trustedFailure,
} from "../../../src/tools/kernel.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

/**
 * The tool kernel shared by the MCP, IDE and ACP adapters: one schema per tool, one argument-error
 * text, one sanitizing of unexpected failures, seen through each adapter's own wire form.
 */

const SECRET = "ccbtok_9f8e7d6c5b4a39281706f5e4d3c2b1a0";
const PRIVATE_PATH = "/home/alice/.ssh/id_ed25519";
const LEAKY_MESSAGE = `cannot open ${PRIVATE_PATH} with token ${SECRET}`;

const Input = z.object({
  word: z.string().describe("A word."),
  times: z.number().int().min(1).max(3).optional().describe("Repeats."),
});
const BAD_ARGS = { word: 5, times: 9 };

function leaky(): never {
  const err = new Error(`${LEAKY_MESSAGE}\n    at secretFunction (/srv/private/secret.ts:1:1)`);
  throw err;
}

const mcpTool = defineTool({
  name: "leaky",
  title: "Leaky",
  description: "Fails with a message that holds a secret and a private path.",
  input: Input,
  annotations: READ_ONLY,
  async execute() {
    leaky();
  },
});

const ideTool: AnyIdeTool = defineIdeTool({
  name: "leaky",
  title: "Leaky",
  description: "Fails with a message that holds a secret and a private path.",
  input: Input,
  annotations: READ_ONLY,
  async execute() {
    leaky();
  },
});

const acpTool = defineAcpTool({
  name: "leaky",
  title: "Leaky",
  description: "Fails with a message that holds a secret and a private path.",
  input: Input,
  annotations: READ_ONLY,
  acp: {
    kind: "read",
    title: () => "Leaky",
    locations: () => [],
    access: () => ({ category: "read", ruleKey: "leaky" }),
    async preview() {
      leaky();
    },
  },
  async execute() {
    leaky();
  },
});

/** One IDE tools/call over the IDE's JSON-RPC session (the adapter the CLI's WebSocket talks to). */
async function ideCall(args: unknown): Promise<{ content: { text: string }[]; isError?: boolean }> {
  const sent: string[] = [];
  const deps = {} as IdeToolDeps; // the test tool touches no editor, diff tab or notifier
  const rpc = new RpcSession<AnyIdeTool>((t) => sent.push(t), {
    tools: [ideTool],
    serverInfo: { name: "t", version: "0" },
    callTool: (tool, a, signal) => runIdeTool(tool, a, { ...deps, connectionId: 1, signal, log: silentLogger }),
    toolError: (message) => ({ content: [{ type: "text", text: message }], isError: true }),
    onInitialized() {},
    onNotification() {},
  });
  rpc.receive(
    JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "leaky", arguments: args } }),
  );
  while (sent.length === 0) await new Promise((r) => setImmediate(r));
  return JSON.parse(sent[0]!).result;
}

function acpContext(core: Core): AgentToolContext {
  return {
    sessionId: "s",
    cwd: core.workspace.roots[0]!,
    core,
    io: {} as AgentToolContext["io"],
    signal: new AbortController().signal,
    log: silentLogger,
    setPlan() {},
  };
}

describe("tool kernel", () => {
  const dir = tmpdirFixture();
  let core: Core;
  let client: Client;
  before(async () => {
    core = createCore({ roots: [dir.path] });
    const server = createMcpServer({ core, tools: [mcpTool], log: silentLogger });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    client = new Client({ name: "t", version: "0" });
    await client.connect(b);
  });
  after(async () => {
    await client.close();
    await core.dispose();
    resetSecretsForTests();
    dir.cleanup();
  });

  it("a tool's input schema is generated once and is the same object in MCP, IDE and ACP listings", () => {
    const hover = workspaceTools.find((t) => t.name === "language_hover")!;
    const first = inputSchema(hover.input);
    assert.equal(inputSchema(hover.input), first, "cached: the second call returns the same object");
    assert.equal(first.type, "object");
    assert.equal("$schema" in first, false);
    const mcp = mcpToolList(workspaceTools).find((t) => t.name === "language_hover")!;
    assert.equal(mcp.inputSchema, first, "MCP tools/list");
    const acp = toolsForModel(EDITOR_TOOLS).find((t) => t.name === "language_hover")!;
    assert.equal(acp.input_schema, first, "ACP model tools: the same definition, the same schema");
    for (const t of IDE_TOOLS) {
      const ide = (ideToolList(IDE_TOOLS) as { name: string; inputSchema: unknown }[]).find((x) => x.name === t.name)!;
      assert.equal(ide.inputSchema, inputSchema(t.input), `IDE tools/list ${t.name}`);
    }
    for (const t of BUILTIN_TOOLS) {
      assert.equal(toolsForModel([t])[0]!.input_schema, inputSchema(t.input), `ACP ${t.name}`);
    }
  });

  it("one catalog: the ACP editor tools are the catalog's definitions, marked needsBridge; the built-in ones are not", () => {
    const names = [
      "language_definition",
      "language_references",
      "language_hover",
      "language_document_symbols",
      "language_workspace_symbols",
      "diagnostics_get",
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
    assert.deepEqual(
      EDITOR_TOOLS.map((t) => t.name),
      names,
    );
    for (const t of EDITOR_TOOLS) {
      const def = workspaceTools.find((d) => d.name === t.name)!;
      assert.equal(t.input, def.input);
      assert.equal(def.needsBridge, true);
      assert.equal(t.needsBridge, true);
    }
    assert.ok(BUILTIN_TOOLS.every((t) => t.needsBridge !== true));
    assert.equal(
      AGENT_TOOLS.length,
      BUILTIN_TOOLS.length + EDITOR_TOOLS.length + DEBUG_TOOLS.length + TASK_TOOLS.length + CHECKPOINT_TOOLS.length,
    );
    for (const t of [...DEBUG_TOOLS, ...TASK_TOOLS, ...CHECKPOINT_TOOLS])
      assert.equal(t.input, workspaceTools.find((d) => d.name === t.name)?.input);
    assert.equal(new Set(AGENT_TOOLS.map((t) => t.name)).size, AGENT_TOOLS.length);
  });

  it("every kernel tool states a title, all four annotations and a description for every field", () => {
    for (const t of [...workspaceTools, ...IDE_TOOLS]) {
      assert.ok(t.title, `${t.name} has a title`);
      for (const k of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const)
        assert.equal(typeof t.annotations[k], "boolean");
    }
    for (const t of AGENT_TOOLS) {
      const props = (inputSchema(t.input).properties ?? {}) as Record<string, { description?: string }>;
      for (const [field, p] of Object.entries(props)) assert.ok(p.description, `${t.name}.${field} is described`);
    }
  });

  it("an argument error has one text on MCP, IDE and ACP", async () => {
    const parsed = Input.safeParse(BAD_ARGS);
    assert.equal(parsed.success, false);
    const expected = argumentErrorText("leaky", parsed.error!);
    assert.match(expected, /^Invalid arguments for tool leaky: word: .*expected string.*; times: /);

    await assert.rejects(client.callTool({ name: "leaky", arguments: BAD_ARGS }), (err: unknown) => {
      assert.ok(err instanceof McpError);
      assert.equal(err.code, -32602);
      assert.equal(err.message, `MCP error -32602: ${expected}`);
      return true;
    });
    const ide = await ideCall(BAD_ARGS);
    assert.equal(ide.isError, true);
    assert.deepEqual(ide.content, [{ type: "text", text: expected }]);
    const acp = acpTool.input.safeParse(BAD_ARGS);
    assert.equal(acp.success, false);
    assert.equal(argumentErrorText(acpTool.name, acp.error!), expected);
  });

  it("attack: an unexpected error holding a secret and a private path leaks neither on MCP, IDE or ACP", async () => {
    registerSecret(SECRET);
    // positive control: the raw failure does hold both
    let raw = "";
    try {
      leaky();
    } catch (err) {
      raw = (err as Error).message;
    }
    assert.ok(raw.includes(SECRET) && raw.includes(PRIVATE_PATH) && raw.includes("/srv/private"));

    const seen: string[] = [];
    const mcp = await client.callTool({ name: "leaky", arguments: { word: "x" } });
    assert.equal(mcp.isError, true);
    assert.equal((mcp.structuredContent as { error: { code: string } }).error.code, "INTERNAL");
    seen.push(JSON.stringify(mcp));

    const ide = await ideCall({ word: "x" });
    assert.equal(ide.isError, true);
    seen.push(JSON.stringify(ide));

    const ctx = acpContext(core);
    // one at a time: a call is recorded before it runs (core/checkpoints), so a second promise made
    // at once would reject before anything awaits it
    for (const p of [() => runTool(acpTool, { word: "x" }, ctx), () => previewOf(acpTool, { word: "x" }, ctx)]) {
      await assert.rejects(p(), (err: unknown) => {
        assert.ok(isCcbError(err, "INTERNAL"));
        seen.push(err.toUserText(), JSON.stringify(err.toJSON()));
        return true;
      });
    }
    const expected = "leaky failed unexpectedly: cannot open <path> with token [secret removed by ccb]";
    for (const s of seen) {
      assert.doesNotMatch(s, /ccbtok_|9f8e7d6c|alice|\.ssh|id_ed25519|\/srv\/private|secretFunction/, s);
      assert.ok(s.includes(expected), s);
    }
    assert.equal(seen.length, 6);
  });

  it("a failure a tool vouches for (a remote MCP server's own) passes unchanged; the same raw error is sanitized", () => {
    const remote = new Error(`remote says ${PRIVATE_PATH} is missing`);
    const trusted = trustedFailure(remote);
    assert.equal(toolFailure("mcp__x__y", trusted), trusted);
    assert.equal(trusted.toUserText(), `INTERNAL: remote says ${PRIVATE_PATH} is missing`);
    assert.doesNotMatch(toolFailure("mcp__x__y", remote).message, /alice/);
  });

  it("a token-like word is redacted even when it is not a registered secret; typed errors pass unchanged", () => {
    resetSecretsForTests();
    assert.equal(sanitizeMessage(`id ${SECRET} here`), "id <redacted> here");
    const e = toolFailure(
      "t",
      new Error(`bad key sk-ant-api03-${"A1".repeat(20)} at C:\\Users\\bob\\x.txt and file:///home/bob/y`),
    );
    assert.equal(e.message, "t failed unexpectedly: bad key sk-ant-api0[redacted] at <path> and <path>");
    assert.equal(
      sanitizeMessage("cannot read properties of undefined (reading 'x')"),
      "cannot read properties of undefined (reading 'x')",
    );
    assert.equal(sanitizeMessage("a/b and c/d stay"), "a/b and c/d stay");
    const typed = new CcbError("NOT_FOUND", `No such file: ${dir.path}/a`);
    assert.equal(toolFailure("t", typed), typed);
    assert.equal(toolFailure("again", e), e, "a sanitized failure mapped again stays as it is");
  });
});
