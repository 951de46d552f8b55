import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import * as acp from "@agentclientprotocol/sdk";
import { pidAlive } from "../../src/core/pid.ts";
import { AgentHarness, tempDataDir } from "../helpers/acp-harness.ts";
import { lastToolResults, toolThenText } from "../helpers/acp-scripts.ts";
import { artifactSource, keepArtifacts } from "../helpers/artifacts.ts";
import { type FakeAnthropic, isSideRequest, type Script, startFakeAnthropic } from "../helpers/fake-anthropic.ts";
import { codeServerArgs } from "../helpers/peers.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { bootWorkbench, eventually, text, type Workbench } from "../helpers/workbench.ts";

/**
 * `ccb acp` with a live editor: the real CLI attaches to the shared workbench that `ccb serve`
 * (real code-server, bridge extension, headless Chromium) runs for the same folder; the model is
 * the fake Anthropic API, driven by the SDK's ACP client. What the model reads is checked in the
 * request that follows each tool call.
 */

const allowOnce = (p: acp.RequestPermissionRequest): acp.RequestPermissionResponse => {
  const o = p.options.find((x) => x.kind === "allow_once");
  assert.ok(o, "allow_once offered");
  return { outcome: { outcome: "selected", optionId: o.optionId } };
};

/** A tool result and the agent's log about its workbench and diagnostics: what a failed check prints. */
const why = (agent: { stderr: string } | undefined, result: string) =>
  `${result}\n${(agent?.stderr ?? "")
    .split("\n")
    .filter((l) => /share|bridge|diagnostics|language|live editor|workbench/.test(l))
    .join("\n")}`;

/** The agent's log level: info (what the assertions read), or debug with ACP_TEST_LOG=debug (settle times). */
const LOG_LEVEL = process.env.ACP_TEST_LOG === "debug" ? "debug" : "info";

const GOOD = "export const answer: number = 42;\n";
const BROKEN = 'export const answer: number = "forty-two";\n';

/** Many typed declarations: the project the TypeScript server loads before it can check anything. */
const BIG_PROJECT_FILE = Array.from(
  { length: 20_000 },
  (_, i) =>
    `export interface Shape${i} { id: ${i}; next?: Shape${i + 1}; tag: "s${i}" }\n` +
    `export function make${i}(n: number): Shape${i} { return { id: ${i}, tag: "s${i}" } as Shape${i} & { n: typeof n }; }\n`,
).join("");

/** "break" -> an edit that introduces a type error on line 1; "fix" -> the edit back; results -> "Done." */
function editScript(): ReturnType<typeof toolThenText> {
  return toolThenText((prompt) => {
    if (prompt === "break")
      return [{ name: "edit", input: { path: "src/app.ts", old_string: "= 42;", new_string: '= "forty-two";' } }];
    if (prompt === "warm")
      return [{ name: "edit", input: { path: "src/warm.ts", old_string: "w = 1;", new_string: "w = 2;" } }];
    if (prompt === "fix")
      return [{ name: "edit", input: { path: "src/app.ts", old_string: '= "forty-two";', new_string: "= 42;" } }];
    return undefined;
  });
}

const resultText = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((c: any) => (typeof c?.text === "string" ? c.text : "")).join("")
      : JSON.stringify(content);

/**
 * A model that fixes what its own edit broke with the editor's quick fix: it edits src/use.ts to call
 * `helper()` (exported by src/lib.ts, not imported), reads the diagnostic in the edit's result, lists
 * the quick fixes for the file, and applies the one that adds the import, by the id it was given.
 * When a step does not see what it needs, it stops with a text saying so (the test then fails on it).
 */
