import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";

import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { z } from "zod";
import { diffContent, type Todo } from "../../../src/agent/converters.ts";
import { diagnosticsText } from "../../../src/agent/live-editor.ts";
import { ModelClient } from "../../../src/agent/model.ts";
import type { ModeId, SessionConfig } from "../../../src/agent/modes.ts";
import { TurnOutlet } from "../../../src/agent/outlet.ts";
import type { AgentPeer } from "../../../src/agent/peer.ts";
import { PermissionRules } from "../../../src/agent/permissions.ts";
import type { StoreRecord } from "../../../src/agent/store.ts";
import type { EditFeedback } from "../../../src/agent/tool-runner.ts";
import { BUILTIN_TOOLS } from "../../../src/agent/tools/index.ts";
import { createClientIO } from "../../../src/agent/tools/io.ts";
import { type AcpTool, defineAcpTool, offeredTools } from "../../../src/agent/tools/types.ts";
import { Turn, type TurnHost } from "../../../src/agent/turn.ts";
import { createCore } from "../../../src/core/core.ts";
import { CcbError } from "../../../src/core/errors.ts";
import { silentLogger } from "../../../src/core/log.ts";
import { lastToolResults } from "../../helpers/acp-scripts.ts";
import { repoRoot } from "../../helpers/cli.ts";
import { type Reply, startFakeAnthropic } from "../../helpers/fake-anthropic.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

const ACP = join(repoRoot, "src/agent");

