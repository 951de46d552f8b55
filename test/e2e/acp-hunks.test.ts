import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type * as acp from "@agentclientprotocol/sdk";
import { silentLogger } from "../../src/core/log.ts";
import { AgentHarness, tempDataDir } from "../helpers/acp-harness.ts";
import { lastToolResults, toolThenText } from "../helpers/acp-scripts.ts";
import { artifactSource, keepArtifacts, keptBefore } from "../helpers/artifacts.ts";
import { bounded } from "../helpers/bounded.ts";
import { type FakeAnthropic, startFakeAnthropic } from "../helpers/fake-anthropic.ts";
import { openPersonWindow, type PersonPage, type PersonWindow } from "../helpers/person-page.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { bootWorkbench, eventually, type Workbench } from "../helpers/workbench.ts";

/**
 * Review per hunk from `ccb acp`: with the session attached to the shared workbench (real
 * code-server, bridge extension, headless Chromium, run by `ccb serve`), a write that needs
 * permission opens its diff in the workbench beside the ACP client's permission request. The person
 * (a real Chromium on the workbench's link, whose window serves) decides there hunk by hunk, with
 * clicks on the "Accept hunk" / "Reject hunk" code lenses; the client's request is withdrawn, and
 * the file and the model get exactly the hunk kept. Controls: the client answering first writes the
 * whole proposal; every hunk rejected writes nothing.
 */

const LINES = (a: number, e: number) =>
  `export const a = ${a};\nexport const b = 2;\nexport const c = 3;\nexport const d = 4;\nexport const e = ${e};\n`;

/** A client whose person never answers in the client: it waits until the agent withdraws the request. */
const waitForWithdrawal = (withdrawn: string[]) => (p: acp.RequestPermissionRequest, signal: AbortSignal) =>
  new Promise<acp.RequestPermissionResponse>((resolve) => {
    signal.addEventListener("abort", () => {
      withdrawn.push(p.toolCall.toolCallId);
      resolve({ outcome: { outcome: "cancelled" } });
    });
  });

keepArtifacts(import.meta.url);