function quickFixScript(): Script {
  return ({ body }) => {
    if (isSideRequest(body)) return { text: "Title" };
    const steps = (body.messages as any[]).filter(
      (m) => m.role === "assistant" && Array.isArray(m.content) && m.content.some((b: any) => b.type === "tool_use"),
    ).length;
    const last = resultText(lastToolResults(body)[0]?.content);
    if (steps === 0)
      return {
        toolUses: [{ name: "edit", input: { path: "src/use.ts", old_string: "= 1;", new_string: "= helper();" } }],
      };
    if (steps === 1) {
      if (!/Cannot find name 'helper'/.test(last)) return { text: `no diagnostic in the edit's result: ${last}` };
      return { toolUses: [{ name: "refactor_code_actions", input: { path: "src/use.ts", kind: "quickfix" } }] };
    }
    if (steps === 2) {
      const id = /^(\S+) \[quickfix\] Add import from "\.\/lib"/m.exec(last)?.[1];
      if (!id) return { text: `no import fix offered: ${last}` };
      return { toolUses: [{ name: "refactor_apply_code_action", input: { id } }] };
    }
    return { text: /^Applied "Add import from/.test(last) ? "Done." : `not applied: ${last}` };
  };
}

/** The text of the tool_result the model received for the n-th (1-based) model request that carried one. */
function toolResultText(api: FakeAnthropic, n: number): string {
  const withResults = api.requests.filter((r) => lastToolResults(r.body).length > 0);
  const r = withResults[n - 1];
  assert.ok(r, `request with tool results #${n}`);
  const [result] = lastToolResults(r.body);
  const content = result?.content;
  return typeof content === "string" ? content : JSON.stringify(content);
}

keepArtifacts(import.meta.url);

describe("ccb acp with the shared workbench of its folder", () => {
  const ws = tmpdirFixture({ prefix: "ccb-acp-live-ws-" });
  const home = tmpdirFixture({ prefix: "ccb-acp-live-home-" });
  const data = tempDataDir();
  let wb: Workbench;
  let api: FakeAnthropic;
  let h: AgentHarness | undefined;
  artifactSource("acp-agent", () => ({ "stderr.log": h?.stderr ?? "(not started)" }));

  before(async () => {
    mkdirSync(join(ws.path, "src"), { recursive: true });
    writeFileSync(
      join(ws.path, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { strict: true, target: "es2022", module: "esnext" }, include: ["src"] }),
    );
    writeFileSync(join(ws.path, "src/app.ts"), GOOD);
    writeFileSync(join(ws.path, "src/warm.ts"), "export const warm: string = 1;\n");
    writeFileSync(join(ws.path, "src/lib.ts"), "export function helper(): number {\n  return 1;\n}\n");
    writeFileSync(join(ws.path, "src/use.ts"), "export const v: number = 1;\n");
    api = await startFakeAnthropic({ script: editScript() });
    wb = await bootWorkbench(ws.path, home.path);
    // the TypeScript server starts with the first TS file a workbench opens: wait until it answers
    await wb.ok("editor_open", { path: "src/warm.ts" });
    await eventually("the TypeScript server reports on src/warm.ts", async () => {
      const r = await wb.ok("diagnostics_get", { path: "src/warm.ts" });
      return /not assignable to type 'string'/.test(text(r)) ? true : undefined;
    });
  });
  after(async () => {
    await h?.close();
    await wb?.stop();
    await api?.close();
    data.cleanup();
    ws.cleanup();
    await home.cleanupAfterProcesses();
  });

  test("an edit that breaks the types returns the diagnostic in the same tool result; the fix returns none", async () => {
    h = AgentHarness.start({
      apiUrl: api.url,
      dataDir: data.path,
      onPermission: allowOnce,
      env: { XDG_STATE_HOME: join(home.path, "state"), CCB_LOG_LEVEL: "debug" }, // a failure shows why
    });
    await h.initialize();
    const { sessionId } = await h.newSession(ws.path);
    assert.match(h.stderr, /live editor: workbench for /);
    assert.doesNotMatch(h.stderr, /no workbench for /);
    await eventually("the attached session's bridge", async () =>
      /share: attached to the workbench/.test(h!.stderr) ? true : undefined,
    );

    assert.equal((await h.prompt(sessionId, "break")).stopReason, "end_turn");
    assert.equal(readFileSync(join(ws.path, "src/app.ts"), "utf8"), BROKEN);
    const broken = toolResultText(api, 1);
    assert.match(broken, /^Edited .*app\.ts/);
    assert.match(
      broken,
      /src\/app\.ts:1:\d+ error: Type 'string' is not assignable to type 'number'\./,
      why(h, broken),
    );
    // the person sees the agent's edit: the file is open in the shared workbench
    const state = text(await wb.ok("editor_state", { includeText: false }));
    assert.match(state, /src\/app\.ts/);

    assert.equal((await h.prompt(sessionId, "fix")).stopReason, "end_turn");
    assert.equal(readFileSync(join(ws.path, "src/app.ts"), "utf8"), GOOD);
    const fixed = toolResultText(api, 2);
    assert.match(fixed, /^Edited .*app\.ts/);
    assert.match(fixed, /Diagnostics: none reported for src\/app\.ts\./, why(h, fixed));
    assert.doesNotMatch(fixed, /not assignable/);

    // a second session (Zed's next thread) shares the process's attachment, and keeps it after the first closes
    const second = await h.newSession(ws.path);
    await h.agent.request(acp.methods.agent.session.close, { sessionId });
    assert.equal((await h.prompt(second.sessionId, "break")).stopReason, "end_turn");
    assert.match(
      toolResultText(api, 3),
      /src\/app\.ts:1:\d+ error: Type 'string' is not assignable to type 'number'\./,
    );
    assert.equal((await h.prompt(second.sessionId, "fix")).stopReason, "end_turn");
    assert.match(toolResultText(api, 4), /Diagnostics: none reported for src\/app\.ts\./);
    assert.equal(
      h.stderr.split("\n").filter((l) => /share: attached to the workbench/.test(l)).length,
      1,
      "one attachment per process and folder",
    );
    assert.deepEqual(h.strayStdout, []);
  });

  test("the model fixes its edit's diagnostic with the editor's quick fix: list by kind, apply by id, the import lands", async () => {
    const fixer = await startFakeAnthropic({ script: quickFixScript() });
    const agent = AgentHarness.start({
      apiUrl: fixer.url,
      dataDir: data.path,
      onPermission: allowOnce,
      env: { XDG_STATE_HOME: join(home.path, "state"), CCB_LOG_LEVEL: LOG_LEVEL },
    });
    try {
      await agent.initialize();
      const { sessionId } = await agent.newSession(ws.path);
      await eventually("the attached session's bridge", async () =>
        /share: attached to the workbench/.test(agent.stderr) ? true : undefined,
      );
      assert.equal((await agent.prompt(sessionId, "use helper")).stopReason, "end_turn");
      const main = fixer.requests.filter((r) => !isSideRequest(r.body));
      const replies = main.map((r) => resultText(lastToolResults(r.body)[0]?.content));
      assert.match(replies[1] ?? "", /src\/use\.ts:1:\d+ error: Cannot find name 'helper'/, "the edit's result");
      assert.match(replies[2] ?? "", /\[quickfix\] Add import from "\.\/lib"/, "the listed quick fixes");
      assert.match(replies[3] ?? "", /^Applied "Add import from "\.\/lib""/, "the applied fix");
      assert.match(replies[3] ?? "", /\+import \{ helper \} from "\.\/lib";/, "its diff");
      const use = readFileSync(join(ws.path, "src/use.ts"), "utf8");
      assert.match(use, /^import \{ helper \} from "\.\/lib";\n/);
      assert.match(use, /export const v: number = helper\(\);/);
      assert.equal(main.length, 4, "edit, list, apply, answer");
      assert.deepEqual(agent.strayStdout, []);
    } finally {
      await agent.close();
      await fixer.close();
    }
  });
});