/** Relative imports (static, type-only and dynamic) of a TypeScript file, as absolute paths. */
function importsOf(file: string): string[] {
  const src = readFileSync(file, "utf8");
  const specs = [...src.matchAll(/(?:from\s+|import\s*\(\s*)["'](\.{1,2}\/[^"']+)["']/g)].map((m) => m[1] as string);
  return specs.map((s) => resolve(dirname(file), s));
}

/** Every file reachable from `start` through relative imports. */
function reachable(start: string): Set<string> {
  const seen = new Set<string>();
  const todo = [start];
  while (todo.length > 0) {
    const f = todo.pop() as string;
    if (seen.has(f)) continue;
    seen.add(f);
    if (f.startsWith(ACP)) todo.push(...importsOf(f));
  }
  return seen;
}

test("no circle: the turn, the tool runner, the gates and the live editor never reach session.ts", () => {
  const session = join(ACP, "session.ts");
  for (const name of [
    "turn.ts",
    "tool-runner.ts",
    "tools/plan.ts",
    "live-editor.ts",
    "outlet.ts",
    "workbench.ts",
    "session-commands.ts",
  ]) {
    const from = join(ACP, name);
    assert.ok(reachable(from).size > 1, `${name} has imports to follow`);
    assert.ok(!reachable(from).has(session), `${name} must not import session.ts, directly or not`);
  }
  // the check itself can fail: the session does reach the turn
  assert.ok(reachable(session).has(join(ACP, "turn.ts")));
  const importers = readdirSync(ACP)
    .filter((n) => n.endsWith(".ts") && n !== "session.ts")
    .filter((n) => importsOf(join(ACP, n)).includes(session));
  assert.deepEqual(importers.sort(), ["agent.ts"]);
});

test("the generic runner and the turn name no tool", () => {
  for (const name of ["turn.ts", "tool-runner.ts"]) {
    const src = readFileSync(join(ACP, name), "utf8");
    assert.doesNotMatch(src, /\.name\s*[!=]==?\s*["'`]/, `${name} compares a tool name with a literal`);
    assert.ok(!src.includes('"exit_plan_mode"'), `${name} names exit_plan_mode`);
  }
  const gated = BUILTIN_TOOLS.filter((t) => t.acp.gate);
  assert.deepEqual(
    gated.map((t) => t.name),
    ["exit_plan_mode"],
  );
});

test("tools that need the bridge are offered only while it is connected", () => {
  const plain = { name: "plain" } as AcpTool;
  const editor = { name: "language_hover", needsBridge: true } as AcpTool;
  assert.deepEqual(
    offeredTools([plain, editor], false).map((t) => t.name),
    ["plain"],
  );
  assert.deepEqual(
    offeredTools([plain, editor], true).map((t) => t.name),
    ["plain", "language_hover"],
  );
});

test("diagnostics text: file:line:col severity message, relative paths, hints left out, capped", () => {
  const at = (line: number) => ({ start: { line, character: 4 }, end: { line, character: 9 } });
  const files = [
    {
      path: "/p/src/a.ts",
      diagnostics: [
        {
          range: at(0),
          severity: "error" as const,
          message: "Type 'string' is not\n  assignable to type 'number'.",
          source: "ts",
          code: 2322,
        },
        { range: at(2), severity: "hint" as const, message: "unused" },
        ...Array.from({ length: 40 }, (_, i) => ({ range: at(i + 3), severity: "warning" as const, message: `w${i}` })),
      ],
    },
  ];
  const t = diagnosticsText(files, "/p");
  const lines = t.split("\n");
  assert.equal(lines[0], "Diagnostics of src/a.ts from the editor's language servers:");
  assert.equal(lines[1], "src/a.ts:1:5 error: Type 'string' is not assignable to type 'number'. [ts 2322]");
  assert.ok(!t.includes("unused"));
  assert.equal(lines.length, 1 + 30 + 1);
  assert.equal(lines.at(-1), "... and 11 more");
  assert.equal(
    diagnosticsText([{ path: "/elsewhere/b.ts", diagnostics: [] }], "/p"),
    "Diagnostics: none reported for /elsewhere/b.ts.",
  );
  assert.match(
    diagnosticsText([{ path: "/p/b.ts", diagnostics: [] }], "/p", { busyMs: 5000 }),
    /within 5000 ms: this list may be stale/,
  );
  assert.match(
    diagnosticsText([{ path: "/p/b.ts", diagnostics: [] }], "/p", { startingMs: 30000, languages: ["typescript"] }),
    /^Diagnostics: none reported for b\.ts \(the language server for typescript was still starting after 30000 ms: this list may be stale\)\.$/,
  );
});

/** A session stand-in: the turn sees only TurnHost. */
function fakeHost(o: {
  cwd: string;
  dataDir: string;
  apiUrl: string;
  tools: AcpTool[];
  feedback?: EditFeedback;
  answer?: string;
}) {
  const records: StoreRecord[] = [];
  const history: MessageParam[] = [];
  const modes: ModeId[] = [];
  const core = createCore({ roots: [o.cwd], log: silentLogger });
  const peer: AgentPeer = {
    update: async () => undefined,
    requestPermission: async () => (o.answer ? { outcome: "selected", optionId: o.answer } : { outcome: "cancelled" }),
  };
  const config: SessionConfig = { mode: "plan", model: "claude-test", models: ["claude-test"], thought: "off" };
  const settings = {
    apiKey: "sk-ant-unit",
    authToken: undefined,
    baseURL: o.apiUrl,
    model: "claude-test",
    models: ["claude-test"],
    thinking: "off" as const,
    maxTurns: 5,
    maxTokens: 1000,
    permissionMode: undefined,
    prices: {},
    maxRetries: 0,
    retryBaseMs: 10,
    timeoutMs: 10_000,
  };
  let turnNo = 0;
  const host: TurnHost = {
    id: "ccb-unit",
    cwd: o.cwd,
    core,
    io: createClientIO({}, core, "ccb-unit", o.cwd),
    rules: PermissionRules.forProject(o.dataDir, o.cwd),
    log: silentLogger,
    peer,
    config,
    settings,
    maxTurns: 5,
    history,
    nextTurn: () => ++turnNo,
    append: (r) => void records.push(r),
    pushMessage: (_turn, m) => void history.push(m),
    maybeTitle: () => undefined,
    localCommand: () => undefined,
    expandCommand: () => undefined,
    tools: () => o.tools,
    gitState: async () => undefined,
    systemPrompt: () => "system",
    modelClient: async () => new ModelClient(settings, silentLogger),
    recordUsage: () => undefined,
    setMode: (mode: ModeId) => {
      config.mode = mode;
      modes.push(mode);
    },
    setPlan: (_outlet: TurnOutlet, _turn: number, _todos: Todo[]) => undefined,
    markChanged: () => undefined,
    editFeedback: () => o.feedback,
  };
  return { host, records, modes, core };
}

test("a Turn driven through TurnHost: a gated tool switches the mode; an edit's result carries the editor's feedback", async () => {
  const dir = tmpdirFixture();
  const data = tmpdirFixture();
  const replies: Reply[] = [
    { toolUses: [{ id: "toolu_plan", name: "exit_plan_mode", input: { plan: "1. change a.txt" } }] },
    { toolUses: [{ id: "toolu_edit", name: "touch", input: { path: "a.txt" } }] },
    { toolUses: [{ id: "toolu_edit2", name: "touch", input: { path: "a.txt" } }] },
    { text: "done" },
  ];
  let i = 0;
  const api = await startFakeAnthropic({ script: () => replies[i++] ?? { text: "extra" } });
  const seen: string[][] = [];
  const touch = defineAcpTool({
    name: "touch",
    title: "Touch",
    description: "writes a file",
    input: z.object({ path: z.string() }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    acp: {
      kind: "edit",
      title: (x) => `Touch ${x.path}`,
      locations: () => [],
      access: () => ({ category: "edit", ruleKey: "edit" }),
    },
    async execute(x, ctx) {
      const abs = await ctx.io.resolve(x.path);
      await ctx.io.writeText(abs, "new\n", ctx.signal);
      return { text: `Touched ${abs}.`, content: [diffContent(abs, null, "new\n")] };
    },
  });
  const feedback: EditFeedback = {
    async afterEdit(files) {
      seen.push(files.map((f) => `${f.path}=${f.text}`));
      // the second edit's editor goes away while it is asked
      if (seen.length > 1) throw new CcbError("BRIDGE_UNAVAILABLE", "The editor went away before answering.");
      return "Diagnostics: none reported for a.txt.";
    },
  };
  const { host, records, modes, core } = fakeHost({
    cwd: dir.path,
    dataDir: data.path,
    apiUrl: api.url,
    tools: [...BUILTIN_TOOLS, touch],
    feedback,
    answer: "acceptEdits",
  });
  try {
    const ac = new AbortController();
    const outlet = new TurnOutlet(host.peer, host.id, silentLogger);
    const stop = await new Turn(host, outlet, ac.signal).run([{ type: "text", text: "go" }]);
    assert.equal(stop, "end_turn");
    assert.deepEqual(modes, ["acceptEdits"], "the plan gate switched the mode");
    const planResult = lastToolResults(api.requests[1]?.body)[0];
    assert.equal(planResult?.content, "The user approved the plan. Implement it now.");
    const editResult = lastToolResults(api.requests[2]?.body)[0];
    assert.equal(editResult?.content, `Touched ${join(dir.path, "a.txt")}.\n\nDiagnostics: none reported for a.txt.`);
    // an editor that could not be asked is said, not left silent (which would read as "no errors")
    const unchecked = lastToolResults(api.requests[3]?.body)[0];
    assert.match(
      String(unchecked?.content),
      /^Touched .*a\.txt\.\n\nDiagnostics: not available for this edit: BRIDGE_UNAVAILABLE: The editor went away before answering\./,
    );
    assert.deepEqual(seen, [[`${join(dir.path, "a.txt")}=new\n`], [`${join(dir.path, "a.txt")}=new\n`]]);
    assert.deepEqual(
      records.filter((r) => r.t === "turn_end").map((r) => (r as { stopReason: string }).stopReason),
      ["end_turn"],
    );
  } finally {
    await api.close();
    await core.dispose();
    dir.cleanup();
    data.cleanup();
  }
});

test("a Turn without a live editor: the edit result is the tool's own text; keep planning rejects the plan", async () => {
  const dir = tmpdirFixture();
  const data = tmpdirFixture();
  const replies: Reply[] = [
    { toolUses: [{ id: "toolu_plan", name: "exit_plan_mode", input: { plan: "p" } }] },
    { text: "ok" },
  ];
  let i = 0;
  const api = await startFakeAnthropic({ script: () => replies[i++] ?? { text: "extra" } });
  const { host, modes, core } = fakeHost({
    cwd: dir.path,
    dataDir: data.path,
    apiUrl: api.url,
    tools: [...BUILTIN_TOOLS],
    answer: "plan",
  });
  try {
    const outlet = new TurnOutlet(host.peer, host.id, silentLogger);
    assert.equal(
      await new Turn(host, outlet, new AbortController().signal).run([{ type: "text", text: "go" }]),
      "end_turn",
    );
    assert.deepEqual(modes, []);
    const r = lastToolResults(api.requests[1]?.body)[0];
    assert.equal(r?.is_error, true);
    assert.equal(r?.content, "The user wants to keep planning. Ask what to change, or refine the plan.");
  } finally {
    await api.close();
    await core.dispose();
    dir.cleanup();
    data.cleanup();
  }
});
