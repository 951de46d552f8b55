import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { silentLogger } from "../../src/core/log.ts";
import { type Chromium, launchChromium } from "../../src/platform/chromium.ts";
import { runCcb } from "../helpers/cli.ts";
import { cleanEnv } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { backupsHolding, bootWorkbench, eventually, text, type Workbench } from "../helpers/workbench.ts";

/**
 * The workbench heals itself: real code-server behind `ccb serve --http --headless-client`, a
 * person's tab (a real Chromium page, visible and focused), and the faults of ordinary life. Each
 * fault is checked to have happened (the process is gone), then tools must come back with nobody
 * clicking anything. Bounds: 120 s each (measured figures are in bench/README.md).
 */
const ws = tmpdirFixture({ prefix: "ccb-heal-ws-" });
const home = tmpdirFixture({ prefix: "ccb-heal-home-" });
writeFileSync(join(ws.path, "notes.txt"), "first line\nsecond line\n");
// A person who saves by hand (auto save off): what they typed lives only in the workbench until they save.
mkdirSync(join(ws.path, ".vscode"));
writeFileSync(join(ws.path, ".vscode/settings.json"), JSON.stringify({ "files.autoSave": "off" }));
const BOUND_MS = 120_000;
let wb: Workbench;
let person: Chromium | undefined;

const env = () =>
  cleanEnv({
    HOME: home.path,
    XDG_STATE_HOME: join(home.path, "state"),
    XDG_CACHE_HOME: join(home.path, "cache"),
    XDG_CONFIG_HOME: join(home.path, "config"),
    XDG_DATA_HOME: join(home.path, "data"),
  });

/** The runtime's process-group leader (its command line names its state folder). */
function runtimePids(): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").join(" ");
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const pgrp = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
      if (cmd.includes(`${home.path}/state/ccb/workbench/`) && pgrp === Number(name) && !cmd.startsWith("/bin/sh"))
        out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function evaluate(c: Chromium, expression: string): Promise<unknown> {
  const r = (await c.page.send("Runtime.evaluate", { expression, returnByValue: true })) as {
    result?: { value?: unknown };
  };
  return r.result?.value;
}

/** Tools answer again: editor_open through the extension host (not only a connected socket). */
async function toolsBack(): Promise<number> {
  const t0 = performance.now();
  await eventually(
    "editor_open answers",
    async () => {
      const r = await wb.call("editor_open", { path: "notes.txt" });
      return r.isError ? undefined : r;
    },
    BOUND_MS,
  );
  return Math.round(performance.now() - t0);
}

before(
  async () => {
    wb = await bootWorkbench(ws.path, home.path);
  },
  { timeout: 300_000 },
);

after(async () => {
  await person?.close().catch(() => undefined);
  await wb?.stop();
  ws.cleanup();
  home.cleanup();
});

describe("the workbench heals itself", { timeout: 900_000 }, () => {
  it("the runtime killed: it restarts, the headless client and the person's tab reload by themselves, tools come back", async (t) => {
    await wb.ok("editor_open", { path: "notes.txt" });
    const link = ((await wb.ok("vscode_open"))._meta?.["ccb/workbench"] as { url: string }).url;
    const hostsBefore = wb.countLog(/bridge: extension host \d+ connected/);
    person = await launchChromium({ url: link, log: silentLogger, width: 1280, height: 800 });
    await wb.waitLog(() => wb.countLog(/bridge: extension host \d+ connected/) > hostsBefore, BOUND_MS);
    await eventually("the person's workbench rendered", async () =>
      (await evaluate(person as Chromium, "Boolean(document.querySelector('.monaco-workbench'))")) ? true : undefined,
    );
    await evaluate(person, "window.__ccbMark = 1");
    // Unsaved text in the editor (the serving window's), backed up by the workbench before the crash.
    await wb.ok("editor_apply_edits", {
      path: "notes.txt",
      edits: [{ range: { start: { line: 3, column: 1 }, end: { line: 3, column: 1 } }, newText: "typed, not saved\n" }],
    });
    await eventually(
      "the unsaved buffer backed up",
      () => (backupsHolding(join(home.path, "state/ccb"), "typed, not saved").length > 0 ? true : undefined),
      30_000,
    );

    const [pid] = runtimePids();
    assert.ok(pid, "the runtime runs");
    const left = wb.countLog(/bridge: extension host \d+ left/);
    process.kill(-pid, "SIGKILL");
    await wb.waitLog(/exited \(SIGKILL\); restarting/, 30_000);
    assert.equal(alive(pid), false, "positive control: the runtime is gone");
    await wb.waitLog(() => wb.countLog(/bridge: extension host \d+ left/) >= left + 2, 30_000);

    // While it is down, the error names what is happening (the headless client is on: no advice to turn it on).
    const down = await wb.call("editor_state");
    if (down.isError) assert.doesNotMatch(text(down), /start ccb with --headless-client/);

    const ms = await toolsBack();
    t.diagnostic(`tools back ${ms} ms after the runtime was killed`);
    // Nothing typed is lost: the restarted workbench reopens the unsaved buffer (hot exit), still unsaved.
    await eventually(
      "the unsaved text back after the crash",
      async () => {
        const st = await wb.call("editor_state", { path: "notes.txt" });
        return /Unsaved buffer notes\.txt[^:]*:\nfirst line\nsecond line\ntyped, not saved\n/.test(text(st))
          ? true
          : undefined;
      },
      BOUND_MS,
    );
    assert.equal(readFileSync(join(ws.path, "notes.txt"), "utf8"), "first line\nsecond line\n", "not on disk");
    const [next] = runtimePids();
    assert.ok(next && next !== pid, "a new runtime runs");

    // The person's tab reloaded by itself (the mark set before is gone) and shows the workbench again.
    await eventually(
      "the person's tab reloaded",
      async () =>
        (await evaluate(
          person as Chromium,
          "window.__ccbMark === undefined && Boolean(document.querySelector('.monaco-workbench'))",
        ))
          ? true
          : undefined,
      BOUND_MS,
    );
  });

  it("the headless Chromium killed (with the person's tab closed): a new one opens and tools come back", async (t) => {
    await person?.close();
    person = undefined;
    await toolsBack();
    const pids = [...wb.serve.stderr().matchAll(/headless client: Chromium (\d+) /g)].map((m) => Number(m[1]));
    const headless = pids.at(-1) as number;
    assert.ok(headless && alive(headless), "the headless client runs");
    process.kill(-headless, "SIGKILL");
    await eventually("Chromium gone", () => (alive(headless) ? undefined : true), 30_000);
    const ms = await toolsBack();
    t.diagnostic(`tools back ${ms} ms after the headless Chromium was killed`);
    assert.match(wb.serve.stderr(), new RegExp(`headless client: Chromium ${headless} exited`));
    const now = [...wb.serve.stderr().matchAll(/headless client: Chromium (\d+) /g)].map((m) => Number(m[1])).at(-1);
    assert.ok(now && now !== headless && alive(now), "a new headless Chromium serves");
    // Reads come from a window that exists: the state names the file opened just now.
    const st = await wb.ok("editor_state");
    assert.equal((st.structuredContent as { active: { path: string } }).active.path, "notes.txt");
  });

  it("ccb workbench status says what answers and what was restarted", async () => {
    const r = await runCcb(["workbench", "status"], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /code-server running .* editor answers \(\d+ of \d+ windows/);
    assert.match(r.stdout, /headless client running; restarts: runtime 1, headless client [1-9]/);
  });
});
