import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { silentLogger } from "../../src/core/log.ts";
import { launchChromium } from "../../src/platform/chromium.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { bootWorkbench, eventually, text, type Workbench } from "../helpers/workbench.ts";

/**
 * ccb's headless client closes while idle and the next editor call reopens it (issue 35), against
 * real code-server and Chromium through `ccb serve` over MCP, with `--headless-idle 4`:
 * - idle: the browser, the extension host and its TypeScript server all end (the page leaves the
 *   workbench, so the runtime does not keep the host for its reconnection grace); the runtime stays;
 * - the next editor call answers (it waits for the reopened client), with the file's language
 *   features, and the unsaved-edit guard holds after it;
 * - controls: a running task keeps the client open past the idle time, and it closes once the task
 *   is stopped; a terminal of the workbench's own (not one of ccb's PTYs) keeps it open too;
 * - a person's tab (a real Chromium on the one-time link) serves the calls while ccb's client is
 *   closed, with nothing reopened; once the person closes it, the next call reopens ccb's client.
 */
const ws = tmpdirFixture({ prefix: "ccb-park-ws-" });
const home = tmpdirFixture({ prefix: "ccb-park-home-" });
const IDLE_S = 4;

writeFileSync(join(ws.path, "a.ts"), "export function twice(n: number): number {\n  return n * 2;\n}\n");
writeFileSync(join(ws.path, "b.ts"), 'import { twice } from "./a";\nexport const four = twice(2);\n');
writeFileSync(join(ws.path, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true }, files: ["b.ts"] }));
mkdirSync(join(ws.path, ".vscode"));
writeFileSync(
  join(ws.path, ".vscode/tasks.json"),
  JSON.stringify({
    version: "2.0.0",
    tasks: [{ label: "slow", type: "shell", command: "echo started; sleep 300" }],
  }),
);

let wb: Workbench;
/** The park's own log lines (a failure shows them, not the tail of Chromium's noise). */
const parkLog = () =>
  wb.serve
    .stderr()
    .split("\n")
    .filter((l) => /headless client|closed while idle|reopen|windows hold/.test(l))
    .join("\n");
async function waitPark(re: RegExp | ((s: string) => boolean), ms: number): Promise<void> {
  await wb.waitLog(re, ms).catch((err: Error) => {
    throw new Error(`${err.message.split("\n")[0]}\n${parkLog()}`);
  });
}
const structured = (r: { structuredContent?: Record<string, unknown> }) => r.structuredContent as Record<string, any>;

/** The command lines of the serve process's descendants (Chromium, the runtime, its extension host, tsserver). */
function descendants(root: number): string[] {
  const rows = execFileSync("ps", ["-eo", "pid=,ppid=,args="], { encoding: "utf8" })
    .split("\n")
    .map((l) => l.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/))
    .filter((m): m is RegExpMatchArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] as string }));
  const tree = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const r of rows)
      if (tree.has(r.ppid) && !tree.has(r.pid)) {
        tree.add(r.pid);
        grew = true;
      }
  }
  return rows.filter((r) => tree.has(r.pid) && r.pid !== root).map((r) => r.args);
}
const count = (re: RegExp) => descendants(wb.serve.child.pid as number).filter((a) => re.test(a)).length;
const CHROMIUM = /chrom(e|ium)/i;
const EXT_HOST = /extensionHost|--type=extensionHost/;
const TSSERVER = /tsserver/;

async function hover(): Promise<string> {
  return eventually(
    "the hover names twice's type",
    async () => {
      const r = await wb.call("language_hover", { path: "b.ts", position: { line: 1, column: 10 } });
      return !r.isError && /twice\(n: number\): number/.test(text(r)) ? text(r) : undefined;
    },
    120_000,
  );
}

before(
  async () => {
    wb = await bootWorkbench(ws.path, home.path, ["--headless-idle", String(IDLE_S)]);
  },
  { timeout: 400_000 },
);

after(async () => {
  await wb?.stop();
  ws.cleanup();
  home.cleanup();
});