describe("ccb acp without a workbench", () => {
  const project = tmpdirFixture({ prefix: "ccb-acp-nowb-" });
  const state = tmpdirFixture({ prefix: "ccb-acp-nowb-state-" });
  const data = tempDataDir();
  let api: FakeAnthropic;

  before(async () => {
    mkdirSync(join(project.path, "src"), { recursive: true });
    writeFileSync(join(project.path, "src/app.ts"), GOOD);
    api = await startFakeAnthropic({ script: editScript() });
  });
  after(async () => {
    await api.close();
    data.cleanup();
    project.cleanup();
    await state.cleanupAfterProcesses();
  });

  test("edits work as before, with no diagnostics, and the log says once that there is no workbench", async () => {
    const h = AgentHarness.start({
      apiUrl: api.url,
      dataDir: data.path,
      onPermission: allowOnce,
      env: { XDG_STATE_HOME: state.path, CCB_LOG_LEVEL: LOG_LEVEL },
    });
    try {
      await h.initialize();
      const { sessionId } = await h.newSession(project.path);
      assert.equal((await h.prompt(sessionId, "break")).stopReason, "end_turn");
      assert.equal((await h.prompt(sessionId, "fix")).stopReason, "end_turn");
      assert.equal(readFileSync(join(project.path, "src/app.ts"), "utf8"), GOOD);
      for (const n of [1, 2]) {
        const result = toolResultText(api, n);
        assert.match(result, /^Edited .*app\.ts \(first change at line 1\)\.$/);
        assert.doesNotMatch(result, /Diagnostics/);
      }
      const notes = h.stderr.split("\n").filter((l) => /no workbench for /.test(l));
      assert.equal(notes.length, 1, h.stderr);
      assert.match(notes[0] ?? "", new RegExp(`no workbench for ${project.path}: edits return no diagnostics`));
      assert.deepEqual(h.strayStdout, []);
    } finally {
      await h.close();
    }
  });
});

