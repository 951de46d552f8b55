import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { type Core, createCore } from "../../../src/core/core.ts";
import { CcbError, renderHint } from "../../../src/core/errors.ts";
import { mcpHintNames, toolErrorResult } from "../../../src/protocols/mcp/errors.ts";
import { createMcpServer } from "../../../src/protocols/mcp/server.ts";
import { TOOL_PROFILES } from "../../../src/tools/catalog.ts";
import { repoRoot } from "../../helpers/cli.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

/** The names of front ends' tools and flags, which the core must not use in what it tells the caller. */
const FRONT_END_WORDS =
  /\b(fs_(list|read|write|delete|move|search)|git_(run|status|diff)|terminal_(create|list|read|write|kill|resize)|editor_\w+|vscode_\w+)\b|ccb serve|--headless-client/;

/** The string literals of a TypeScript source, comments left out (enough for hints: no template nesting). */
function stringLiterals(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  return [...code.matchAll(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`/g)].map((m) => m[0]);
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith(".ts") ? [p] : [];
  });
}

describe("the core says what is wrong; each front end says what to do in its own tools' names", () => {
  it("no string of src/core names a front end's tool or flag (a planted one is found: positive control)", () => {
    const planted = stringLiterals(
      '// fs_list in a comment is fine\nthrow new E("X", { hint: "Use fs_list to see." });',
    );
    assert.deepEqual(
      planted.filter((s) => FRONT_END_WORDS.test(s)),
      ['"Use fs_list to see."'],
    );
    const offenders = sources(join(repoRoot, "src/core")).flatMap((f) =>
      stringLiterals(readFileSync(f, "utf8"))
        .filter((s) => FRONT_END_WORDS.test(s))
        .map((s) => `${relative(repoRoot, f)}: ${s}`),
    );
    assert.deepEqual(offenders, []);
  });

  it("a hint names tools by role; a front end fills in its names, plain words where it has none", () => {
    const e = new CcbError("NOT_FOUND", "No such file: a.ts", { hint: "Check the path; {{list}} shows what exists." });
    assert.equal(e.hintFor({ list: "fs_list" }), "Check the path; fs_list shows what exists.");
    assert.equal(
      e.toUserText({ list: "glob" }),
      "NOT_FOUND: No such file: a.ts\nCheck the path; glob shows what exists.",
    );
    assert.equal(e.hintFor(), "Check the path; a directory listing shows what exists.");
    assert.equal(renderHint('{{git}} ["init"] or {{terminal}}', { git: "git_run" }), 'git_run ["init"] or a terminal');
    assert.equal(renderHint("keeps {{unknown}} as it is"), "keeps {{unknown}} as it is");
    assert.equal(new CcbError("INTERNAL", "x").hintFor({ list: "fs_list" }), undefined);
  });
});

describe("MCP: a core error's hint in the names of the tools this server serves", () => {
  const ws = tmpdirFixture({ prefix: "ccb-hints-" });
  let core: Core;
  const clients: Client[] = [];
  async function connect(profile: keyof typeof TOOL_PROFILES): Promise<Client> {
    const server = createMcpServer({ core, tools: TOOL_PROFILES[profile] });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: "t", version: "1" });
    await client.connect(b);
    clients.push(client);
    return client;
  }
  before(() => {
    core = createCore({ roots: [ws.path] });
  });
  after(async () => {
    for (const c of clients) await c.close();
    await core.dispose();
    ws.cleanup();
  });

  it("all tools: a missing file points at fs_list", async () => {
    const c = await connect("all");
    const r = (await c.callTool({ name: "fs_read", arguments: { path: "missing.txt" } })) as any;
    assert.equal(r.isError, true);
    assert.match(r.content[0].text, /^NOT_FOUND: .*missing\.txt\nCheck the path; fs_list shows what exists\.$/);
    assert.equal(r.structuredContent.error.hint, "Check the path; fs_list shows what exists.");
  });

  it("the editor profile (no file tools: claude has its own) says it in plain words, never a tool it lacks", () => {
    const editor = new Set(TOOL_PROFILES.editor.map((t) => t.name));
    const names = mcpHintNames((n) => editor.has(n));
    assert.deepEqual(names, {});
    const r = toolErrorResult(
      new CcbError("NOT_FOUND", "No such file: a.ts", { hint: "Check the path; {{list}} shows what exists." }),
      "language_hover",
      names,
    ) as any;
    assert.equal(
      r.content[0].text,
      "NOT_FOUND: No such file: a.ts\nCheck the path; a directory listing shows what exists.",
    );
    const all = new Set(TOOL_PROFILES.all.map((t) => t.name));
    assert.equal(mcpHintNames((n) => all.has(n)).list, "fs_list");
  });
});
