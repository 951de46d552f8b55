import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { type Core, createCore } from "../../../../src/core/core.ts";
import { CcbError } from "../../../../src/core/errors.ts";
import { createMcpServer, mcpToolList } from "../../../../src/protocols/mcp/server.ts";
import { workspaceTools } from "../../../../src/tools/catalog.ts";
import { type AnyToolDef, defineTool, READ_ONLY } from "../../../../src/tools/kernel.ts";
import { tmpdirFixture } from "../../../helpers/tmp.ts";

/** In-process tests of the MCP mapping with tools made for the purpose (the real tools are tested end to end). */

let cancelledWith: unknown;
let started: () => void = () => {};

const testTools: AnyToolDef[] = [
  defineTool({
    name: "echo",
    title: "Echo",
    description: "Echo a word.",
    input: z.object({
      word: z.string().describe("the word"),
      times: z.number().int().min(1).max(3).optional().describe("repeat"),
    }),
    annotations: READ_ONLY,
    async execute(args) {
      return {
        text: args.word.repeat(args.times ?? 1),
        structured: { word: args.word },
        meta: { "ccb/private": "host-only" },
      };
    },
  }),
  defineTool({
    name: "fails_typed",
    title: "Fails typed",
    description: "Throws a CcbError.",
    input: z.object({}),
    annotations: READ_ONLY,
    async execute() {
      throw new CcbError("VERSION_CONFLICT", "The file changed since you read it.", {
        hint: "Read it again, then retry with the new version.",
        details: { secret: "s3cr3t" },
      });
    },
  }),
  defineTool({
    name: "fails_untyped",
    title: "Fails untyped",
    description: "Throws a plain Error.",
    input: z.object({}),
    annotations: READ_ONLY,
    async execute() {
      throw new TypeError("cannot read properties of undefined\n    at secretFunction (/home/user/secret.ts:1:1)");
    },
  }),
  defineTool({
    name: "waits",
    title: "Waits for cancel",
    description: "Resolves only when cancelled.",
    input: z.object({}),
    annotations: READ_ONLY,
    async execute(_args, ctx) {
      started();
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
      cancelledWith = ctx.signal.reason ?? "aborted";
      return { text: "cancelled" };
    },
  }),
];

describe("MCP server mapping (in-process)", () => {
  const dir = tmpdirFixture();
  let core: Core;
  let client: Client;

  before(async () => {
    core = createCore({ roots: [dir.path] });
    const server = createMcpServer({ core, tools: testTools });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    client = new Client({ name: "unit", version: "1" });
    await client.connect(b);
  });
  after(async () => {
    await client.close();
    await core.dispose();
    dir.cleanup();
  });

  it("lists tools with JSON schemas, titles and all four annotations", async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ["echo", "fails_typed", "fails_untyped", "waits"],
    );
    const echo = tools[0]!;
    assert.equal(echo.title, "Echo");
    assert.equal(echo.inputSchema.type, "object");
    assert.deepEqual(echo.inputSchema.required, ["word"]);
    assert.equal((echo.inputSchema.properties?.word as { description?: string }).description, "the word");
    assert.deepEqual(
      {
        r: echo.annotations?.readOnlyHint,
        d: echo.annotations?.destructiveHint,
        i: echo.annotations?.idempotentHint,
        o: echo.annotations?.openWorldHint,
      },
      { r: true, d: false, i: true, o: false },
    );
  });

  it("returns text, structuredContent and _meta", async () => {
    const r = await client.callTool({ name: "echo", arguments: { word: "ab", times: 2 } });
    assert.deepEqual(r.content, [{ type: "text", text: "abab" }]);
    assert.deepEqual(r.structuredContent, { word: "ab" });
    assert.deepEqual(r._meta, { "ccb/private": "host-only" });
    assert.equal(r.isError, undefined);
  });

  it("answers an unknown tool with InvalidParams (-32602)", async () => {
    await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }), (err: unknown) => {
      assert.ok(err instanceof McpError);
      assert.equal(err.code, -32602);
      assert.match(err.message, /Unknown tool "no_such_tool".*tools\/list/);
      return true;
    });
  });

  it("answers invalid arguments with InvalidParams naming the field", async () => {
    await assert.rejects(client.callTool({ name: "echo", arguments: { word: 5 } }), (err: unknown) => {
      assert.ok(err instanceof McpError);
      assert.equal(err.code, -32602);
      assert.match(err.message, /Invalid arguments for tool echo: word: .*expected string/);
      return true;
    });
    await assert.rejects(client.callTool({ name: "echo", arguments: { word: "x", times: 9 } }), /times: /);
  });

  it("maps a CcbError once: code, message and hint; details never leak", async () => {
    const r = await client.callTool({ name: "fails_typed", arguments: {} });
    assert.equal(r.isError, true);
    assert.deepEqual(r.content, [
      {
        type: "text",
        text: "VERSION_CONFLICT: The file changed since you read it.\nRead it again, then retry with the new version.",
      },
    ]);
    assert.deepEqual(r.structuredContent, {
      error: {
        code: "VERSION_CONFLICT",
        message: "The file changed since you read it.",
        hint: "Read it again, then retry with the new version.",
      },
    });
    assert.doesNotMatch(JSON.stringify(r), /s3cr3t/);
  });

  it("maps an unexpected error to INTERNAL without a stack trace", async () => {
    const r = await client.callTool({ name: "fails_untyped", arguments: {} });
    assert.equal(r.isError, true);
    const text = JSON.stringify(r);
    assert.match(text, /INTERNAL/);
    assert.match(text, /fails_untyped failed unexpectedly: cannot read properties of undefined/);
    assert.doesNotMatch(text, /secretFunction|secret\.ts/);
  });

  it("passes the request's AbortSignal to the tool (MCP cancellation)", async () => {
    const running = new Promise<void>((resolve) => (started = resolve));
    const ac = new AbortController();
    const call = client.callTool({ name: "waits", arguments: {} }, undefined, { signal: ac.signal });
    await running;
    ac.abort("user cancelled");
    await assert.rejects(call);
    // the server side sees notifications/cancelled and aborts the tool's signal
    while (cancelledWith === undefined) await new Promise((r) => setImmediate(r));
    assert.ok(cancelledWith);
  });

  it("the real registry converts: unique names, object schemas, all annotations stated", () => {
    const list = mcpToolList(workspaceTools);
    assert.equal(list.length, workspaceTools.length);
    assert.equal(new Set(list.map((t) => t.name)).size, list.length);
    for (const t of list) {
      assert.equal(t.inputSchema.type, "object", t.name);
      for (const k of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const) {
        assert.equal(typeof t.annotations?.[k], "boolean", `${t.name}.${k}`);
      }
    }
  });
});
