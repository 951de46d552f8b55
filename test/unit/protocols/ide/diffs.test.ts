import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type IdeClient, textsOf } from "../../../helpers/ide-client.ts";
import { startTestIde, type TestIde } from "../../../helpers/ide-fixture.ts";

const ORIGINAL = "export const x = 1;\n";

describe("ide openDiff flows", () => {
  let t: TestIde;
  let c: IdeClient;
  let file: string;
  let n = 0;
  const tab = () => `✻ [Claude Code] main.ts (${(++n).toString(16).padStart(6, "0")}) ⧉`;
  const args = (tabName: string, contents = "export const x = 2;\n") => ({
    old_file_path: file,
    new_file_path: file,
    new_file_contents: contents,
    tab_name: tabName,
  });

  before(async () => {
    t = await startTestIde({ files: { "main.ts": ORIGINAL } });
    file = join(t.workspace, "main.ts");
    c = await t.ready();
  });
  after(async () => t.close());

  it("accept: FILE_SAVED plus the final contents including the person's own edits; the IDE never writes the file", async () => {
    const name = tab();
    const call = c.call("openDiff", args(name));
    const shown = await t.editor.waitForDiff(name);
    assert.equal(shown.req.path, file);
    assert.equal(shown.req.newContents, "export const x = 2;\n");
    shown.accept("export const x = 3; // edited in the diff\n");
    const r = await call;
    assert.deepEqual(r.content, [
      { type: "text", text: "FILE_SAVED" },
      { type: "text", text: "export const x = 3; // edited in the diff\n" },
    ]);
    assert.equal(readFileSync(file, "utf8"), ORIGINAL);
    assert.deepEqual(textsOf(await c.call("close_tab", { tab_name: name })), ["TAB_CLOSED"]);
    assert.ok(t.editor.closedDiffs.includes(shown.req.diffId), "close_tab closed the diff in the editor");
    assert.equal(t.ide.diffs.size, 0);
  });

  it("reject: DIFF_REJECTED plus the tab name", async () => {
    const name = tab();
    const call = c.call("openDiff", args(name));
    (await t.editor.waitForDiff(name)).reject();
    assert.deepEqual(textsOf(await call), ["DIFF_REJECTED", name]);
    assert.equal(readFileSync(file, "utf8"), ORIGINAL);
    await c.call("close_tab", { tab_name: name });
  });

  it("close_tab while pending resolves the pending call and closes the diff", async () => {
    const name = tab();
    const call = c.call("openDiff", args(name));
    const shown = await t.editor.waitForDiff(name);
    assert.deepEqual(textsOf(await c.call("close_tab", { tab_name: name })), ["TAB_CLOSED"]);
    assert.deepEqual(textsOf(await call), ["DIFF_REJECTED", name]);
    assert.equal(shown.signal.aborted, true);
    assert.ok(t.editor.closedDiffs.includes(shown.req.diffId));
    assert.deepEqual(textsOf(await c.call("close_tab", { tab_name: name })), ["TAB_CLOSED"], "twice is fine");
  });

  it("the same tab_name again supersedes the old diff", async () => {
    const name = tab();
    const first = c.call("openDiff", args(name, "one\n"));
    const d1 = await t.editor.waitForDiff(name, 0);
    const second = c.call("openDiff", args(name, "two\n"));
    assert.deepEqual(textsOf(await first), ["DIFF_REJECTED", name]);
    assert.equal(d1.signal.aborted, true);
    const d2 = await t.editor.waitForDiff(name, 1);
    assert.equal(d2.req.newContents, "two\n");
    d2.accept();
    assert.deepEqual(textsOf(await second), ["FILE_SAVED", "two\n"]);
    await c.call("close_tab", { tab_name: name });
  });

  it("a pending diff never blocks other calls, on the same or another connection", async () => {
    const name = tab();
    const pending = c.call("openDiff", args(name));
    const shown = await t.editor.waitForDiff(name);
    const other = await t.ready();
    const [a, b] = await Promise.all([c.call("getWorkspaceFolders"), other.call("getWorkspaceFolders")]);
    assert.equal(a.isError, undefined);
    assert.equal(b.isError, undefined);
    const second = tab();
    const p2 = other.call("openDiff", args(second, "parallel\n"));
    (await t.editor.waitForDiff(second)).accept();
    assert.deepEqual(textsOf(await p2), ["FILE_SAVED", "parallel\n"]);
    assert.equal(t.ide.diffs.pendingCount(), 1);
    shown.reject();
    assert.deepEqual(textsOf(await pending), ["DIFF_REJECTED", name]);
    await c.call("closeAllDiffTabs");
  });

  it("closeAllDiffTabs closes only ccb's diffs, counts them and resolves pending ones as rejected", async () => {
    const a = tab();
    const b = tab();
    const pa = c.call("openDiff", args(a));
    const pb = c.call("openDiff", args(b));
    const da = await t.editor.waitForDiff(a);
    const db = await t.editor.waitForDiff(b);
    da.accept();
    await pa;
    const closedBefore = t.editor.closedDiffs.length;
    assert.deepEqual(textsOf(await c.call("closeAllDiffTabs")), ["CLOSED_2_DIFF_TABS"]);
    assert.deepEqual(textsOf(await pb), ["DIFF_REJECTED", b]);
    assert.deepEqual(t.editor.closedDiffs.slice(closedBefore).sort(), [da.req.diffId, db.req.diffId].sort());
    assert.deepEqual(textsOf(await c.call("closeAllDiffTabs")), ["CLOSED_0_DIFF_TABS"]);
  });

  it("a client disconnecting while a diff is pending closes that diff", async () => {
    const other = await t.ready();
    const name = tab();
    void other.call("openDiff", args(name)).catch(() => {});
    const shown = await t.editor.waitForDiff(name);
    other.ws.terminate();
    await new Promise<void>((resolve) => shown.signal.addEventListener("abort", () => resolve(), { once: true }));
    await new Promise<void>((resolve) => {
      const check = () => (t.editor.closedDiffs.includes(shown.req.diffId) ? resolve() : setImmediate(check));
      check();
    });
    assert.equal(t.ide.diffs.size, 0);
  });

  it("a new file (not on disk yet) can be proposed", async () => {
    const name = tab();
    const p = join(t.workspace, "new/dir/file.ts");
    const call = c.call("openDiff", { old_file_path: p, new_file_path: p, new_file_contents: "new\n", tab_name: name });
    const shown = await t.editor.waitForDiff(name);
    assert.equal(shown.req.path, p);
    shown.accept();
    assert.deepEqual(textsOf(await call), ["FILE_SAVED", "new\n"]);
    await c.call("close_tab", { tab_name: name });
  });

  it("a diff for a file outside the workspace is an error (the CLI falls back to its terminal diff)", async () => {
    const r = await c.call("openDiff", {
      old_file_path: "/etc/hosts",
      new_file_path: "/etc/hosts",
      new_file_contents: "x",
      tab_name: tab(),
    });
    assert.equal(r.isError, true);
    assert.match(textsOf(r)[0]!, /PATH_OUTSIDE_WORKSPACE/);
  });

  it("the client cancelling the request closes the diff", async () => {
    const name = tab();
    const id = 777_001;
    c.ws.send(
      JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "openDiff", arguments: args(name) } }),
    );
    const shown = await t.editor.waitForDiff(name);
    c.notify("notifications/cancelled", { requestId: id, reason: "user interrupted" });
    await new Promise<void>((resolve) => shown.signal.addEventListener("abort", () => resolve(), { once: true }));
    assert.equal(t.ide.diffs.size, 0);
  });
});