describe("a workbench started after the ACP session opened", () => {
  const project = tmpdirFixture({ prefix: "ccb-acp-later-" });
  const home = tmpdirFixture({ prefix: "ccb-acp-later-home-" });
  const data = tempDataDir();
  let api: FakeAnthropic;
  let wb: Workbench | undefined;

  before(async () => {
    mkdirSync(join(project.path, "src"), { recursive: true });
    writeFileSync(join(project.path, "src/app.ts"), GOOD);
    api = await startFakeAnthropic({ script: editScript() });
  });
  after(async () => {
    await wb?.stop();
    await api.close();
    data.cleanup();
    project.cleanup();
    await home.cleanupAfterProcesses();
  });

  test("is picked up at the session's next prompt: from then on edits return diagnostics", async () => {
    const h = AgentHarness.start({
      apiUrl: api.url,
      dataDir: data.path,
      onPermission: allowOnce,
      env: { XDG_STATE_HOME: join(home.path, "state"), CCB_LOG_LEVEL: LOG_LEVEL },
    });
    try {
      await h.initialize();
      const { sessionId } = await h.newSession(project.path);
      assert.match(h.stderr, /no workbench for /);
      assert.equal((await h.prompt(sessionId, "break")).stopReason, "end_turn");
      assert.doesNotMatch(toolResultText(api, 1), /Diagnostics/, "no workbench yet");
      // the person starts one (ccb serve here; ccb ide alike) in the same folder
      wb = await bootWorkbench(project.path, home.path);
      assert.equal((await h.prompt(sessionId, "fix")).stopReason, "end_turn");
      assert.match(h.stderr, /live editor: workbench for .* \(started after this session opened\)/);
      const fixed = toolResultText(api, 2);
      assert.match(fixed, /^Edited .*app\.ts/);
      assert.match(fixed, /Diagnostics: none reported for src\/app\.ts\./, why(h, fixed));
      assert.equal((await h.prompt(sessionId, "break")).stopReason, "end_turn");
      assert.match(
        toolResultText(api, 3),
        /src\/app\.ts:1:\d+ error: Type 'string' is not assignable to type 'number'\./,
      );
      assert.deepEqual(h.strayStdout, []);
    } finally {
      await h.close();
    }
  });
});

