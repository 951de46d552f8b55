import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Acpx, childPids } from "../helpers/acp-acpx.ts";
import { lastToolResults, lastUserText } from "../helpers/acp-scripts.ts";
import { type FakeAnthropic, isSideRequest, type Reply, startFakeAnthropic } from "../helpers/fake-anthropic.ts";

const KEY = "sk-ant-acpx-test-0123456789";
const mainRequests = (api: FakeAnthropic) => api.requests.filter((r) => !isSideRequest(r.body));

/** acpx (a real headless ACP client, on Node 24) driving `ccb acp` against a scripted Messages API. */
describe("ccb acp driven by acpx", () => {
  let api: FakeAnthropic;
  let acpx: Acpx;
  before(async () => {
    api = await startFakeAnthropic({
      script: ({ body }): Reply => {
        if (isSideRequest(body)) return { text: "Title" };
        const p = lastUserText(body);
        if (p === "loop") return { toolUses: [{ name: "glob", input: { pattern: "*.none" } }] };
        const results = lastToolResults(body);
        if (results.length > 0) return { text: `tool said: ${JSON.stringify(results.map((r) => r.content))}` };
        if (p === "write the file")
          return { toolUses: [{ name: "write", input: { path: "out.txt", content: "written by ccb\n" } }] };
        if (p === "hang") return { text: "thinking about it", hangAfterFirstChunk: true };
        return { text: `echo: ${p}` };
      },
    });
    acpx = new Acpx({ ANTHROPIC_BASE_URL: api.url, ANTHROPIC_API_KEY: KEY });
  });
  after(async () => {
    console.log(`acpx transcript:\n  ${acpx.transcript.join("\n  ")}`);
    await acpx.cleanup();
    await api.close();
  });

  test("exec: a prompt streams the answer and ends with end_turn, exit 0", async () => {
    const r = await acpx.run(["--format", "json", "--approve-all", "ccb", "exec", "hello there"]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stopReasons, ["end_turn"]);
    const text = r.frames
      .filter((f) => f.params?.update?.sessionUpdate === "agent_message_chunk")
      .map((f) => f.params.update.content.text)
      .join("");
    assert.equal(text, "echo: hello there");
    assert.equal(lastUserText(api.requests.at(-1)!.body), "hello there");
  });

  test("exec: a write with --approve-all lands on disk; with --deny-all it does not", async () => {
    const file = join(acpx.cwd, "out.txt");
    const denied = await acpx.run(["--format", "json", "--deny-all", "ccb", "exec", "write the file"]);
    assert.equal(existsSync(file), false, "a denied write never happens");
    assert.match(JSON.stringify(lastToolResults(api.requests.at(-1)!.body)), /rejected/);
    assert.deepEqual(denied.stopReasons, ["end_turn"]);
    assert.equal(denied.code, 5, "acpx's exit code for a turn in which it denied a permission");
    const approved = await acpx.run(["--format", "json", "--approve-all", "ccb", "exec", "write the file"]);
    assert.equal(approved.code, 0, approved.stderr);
    assert.deepEqual(approved.stopReasons, ["end_turn"]);
    assert.equal(readFileSync(file, "utf8"), "written by ccb\n");
    const call = approved.frames.find((f) => f.params?.update?.sessionUpdate === "tool_call")?.params.update;
    assert.equal(call.kind, "edit");
    assert.deepEqual(call.locations, [{ path: file }]);
  });

  test("no API key: session/new fails with auth required and acpx exits non-zero", async () => {
    const r = await acpx.run(["--format", "json", "ccb", "exec", "hello"], { ANTHROPIC_API_KEY: undefined });
    assert.notEqual(r.code, 0);
    assert.deepEqual(r.stopReasons, []);
    const err = r.frames.find((f) => f.error)?.error;
    assert.equal(err?.code, -32000, r.stdout + r.stderr);
    assert.match(err.message, /ANTHROPIC_API_KEY/);
    // positive control: the same command with the key succeeds
    assert.equal((await acpx.run(["--format", "quiet", "ccb", "exec", "hello"])).code, 0);
  });

  test("--max-turns 1 stops after one model request with max_turn_requests", async () => {
    const before = mainRequests(api).length;
    const r = await acpx.run(["--format", "json", "--approve-all", "--max-turns", "1", "ccb", "exec", "loop"]);
    assert.deepEqual(r.stopReasons, ["max_turn_requests"]);
    assert.equal(mainRequests(api).length - before, 1);
    assert.equal(r.code, 0, r.stderr);
  });

  test("--system-prompt replaces and --append-system-prompt extends the system prompt", async () => {
    const r = await acpx.run([
      "--format",
      "quiet",
      "--system-prompt",
      "You are a terse pirate.",
      "ccb",
      "exec",
      "ahoy",
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(api.requests.at(-1)!.body.system, "You are a terse pirate.");
    const a = await acpx.run([
      "--format",
      "quiet",
      "--append-system-prompt",
      "Always end with OVER.",
      "ccb",
      "exec",
      "ahoy",
    ]);
    assert.equal(a.code, 0, a.stderr);
    const sys = api.requests.at(-1)!.body.system as string;
    assert.match(sys, /^You are ccb/);
    assert.match(sys, /Always end with OVER\.$/);
  });

  test("persistent session: sessions new/list, set-mode, kill -9 of the agent then resume, cancel", async () => {
    const created = await acpx.run(["ccb", "sessions", "new"]);
    assert.equal(created.code, 0, created.stderr);
    const sessionId = created.stdout.trim().split("\n").at(-1)!;
    assert.match(sessionId, /^ccb-[0-9a-f-]{36}$/);
    const first = await acpx.run(["--format", "json", "--approve-all", "ccb", "remember the word ostrich"]);
    assert.deepEqual(first.stopReasons, ["end_turn"]);
    const list = await acpx.run(["ccb", "sessions", "list"]);
    assert.equal(list.code, 0);
    assert.match(list.stdout, new RegExp(`^${sessionId}\\tremember the word ostrich\\t${acpx.cwd}\\t`, "m"));

    const mode = await acpx.run(["ccb", "set-mode", "acceptEdits"]);
    assert.equal(mode.code, 0, mode.stderr);
    const stored = readFileSync(join(acpx.dataDir, "sessions", `${sessionId}.jsonl`), "utf8");
    assert.match(stored, /\{"t":"mode","modeId":"acceptEdits"\}/);
    assert.notEqual((await acpx.run(["ccb", "set-mode", "no-such-mode"])).code, 0, "an unknown mode is an error");

    // kill -9 the agent under the queue owner; the next prompt resumes the stored session
    const owner = await acpx.ownerPid();
    const agents = childPids(owner);
    assert.equal(agents.length, 1, `one agent under the queue owner ${owner}`);
    process.kill(agents[0]!, "SIGKILL");
    const again = await acpx.run(["--format", "json", "--approve-all", "ccb", "what was the word?"]);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(again.stopReasons, ["end_turn"]);
    assert.ok(
      again.frames.some((f) => f.method === "session/resume" || f.method === "session/load"),
      "acpx reattached to the stored session",
    );
    assert.match(
      JSON.stringify(api.requests.at(-1)!.body.messages),
      /remember the word ostrich/,
      "the model saw the history from before the kill",
    );

    // cancel: a prompt that hangs mid-stream ends as cancelled when `acpx cancel` is run
    const streamsBefore = api.requests.filter((r) => r.body.stream).length;
    const hangArgs = ["--format", "json", "--approve-all", "ccb", "hang"];
    const hanging = Acpx.collect(acpx.spawn(hangArgs)).then((r) => acpx.note(hangArgs, r));
    await api.waitForFirstByte(streamsBefore + 1);
    const cancel = await acpx.run(["ccb", "cancel"]);
    assert.equal(cancel.code, 0, cancel.stderr);
    const hung = await hanging;
    assert.deepEqual(hung.stopReasons, ["cancelled"]);
    assert.equal(lastUserText(api.requests.at(-1)!.body), "hang");
  });
});
