import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { createLogging } from "../../cli/logging.ts";
import { isCcbError } from "../../src/core/errors.ts";
import { diffTitle } from "../../src/protocols/ide/diffs.ts";
import { workspaceTools } from "../../src/tools/catalog.ts";
import { runTool } from "../../src/tools/kernel.ts";
import { keepArtifacts } from "../helpers/artifacts.ts";
import { type ChangesView, changesView, DIALOG_TEXT } from "../helpers/changes-view.ts";
import { ccbCommand, runCcb } from "../helpers/cli.ts";
import { IdeClient, textsOf } from "../helpers/ide-client.ts";
import { startWorkbenchIde, type WorkbenchIde } from "../helpers/ide-workbench.ts";
import { codeServerArgs } from "../helpers/peers.ts";
import { openPersonWindow, type PersonPage, type PersonWindow } from "../helpers/person-page.ts";
import { cleanEnv } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { envOf, eventually, hostsStopped } from "../helpers/workbench.ts";

keepArtifacts(import.meta.url);

/*
 * The person's "Agent changes" view, with real peers: ccb's IDE server over a real workbench
 * (code-server + the bridge extension) shown in a real Chromium, a claude-like IDE client (the
 * protocol's own handshake, clientInfo "claude-code") whose openDiff the person accepts in the
 * workbench, and an MCP host's agent in another ccb process (`ccb serve --stdio`, clientInfo
 * "alpha-host") writing to the same workspace. The person reads the view, opens a change set's diff,
 * undoes one (first refused, naming the lines they changed since; nothing lost), and the undo is
 * itself listed; restores the workspace to a change set and undoes that restore, all with clicks
 * and the modal dialog; a second tab on the same workbench lists the same changes. The view is
 * pushed to (no poll): a change made while it is shown appears in every tab. Attack: the model's
 * commands (its vscode_execute_command tool, and the extension's own guard behind it) cannot undo
 * a change set; control: the person's click on the same row asks them.
 *
 * Then a shared workbench with real processes: two `ccb serve --stdio` front ends, whose MCP clients
 * say different names, share one detached workbench host; the person's tab names each connected
 * client under the front end it came through, and shows a client leaving.
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
  const alphaFile = join(ws, "alpha.txt");
  const { log } = createLogging({ level: process.env.CCB_TEST_LOG ?? "warn" });
  let w: WorkbenchIde;
  let person: PersonPage;
  let view: ChangesView;
  let alpha: Client;
  let second: PersonWindow | undefined;
  let ide: IdeClient | undefined;

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
    await ide?.close();
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
    // Connected through the whole test: the view names it among the clients attached now.
    const c = await IdeClient.connect(w.ide.port, w.ide.authToken);
    ide = c;
    {
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
    // the IDE client connected now, by the name it said in its handshake
    assert.ok(
      rows.some((l) => /^attached: claude-code \(ide\), via ccb \(pid \d+\), session connection \d+, since /.test(l)),
      JSON.stringify(rows),
    );
  });

  it("a change made while the view is shown appears in it (pushed by ccb, no poll)", async () => {
    await ok("fs_write", { path: "pushed.txt", content: "pushed\n" });
    await view.untilRows("the new change set pushed to the tab", (r) =>
      r.some((l) => /^change set \w+ by alpha-host \(mcp\): fs_write .*files pushed\.txt$/.test(l)),
    );
  });

  it("attack: the model's commands cannot undo a change set; control: the person's click on the same row asks them", async () => {
    const list = (await ok("checkpoint_list", { path: "alpha.txt" })).structuredContent.checkpoints as any[];
    const target = list.find((x) => x.client === "alpha-host" && x.files.includes("alpha.txt"));
    assert.ok(target, JSON.stringify(list));
    // What a row's node looks like, made up by the model: its dialog would name whoever it likes.
    const forged = {
      kind: "set",
      set: { ...target, client: "an agent you distrust", files: [{ path: alphaFile, rel: "alpha.txt" }] },
    };
    // 1. the tool the model has refuses ccb's own commands and runCommands
    const executeTool = workspaceTools.find((t) => t.name === "vscode_execute_command")!;
    const model = (args: { command: string; args?: unknown[] }) =>
      runTool(executeTool, executeTool.input.parse(args), {
        core: w.core,
        signal: AbortSignal.timeout(60_000),
        log: w.core.log,
      });
    for (const [command, args] of [
      ["ccb.checkpoints.undo", [forged]],
      ["ccb.checkpoints.restore", [forged]],
      ["runCommands", [{ commands: [{ command: "ccb.checkpoints.undo", args: forged }] }]],
    ] as const) {
      await assert.rejects(model({ command, args: [...args] }), (err: unknown) => {
        assert.ok(isCcbError(err, "PERMISSION_DENIED"), `${command}: ${String(err)}`);
        return true;
      });
    }
    // 2. behind the tool, the extension's own guard (the bridge method the tool calls): refused before any dialog
    for (const call of [
      { command: "ccb.checkpoints.undo", args: [forged] },
      { command: "ccb.checkpoints.restore", args: [forged] },
      { command: "runCommands", args: [{ commands: [{ command: "ccb.checkpoints.undo", args: forged }] }] },
    ]) {
      // it returns at once: a dialog would hold the command until answered
      await w.bridgeCall("commands.execute", call);
      assert.equal(await person.evaluate<string | null>(DIALOG_TEXT), null, `${call.command}: no dialog shown`);
    }
    assert.equal(readFileSync(alphaFile, "utf8"), "from alpha\n", "alpha.txt is not undone");
    const after = (await ok("checkpoint_list", { agent: "workbench" })).structuredContent.checkpoints as any[];
    assert.deepEqual(after, [], "no undo recorded");
    // control: the person's click on that row's Undo asks them, naming the real change set; they cancel
    await view.rowAction(/^change set \w+ by alpha-host \(mcp\): fs_write .*files alpha\.txt$/, "Undo this change set");
    const asked = await view.answerDialog("Cancel");
    assert.match(asked, /Undo what alpha-host \(mcp\) changed with fs_write/);
    assert.equal(readFileSync(alphaFile, "utf8"), "from alpha\n", "cancelled: nothing undone");
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
    assert.equal(readFileSync(alphaFile, "utf8"), "from alpha\n");
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
    assert.equal(readFileSync(alphaFile, "utf8"), "from alpha\n", "alpha's other change set is kept");
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

  it("the person restores the workspace to a change set with a click; the restore is listed and undone the same way", async () => {
    const before = readFileSync(notes, "utf8");
    await view.rowAction(
      /^change set \w+ by alpha-host \(mcp\): fs_write .*files notes\.txt$/,
      "Restore the workspace to this change set",
    );
    const asked = await view.answerDialog("Restore");
    assert.match(asked, /Restore every recorded file to its state after fs_write by alpha-host \(mcp\)/);
    await view.untilNotification("the restore done", /ccb: restored .*notes\.txt/);
    // every file as it was right after that change set: alpha's line back, what came after gone
    assert.equal(readFileSync(notes, "utf8"), LINES(12, { 3: "line 3 by alpha" }));
    assert.equal(existsSync(alphaFile), false, "alpha.txt was written after it: gone");
    assert.equal(existsSync(join(ws, "pushed.txt")), false, "pushed.txt was written after it: gone");
    assert.equal(readFileSync(main, "utf8"), "export const x = 2;\n", "claude-code's earlier change kept");
    // the restore is itself a change set, listed as the person's, and undone with a click
    const restore = /^change set \w+ by workbench: checkpoint_restore \(restore\) .*files /;
    await view.untilRows("the restore listed", (r) => r.some((l) => restore.test(l)));
    await view.rowAction(restore, "Undo this change set");
    await view.answerDialog("Undo");
    await view.untilNotification("the restore undone", /ccb: took back .*alpha\.txt/);
    assert.equal(readFileSync(notes, "utf8"), before, "notes.txt as before the restore");
    assert.equal(readFileSync(alphaFile, "utf8"), "from alpha\n");
    assert.equal(readFileSync(join(ws, "pushed.txt"), "utf8"), "pushed\n");
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
    // a change now is pushed to both tabs
    await ok("fs_write", { path: "both.txt", content: "both\n" });
    const row = (r: string[]) =>
      r.some((l) => /^change set \w+ by alpha-host \(mcp\): fs_write .*files both\.txt$/.test(l));
    await other.untilRows("the change in the second tab", row);
    await view.untilRows("the change in the first tab", row);
  });
});

describe("a shared workbench names every client attached to it, in the person's tab", () => {
  const home = tmpdirFixture({ prefix: "ccb-ckpt-share-" });
  const ws = join(home.path, "ws");
  const env = () => cleanEnv(envOf(home.path));
  const { log } = createLogging({ level: process.env.CCB_TEST_LOG ?? "warn" });
  const clients: Client[] = [];
  let person: PersonWindow | undefined;

  /** `ccb serve --stdio` (its workbench shared: the first starts the detached host, the next attaches), spoken to by an MCP client named `name`. */
  const serve = async (name: string) => {
    const { command, args } = ccbCommand([
      "serve",
      "--stdio",
      "--workspace",
      ws,
      ...codeServerArgs(),
      "--no-headless-client",
    ]);
    const client = new Client({ name, version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command, args, env: env(), stderr: "pipe" }));
    clients.push(client);
    return client;
  };

  before(() => {
    mkdirSync(ws, { recursive: true });
    writeFileSync(join(ws, "a.txt"), "a\n");
  });

  after(async () => {
    await person?.chromium.close();
    for (const c of clients) await c.close().catch(() => undefined);
    await hostsStopped(join(home.path, "state"));
    home.cleanup();
  });

  it("two MCP clients of different names, through two ccb serve processes, are each named; one leaving is shown", async () => {
    const alpha = await serve("alpha-host");
    const beta = await serve("beta-host");
    // A person's tab, opened from a fresh link as a person would (`ccb workbench link`).
    const link = await eventually(
      "a link to the shared workbench",
      async () => {
        const r = await runCcb(["workbench", "link", "--workspace", ws], { env: env() });
        return r.code === 0 && /^http/.test(r.stdout.trim()) ? r.stdout.trim() : undefined;
      },
      180_000,
    );
    person = await openPersonWindow(link, log);
    const view = changesView(person.person, person.cdp);
    await view.open();
    const named = (r: string[], name: string) =>
      r.some((l) =>
        new RegExp(`^attached: ${name} \\(mcp\\), via ccb serve \\(pid \\d+\\), session \\w+, since `).test(l),
      );
    const rows = await view.untilRows(
      "both MCP clients named under their front ends",
      (r) => named(r, "alpha-host") && named(r, "beta-host"),
    );
    assert.ok(
      rows.some((l) => /^attached: detached ccb host \(pid \d+\), runs this workbench/.test(l)),
      JSON.stringify(rows),
    );
    assert.equal(
      rows.filter((l) => /^attached: ccb serve \(pid \d+\), attached since/.test(l)).length,
      2,
      JSON.stringify(rows),
    );
    // each is named under its own front end: two different serve pids
    const via = (name: string) => rows.find((l) => l.startsWith(`attached: ${name} `))?.match(/pid (\d+)/)?.[1];
    assert.notEqual(via("alpha-host"), via("beta-host"));
    // a change by one of them is listed as that client's, pushed to the tab
    const r = (await beta.callTool({ name: "fs_write", arguments: { path: "b.txt", content: "b\n" } })) as {
      isError?: boolean;
    };
    assert.notEqual(r.isError, true);
    await view.untilRows("beta-host's change listed", (l) =>
      l.some((x) => /^change set \w+ by beta-host \(mcp\): fs_write .*files b\.txt$/.test(x)),
    );
    // beta's client leaves (its serve exits): the tab no longer names it, alpha stays
    await beta.close();
    await view.untilRows(
      "beta-host gone, alpha-host still there",
      (l) => !named(l, "beta-host") && named(l, "alpha-host"),
    );
    assert.ok(alpha);
  });
});