describe("ccb acp: a permission's diff reviewed per hunk in the workbench", () => {
  const ws = tmpdirFixture({ prefix: "ccb-acp-hunks-ws-" });
  const home = tmpdirFixture({ prefix: "ccb-acp-hunks-home-" });
  const data = tempDataDir();
  const file = () => join(ws.path, "src/app.ts");
  let wb: Workbench;
  let api: FakeAnthropic;
  const agents: AgentHarness[] = [];
  artifactSource("acp-agents", () => Object.fromEntries(agents.map((h, i) => [`agent-${i}.stderr.log`, h.stderr])));

  let win: PersonWindow | undefined;
  let page: PersonPage;

  /** The person clicks a hunk's lens once the diff is there, and the hunk is decided (its lenses gone). */
  const person = async (how: "Accept" | "Reject", hunk: number) => {
    const lens = new RegExp(`^(Accept|Reject) hunk ${hunk + 1} of`);
    await page.clickLens(new RegExp(`^${how} hunk ${hunk + 1} of`));
    const shown = await page.untilLenses(`hunk ${hunk} decided`, (v) => !v.some((l) => lens.test(l.tooltip)), 30_000);
    // decided as clicked: a rejected hunk shows no "Accepted" label (a soak under load once kept a rejected hunk)
    if (how === "Reject")
      assert.ok(
        !shown.some((l) => l.tooltip.startsWith(`Accepted hunk ${hunk + 1} of`)),
        `hunk ${hunk} shows "Accepted" after the person's Reject click`,
      );
  };

  const start = async (onPermission: (p: acp.RequestPermissionRequest, s: AbortSignal) => any) => {
    const h = AgentHarness.start({
      apiUrl: api.url,
      dataDir: data.path,
      onPermission,
      env: { XDG_STATE_HOME: join(home.path, "state"), CCB_LOG_LEVEL: "info" },
    });
    agents.push(h);
    await h.initialize();
    const { sessionId } = await h.newSession(ws.path);
    await eventually("the attached session's bridge", async () =>
      /share: attached to the workbench/.test(h.stderr) ? true : undefined,
    );
    return { h, sessionId };
  };

  before(
    keptBefore(async () => {
      mkdirSync(join(ws.path, "src"), { recursive: true });
      api = await startFakeAnthropic({
        script: toolThenText(
          (prompt) => {
            const m = /^write a=(\d+) e=(\d+)$/.exec(prompt);
            return m
              ? [{ name: "write", input: { path: "src/app.ts", content: LINES(Number(m[1]), Number(m[2])) } }]
              : undefined;
          },
          () => "Done.",
        ),
      });
      wb = await bootWorkbench(ws.path, home.path);
      // the person's tab, opened from the workbench's link; their focused window takes the serving role
      const link = ((await wb.ok("vscode_open"))._meta?.["ccb/workbench"] as { url: string }).url;
      const serving = wb.countLog(/bridge: extension host \d+ serves/);
      win = await openPersonWindow(link, silentLogger);
      page = win.person;
      await wb.waitLog(() => wb.countLog(/bridge: extension host \d+ serves/) > serving);
    }),
  );
  after(async () => {
    for (const h of agents) await h.close();
    await win?.chromium.close();
    await wb?.stop();
    await api?.close();
    data.cleanup();
    ws.cleanup();
    home.cleanup();
  });

  const lastResult = (): string => {
    const r = [...api.requests].reverse().find((q) => lastToolResults(q.body).length > 0);
    const c = r ? lastToolResults(r.body)[0]?.content : undefined;
    return typeof c === "string" ? c : JSON.stringify(c);
  };

  test("hunk 0 accepted, hunk 1 rejected in the workbench: the file and the model hold only hunk 0", async () => {
    writeFileSync(file(), LINES(1, 5));
    const withdrawn: string[] = [];
    const { h, sessionId } = await start(waitForWithdrawal(withdrawn));
    const done = h.prompt(sessionId, "write a=10 e=50");
    const asked = await bounded(h.waitForPermission(), 120_000, "the permission request");
    assert.ok(
      asked.toolCall.content?.some((c) => c.type === "diff"),
      "the request shows the diff",
    );
    await person("Accept", 0);
    assert.equal(readFileSync(file(), "utf8"), LINES(1, 5), "nothing written while hunk 1 is undecided");
    await person("Reject", 1);
    assert.equal((await bounded(done, 120_000, "the prompt")).stopReason, "end_turn");
    assert.equal(readFileSync(file(), "utf8"), LINES(10, 5));
    assert.deepEqual(withdrawn, [asked.toolCall.toolCallId], "the client's request was withdrawn");
    const result = lastResult();
    assert.match(result, /kept only part of it/);
    assert.ok(result.includes(LINES(10, 5)), `the model reads the applied text: ${result}`);
    assert.doesNotMatch(result, /e = 50/);
    // the client's last update of the call shows what was applied
    const updates = h.updatesOf(sessionId, "tool_call_update") as any[];
    const last = updates.filter((u) => u.toolCallId === asked.toolCall.toolCallId).at(-1);
    assert.equal(last.status, "completed");
    assert.deepEqual(
      last.content.filter((c: any) => c.type === "diff").map((c: any) => c.newText),
      [LINES(10, 5)],
    );
  });

  test("every hunk rejected in the workbench: the call fails as rejected and nothing is written", async () => {
    writeFileSync(file(), LINES(1, 5));
    const withdrawn: string[] = [];
    const { h, sessionId } = await start(waitForWithdrawal(withdrawn));
    const done = h.prompt(sessionId, "write a=11 e=51");
    await bounded(h.waitForPermission(), 120_000, "the permission request");
    await person("Reject", 1);
    await person("Reject", 0);
    assert.equal((await bounded(done, 120_000, "the prompt")).stopReason, "end_turn");
    assert.equal(readFileSync(file(), "utf8"), LINES(1, 5));
    assert.match(lastResult(), /rejected this change in the editor/);
    assert.equal(withdrawn.length, 1);
  });

  test("control: the client answers first (allow once): the whole proposal is written, the workbench's diff closes", async () => {
    writeFileSync(file(), LINES(1, 5));
    const { h, sessionId } = await start((p) => {
      const o = p.options.find((x) => x.kind === "allow_once");
      return { outcome: { outcome: "selected", optionId: o!.optionId } };
    });
    assert.equal((await h.prompt(sessionId, "write a=12 e=52")).stopReason, "end_turn");
    assert.equal(readFileSync(file(), "utf8"), LINES(12, 52));
    assert.match(lastResult(), /^Wrote /);
    // no review is left open: the person's window shows no diff
    await page.until<number>(
      "the workbench's diff closed",
      // shown: a closed editor's widget may stay in the DOM, hidden, for reuse
      `[...document.querySelectorAll(".monaco-diff-editor")].filter((e) => e.getBoundingClientRect().width > 0).length`,
      (v) => v === 0,
    );
  });
});