describe("ccb --acp --workbench starts and publishes the workbench of its folder", () => {
  const ws = tmpdirFixture({ prefix: "ccb-acp-own-ws-" });
  const home = tmpdirFixture({ prefix: "ccb-acp-own-home-" });
  const data = tempDataDir();
  const recordsDir = join(home.path, "state/ccb/workbenches");
  const records = () => (existsSync(recordsDir) ? readdirSync(recordsDir).filter((n) => n.endsWith(".json")) : []);
  let api: FakeAnthropic;

  before(async () => {
    mkdirSync(join(ws.path, "src"), { recursive: true });
    writeFileSync(
      join(ws.path, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { strict: true }, include: ["src"] }),
    );
    writeFileSync(join(ws.path, "src/app.ts"), GOOD);
    writeFileSync(join(ws.path, "src/warm.ts"), "export const warm: string = 1;\nexport const w = 1;\n");
    // a project that takes the TypeScript server a while to load and check
    writeFileSync(join(ws.path, "src/big.ts"), BIG_PROJECT_FILE);
    api = await startFakeAnthropic({ script: editScript() });
  });
  after(async () => {
    await api.close();
    data.cleanup();
    ws.cleanup();
    await home.cleanupAfterProcesses();
  });

  test("the session's edits get diagnostics from the workbench it started (the first one waits for the TypeScript server to start); it is unpublished when the client leaves", async () => {
    const h = AgentHarness.start({
      apiUrl: api.url,
      dataDir: data.path,
      onPermission: allowOnce,
      argv: ["--acp", "--workbench", ...codeServerArgs()],
      env: {
        XDG_STATE_HOME: join(home.path, "state"),
        XDG_CACHE_HOME: join(home.path, "cache"),
        XDG_DATA_HOME: join(home.path, "data"),
        // debug: a failed check prints how long the language server took and when the list settled
        CCB_LOG_LEVEL: "debug",
        // the workbench host stops as soon as the agent, its last front end, left
        CCB_WORKBENCH_GRACE: "0",
        ...(process.env.CHROME_PATH ? { CHROME_PATH: process.env.CHROME_PATH } : {}),
        ...(process.env.CCB_CACHE_DIR ? { CCB_CACHE_DIR: process.env.CCB_CACHE_DIR } : {}),
      },
    });
    let exited = false;
    try {
      await h.initialize();
      const { sessionId } = await h.newSession(ws.path);
      const [name] = records();
      assert.ok(name, "a discovery record is published");
      const rec = JSON.parse(readFileSync(join(recordsDir, name), "utf8"));
      assert.equal(rec.frontEnd, "host", "the agent started a workbench host");
      assert.match(h.stderr, new RegExp(`started the workbench host \\(pid ${rec.pid}\\)`));
      const hostLog = join(recordsDir, name.replace(/\.json$/, ".host.log"));
      await eventually(
        "the workbench's bridge",
        async () => (/bridge connected \d+ ms after start/.test(readFileSync(hostLog, "utf8")) ? true : undefined),
        240_000,
      );
      // the first TS file this fresh workbench opens starts the TypeScript server (which loads the
      // project): that first edit waits for it, so its result already carries warm.ts's type error
      assert.equal((await h.prompt(sessionId, "warm")).stopReason, "end_turn");
      const first = toolResultText(api, 1);
      assert.match(first, /^Edited .*warm\.ts/, why(h, first));
      assert.match(
        first,
        /src\/warm\.ts:1:\d+ error: Type 'number' is not assignable to type 'string'\./,
        why(h, first),
      );
      assert.doesNotMatch(first, /may be stale/, why(h, first));
      assert.equal((await h.prompt(sessionId, "break")).stopReason, "end_turn");
      const broken = toolResultText(api, 2);
      assert.match(
        broken,
        /src\/app\.ts:1:\d+ error: Type 'string' is not assignable to type 'number'\./,
        why(h, broken),
      );
      assert.equal((await h.prompt(sessionId, "fix")).stopReason, "end_turn");
      const fixed = toolResultText(api, 3);
      const hostTail = readFileSync(hostLog, "utf8").split("\n").slice(-40).join("\n");
      assert.match(
        fixed,
        /Diagnostics: none reported for src\/app\.ts\./,
        `${why(h, fixed)}\n-- host log --\n${hostTail}`,
      );
      assert.deepEqual(h.strayStdout, []);
      await h.close();
      exited = true;
      await eventually("the host gone with its record once the last session left", async () =>
        records().length === 0 && !pidAlive(rec.pid) ? true : undefined,
      );
    } finally {
      if (!exited) await h.close();
    }
  });
});