describe("the headless client closes while idle and reopens on the next editor call", { timeout: 900_000 }, () => {
  it("idle: Chromium, the extension host and tsserver end; the runtime stays; the next call answers", async () => {
    await hover();
    // Control: while in use, the whole client runs.
    assert.ok(count(CHROMIUM) > 0, "Chromium runs");
    assert.ok(count(EXT_HOST) > 0, `an extension host runs: ${descendants(wb.serve.child.pid as number).join("\n")}`);
    assert.ok(count(TSSERVER) > 0, "tsserver runs");
    await waitPark(/headless client: closing Chromium \d+: no editor call for 4 s/, 60_000);
    await eventually(
      "the browser, the extension host and tsserver ended",
      () => (count(CHROMIUM) + count(EXT_HOST) + count(TSSERVER) === 0 ? true : undefined),
      30_000,
    );
    assert.ok(count(/code-server|server-main|entry\.js/) > 0, "the runtime still runs");

    const t0 = Date.now();
    const h = await wb.call("language_hover", { path: "b.ts", position: { line: 1, column: 10 } });
    assert.ok(!h.isError, `the first call after idle answers: ${text(h)}`);
    await waitPark(/headless client reopened: the editor serves again \d+ ms after the call/, 5_000);
    // The reopened window's language features come back (the call above may run before the project loaded).
    assert.match(await hover(), /twice/);
    console.error(`first editor call after idle: ${Date.now() - t0} ms`);
    assert.ok(count(CHROMIUM) > 0, "Chromium runs again");
  });

  it("control: a running task keeps it open; once stopped, it closes", async () => {
    await eventually("the client serves", async () => ((await wb.call("editor_state")).isError ? undefined : true));
    const run = await wb.ok("task_run", { name: "slow", timeoutMs: 2_000 });
    assert.match(text(run), /^TIMEOUT: the task "slow" is still running/);
    const execution = structured(run).execution as string;
    const closedBefore = wb.countLog(/headless client: closing Chromium/);
    await waitPark(/headless client stays open while idle: 1 task running/, 60_000);
    await new Promise((r) => setTimeout(r, IDLE_S * 1000));
    assert.equal(wb.countLog(/headless client: closing Chromium/), closedBefore, "not closed while the task runs");
    assert.ok(count(CHROMIUM) > 0);
    await wb.ok("task_stop", { execution });
    await waitPark((s) => s.split("headless client: closing Chromium").length - 1 > closedBefore, 60_000);
  });

  it("control: a terminal of the workbench's own keeps it open", async () => {
    // (An unsaved document keeps it open too, but the web workbench saves after 1 s by default.)
    const term = await wb.call("vscode_execute_command", { command: "workbench.action.terminal.new" });
    assert.ok(!term.isError, text(term));
    await waitPark(/headless client stays open while idle: 1 terminal of the workbench's own/, 60_000);
    const closed = wb.countLog(/headless client: closing Chromium/);
    await new Promise((r) => setTimeout(r, IDLE_S * 1000));
    assert.equal(wb.countLog(/headless client: closing Chromium/), closed, "not closed while its terminal runs");
  });

  it("a person's tab serves while ccb's client is closed; after the person leaves, a call reopens it", async () => {
    // ccb's client closes 4 s after the terminal is gone: before or after the person's tab serves
    // (a tab's start takes longer than that under load), so the close is counted from here
    const closed = wb.countLog(/headless client: closing Chromium/);
    const term = await wb.call("vscode_execute_command", { command: "workbench.action.terminal.killAll" });
    assert.ok(!term.isError, text(term));
    const link = /open (http:\/\/127\.0\.0\.1:\d+\/app\?ccb_ott=[A-Za-z0-9_-]+)/.exec(wb.serve.stderr())?.[1];
    assert.ok(link, "ccb printed a one-time /app link");
    const served = wb.countLog(/bridge: extension host \d+ serves/);
    const person = await launchChromium({ url: link, log: silentLogger, width: 1280, height: 800 });
    try {
      await waitPark(() => wb.countLog(/bridge: extension host \d+ serves/) > served, 300_000);
      await waitPark(() => wb.countLog(/headless client: closing Chromium/) > closed, 120_000);
      const reopened = wb.countLog(/headless client: reopening/);
      await hover(); // answered by the person's window
      await new Promise((r) => setTimeout(r, 1_000));
      assert.equal(
        wb.countLog(/headless client: reopening/),
        reopened,
        "nothing reopened while the person's tab serves",
      );
    } finally {
      await person.close();
    }
    const reopened = wb.countLog(/headless client: reopening/);
    await hover(); // the person's window is gone: the call (or its retry) reopens ccb's client
    assert.ok(wb.countLog(/headless client: reopening/) > reopened, parkLog());
  });
});
