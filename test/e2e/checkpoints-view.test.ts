import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { createLogging } from "../../cli/logging.ts";
import { diffTitle } from "../../src/protocols/ide/diffs.ts";
import { keepArtifacts } from "../helpers/artifacts.ts";
import { type ChangesView, changesView } from "../helpers/changes-view.ts";
import { ccbCommand } from "../helpers/cli.ts";
import { IdeClient, textsOf } from "../helpers/ide-client.ts";
import { startWorkbenchIde, type WorkbenchIde } from "../helpers/ide-workbench.ts";
import { openPersonWindow, type PersonPage, type PersonWindow } from "../helpers/person-page.ts";
import { cleanEnv } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

keepArtifacts(import.meta.url);

/*
 * The person's "Agent changes" view, with real peers: ccb's IDE server over a real workbench
 * (code-server + the bridge extension) shown in a real Chromium, a claude-like IDE client (the
 * protocol's own handshake, clientInfo "claude-code") whose openDiff the person accepts in the
 * workbench, and an MCP host's agent in another ccb process (`ccb serve --stdio`, clientInfo
 * "alpha-host") writing to the same workspace. The person reads the view, opens a change set's diff,
 * undoes one (first refused, naming the lines they changed since; nothing lost), and the undo is
 * itself listed; a second tab on the same workbench lists the same changes.
 */

const LINES = (n: number, mark: Record<number, string> = {}) =>
  `${Array.from({ length: n }, (_, i) => mark[i] ?? `line ${i}`).join("\n")}\n`;

