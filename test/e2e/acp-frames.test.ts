import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as acp from "@agentclientprotocol/sdk";
import { AgentHarness, tempDataDir } from "../helpers/acp-harness.ts";
import { lastUserText } from "../helpers/acp-scripts.ts";
import { type FakeAnthropic, isSideRequest, startFakeAnthropic } from "../helpers/fake-anthropic.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

const MiB = 1024 * 1024;

const frameWhere = (h: AgentHarness, pred: (f: any) => boolean): Promise<any> => h.waitForFrame(pred);

function write(h: AgentHarness, text: string): Promise<void> {
  return new Promise((resolve, reject) => h.child.stdin!.write(text, (err) => (err ? reject(err) : resolve())));
}

describe("ccb acp: frame limits and invalid requests (SDK client and raw frames)", () => {
  let api: FakeAnthropic;
  const data = tempDataDir();
  const project = tmpdirFixture();
  before(async () => {
    api = await startFakeAnthropic({
      script: ({ body }) => (isSideRequest(body) ? { text: "t" } : { text: `got ${lastUserText(body).length} chars` }),
    });
  });
  after(async () => {
    await api.close();
    data.cleanup();
    project.cleanup();
  });

  test("a prompt over the 64 MiB cap is answered with -32600 for that request, and the agent lives on; 40 MB goes through", async () => {
    const h = AgentHarness.start({ apiUrl: api.url, dataDir: data.path });
    try {
      await h.initialize();
      const { sessionId } = await h.newSession(project.path);
      const huge = "x".repeat(65 * MiB);
      await assert.rejects(
        h.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: huge }] }),
        (e: acp.RequestError) =>
          e.code === -32600 &&
          /over the 64 MiB limit/.test(e.message) &&
          (e.data as { maxMessageBytes: number }).maxMessageBytes === 64 * MiB,
      );
      assert.equal(api.requests.length, 0, "the oversized prompt never reached the model");
      // the same connection goes on: a big prompt under the cap (an editor embedding files) is answered
      const big = "y".repeat(40_000_000);
      const r = await h.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: big }],
      });
      assert.equal(r.stopReason, "end_turn");
      assert.match(h.textOf(sessionId), /got 40000000 chars/);
      assert.equal(h.child.exitCode, null);
      assert.match(h.stderr, /dropped an incoming message of \d+ bytes/);
      assert.deepEqual(h.strayStdout, []);
    } finally {
      await h.close();
    }
  });

  test("raw frames: -32600 carries the id when readable (missing jsonrpc; oversized with the id first or last); unreadable -> null", async () => {
    // a 1 MiB cap (CCB_ACP_MAX_FRAME_MB) keeps these oversized frames small; the 64 MiB default is tested above
    const h = AgentHarness.start({ apiUrl: api.url, dataDir: data.path, env: { CCB_ACP_MAX_FRAME_MB: "1" } });
    try {
      await h.initialize();
      await write(h, `${JSON.stringify({ id: 77, method: "session/list", params: {} })}\n`);
      const missing = await frameWhere(h, (f) => f.id === 77);
      assert.equal(missing.error.code, -32600);
      assert.match(missing.error.message, /jsonrpc/);
      await write(h, `${JSON.stringify({ jsonrpc: "1.0", id: "old-client", method: "session/list", params: {} })}\n`);
      assert.equal((await frameWhere(h, (f) => f.id === "old-client")).error.code, -32600);

      const pad = "z".repeat(MiB + 10);
      await write(
        h,
        `{"jsonrpc":"2.0","id":"head-id","method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"${pad}"}]}}\n`,
      );
      const headErr = (await frameWhere(h, (f) => f.id === "head-id")).error;
      assert.equal(headErr.code, -32600);
      assert.match(headErr.message, /over the 1 MiB limit/, "the cap follows CCB_ACP_MAX_FRAME_MB");
      await write(
        h,
        `{"method":"session/prompt","params":{"prompt":[{"type":"text","text":"${pad}"}]},"jsonrpc":"2.0","id":4242}\n`,
      );
      assert.equal((await frameWhere(h, (f) => f.id === 4242)).error.code, -32600);
      // an id nested inside params is not the request's id: answered with null
      const seenBefore = h.frames.length;
      await write(h, `{"params":{"id":999,"text":"${pad}"}}\n`);
      await h.waitForFrame((f) => f.id === null && h.frames.indexOf(f) >= seenBefore);
      assert.ok(!h.frames.some((f) => f.id === 999));

      // positive control: a well-formed request on the same stream is served normally
      await write(h, `${JSON.stringify({ jsonrpc: "2.0", id: 78, method: "session/list", params: {} })}\n`);
      const ok = await frameWhere(h, (f) => f.id === 78);
      assert.ok(Array.isArray(ok.result.sessions), JSON.stringify(ok));
      assert.equal(h.child.exitCode, null);
    } finally {
      await h.close();
    }
  });
});
