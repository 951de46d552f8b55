import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { AgentHarness, tempDataDir } from "../helpers/acp-harness.ts";
import { lastToolResults, toolThenText } from "../helpers/acp-scripts.ts";
import { type FakeAnthropic, startFakeAnthropic } from "../helpers/fake-anthropic.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

// Runs against the Node build and (in the full `npm test`) the compiled binary (CCB_TEST_BIN=dist/ccb).
let api: FakeAnthropic;
const data = tempDataDir();
const project = tmpdirFixture({ git: true });
before(async () => {
  api = await startFakeAnthropic({
    script: toolThenText(
      (p) => (p === "run it" ? [{ name: "bash", input: { command: "echo smoke-$((40+2))" } }] : undefined),
      (results) => `the command said ${JSON.stringify(results[0]?.content)}`,
    ),
  });
});
after(async () => {
  await api.close();
  data.cleanup();
  project.cleanup();
});

test("acp smoke: initialize, session/new, streamed reply, a shell command, clean stdout", async () => {
  const h = AgentHarness.start({
    apiUrl: api.url,
    dataDir: data.path,
    onPermission: () => ({ outcome: { outcome: "selected", optionId: "allow_once" } }),
  });
  try {
    const init = await h.initialize();
    assert.equal(init.protocolVersion, 1);
    const { sessionId } = await h.newSession(project.path);
    assert.equal((await h.prompt(sessionId, "hello")).stopReason, "end_turn");
    assert.equal(h.textOf(sessionId), "No tools needed.");
    assert.equal((await h.prompt(sessionId, "run it")).stopReason, "end_turn");
    assert.match(JSON.stringify(lastToolResults(api.requests.at(-1)!.body)[0]?.content), /smoke-42/);
    assert.deepEqual(h.strayStdout, []);
  } finally {
    await h.close();
  }
});