describe("the person's view of every agent's changes", () => {
  const tmp = tmpdirFixture({ prefix: "ccb-ckpt-view-" });
  const ws = join(tmp.path, "ws");
  const state = join(tmp.path, "state");
  // The checkpoint store of this process's core and of the MCP host's ccb process: one, under this state home.
  process.env.XDG_STATE_HOME = state;
  const main = join(ws, "main.ts");
  const notes = join(ws, "notes.txt");
  const { log } = createLogging({ level: process.env.CCB_TEST_LOG ?? "warn" });
  let w: WorkbenchIde;
  let person: PersonPage;
  let view: ChangesView;
  let alpha: Client;
  let second: PersonWindow | undefined;

  before(async () => {
    mkdirSync(ws, { recursive: true });
    writeFileSync(main, "export const x = 1;\n");
    writeFileSync(notes, LINES(12));
    w = await startWorkbenchIde({ workspace: ws, stateDir: state, lockDir: join(tmp.path, "ide"), log });
    person = w.window.person;
    view = changesView(person, w.window.cdp);
    const { command, args } = ccbCommand(["serve", "--no-workbench", "--stdio", "--workspace", ws]);
    alpha = new Client({ name: "alpha-host", version: "1.0.0" });
    await alpha.connect(
      new StdioClientTransport({ command, args, env: cleanEnv({ XDG_STATE_HOME: state }), stderr: "pipe" }),
    );
  });

  after(async () => {
    await second?.chromium.close();
    await alpha?.close();
    await w?.close();
    tmp.cleanup();
  });

  const ok = async (name: string, args: Record<string, unknown>) => {
    const r = (await alpha.callTool({ name, arguments: args })) as {
      isError?: boolean;
      content: { text: string }[];
      structuredContent?: any;
    };
    assert.notEqual(r.isError, true, `${name}: ${r.content.map((c) => c.text).join("\n")}`);
    return r;
  };

  it("a claude-like IDE client's change (its openDiff, accepted by the person) is listed as that client's", async () => {
    const c = await IdeClient.connect(w.ide.port, w.ide.authToken);
    try {
      await c.handshake();
      const proposed = "export const x = 2;\n";
      const answer = c.call("openDiff", {
        old_file_path: main,
        new_file_path: main,
        new_file_contents: proposed,
        tab_name: diffTitle(main),
      });
      let answered = false;
      void answer.then(() => (answered = true));
      await person.clickTitleAction("Accept proposed changes", () => answered);
      assert.equal(textsOf(await answer)[0], "FILE_SAVED");
      // As the Claude Code CLI does: the client writes what the person accepted.
      writeFileSync(main, proposed);
    } finally {
      await c.close();
    }
    // Listed from the other ccb process (the MCP host's): one store for the workspace.
    const list = (await ok("checkpoint_list", { path: "main.ts" })).structuredContent.checkpoints as any[];
    const who = list.filter((x) => x.files.includes("main.ts")).map((x) => `${x.frontEnd}:${x.client}`);
    assert.deepEqual(who, ["ide:claude-code"]);
  });

  it("an MCP host's agent in another ccb process changes files", async () => {
    await ok("fs_write", { path: "notes.txt", content: LINES(12, { 3: "line 3 by alpha" }) });
    await ok("fs_write", { path: "alpha.txt", content: "from alpha\n" });
  });

  it("the view lists who is attached and each agent's change sets, in the person's browser", async () => {
    await person.palette("Show agent changes");
    const rows = await view.untilRows(
      "both agents' change sets in the view",
      (r) =>
        r.some((l) => /^change set \w+ by alpha-host \(mcp\): fs_write .*files notes\.txt$/.test(l)) &&
        r.some((l) => /^change set \w+ by alpha-host \(mcp\): fs_write .*files alpha\.txt$/.test(l)) &&
        r.some((l) => /^change set \w+ by claude-code \(ide\): openDiff.*files main\.ts$/.test(l)),
    );
    assert.ok(rows.includes("agent alpha-host (mcp), 2 change sets"), JSON.stringify(rows));
    assert.ok(
      rows.some((l) => /^attached: ccb \(pid \d+\), runs this workbench$/.test(l)),
      JSON.stringify(rows),
    );
    assert.ok(
      rows.some((l) => /^attached: this tab, serves the agents' editor calls/.test(l)),
      JSON.stringify(rows),
    );
  });

  it("a change set's diff opens in VS Code's diff editor, before vs after", async () => {
    await view.clickRow(/^change set \w+ by alpha-host \(mcp\): fs_write .*files notes\.txt$/);
    await view.untilTab("the change set's diff tab", /notes\.txt: fs_write by alpha-host \(mcp\)/);
    const sides = await person.until<string[]>(
      "both sides of the diff",
      `[...document.querySelectorAll(".monaco-diff-editor .view-line")].map((l) => l.textContent.replace(/\\u00a0/g, " "))`,
      (v) => v.includes("line 3") && v.includes("line 3 by alpha"),
    );
    assert.ok(sides.length > 0);
  });

  it("undo is refused when the person changed the same lines since, naming them; nothing is lost", async () => {
    const mine = LINES(12, { 3: "line 3 by alpha, and the person" });
    writeFileSync(notes, mine);
    await view.rowAction(/^change set \w+ by alpha-host \(mcp\): fs_write .*files notes\.txt$/, "Undo this change set");
    const asked = await view.answerDialog("Undo");
    assert.match(asked, /Undo what alpha-host \(mcp\) changed with fs_write/);
    const shown = await view.untilNotification(
      "the conflict named",
      /notes\.txt was changed since on the same lines \(lines 4-4\)/,
    );
    assert.match(shown, /Nothing was undone/);
    assert.equal(readFileSync(notes, "utf8"), mine, "the person's edit is kept");
    assert.equal(readFileSync(join(ws, "alpha.txt"), "utf8"), "from alpha\n");
  });

  it("once the lines are free, the person's undo takes back exactly that change set, and is itself listed", async () => {
    writeFileSync(notes, LINES(12, { 3: "line 3 by alpha", 10: "line 10 by the person" }));
    await view.rowAction(/^change set \w+ by alpha-host \(mcp\): fs_write .*files notes\.txt$/, "Undo this change set");
    await view.answerDialog("Undo");
    await view.untilNotification("the undo done", /took back notes\.txt/);
    assert.equal(
      readFileSync(notes, "utf8"),
      LINES(12, { 10: "line 10 by the person" }),
      "alpha's line is back, the person's later line kept",
    );
    assert.equal(readFileSync(join(ws, "alpha.txt"), "utf8"), "from alpha\n", "alpha's other change set is kept");
    assert.equal(readFileSync(main, "utf8"), "export const x = 2;\n", "claude-code's change is kept");
    await view.untilRows("the undo listed as the person's", (r) =>
      r.some((l) => /^change set \w+ by workbench: checkpoint_restore \(undo\) .*files notes\.txt$/.test(l)),
    );
    // Control: the listing the agents see agrees, and names the undo's checkpoint for undoing it.
    const list = (await ok("checkpoint_list", { agent: "workbench" })).structuredContent.checkpoints as any[];
    assert.deepEqual(
      list.map((x) => [x.frontEnd, x.phase, x.files]),
      [["person", "restore", ["notes.txt"]]],
    );
  });

  it("a second person's tab on the same workbench lists the same changes", async () => {
    const link = await w.wb.link();
    assert.ok(link);
    second = await openPersonWindow(link, log);
    const other = changesView(second.person, second.cdp);
    // This person opens the view with a click on its icon in the activity bar.
    await other.open();
    const rows = await other.untilRows("the changes in the second tab", (r) =>
      r.some((l) => /^change set \w+ by workbench: checkpoint_restore \(undo\)/.test(l)),
    );
    assert.ok(
      rows.some((l) => /^change set \w+ by claude-code \(ide\): openDiff.*files main\.ts$/.test(l)),
      JSON.stringify(rows),
    );
    assert.ok(
      rows.some((l) => /^attached: workbench tab \d+/.test(l)),
      "the first tab is named",
    );
  });
});
