import assert from "node:assert/strict";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { DEFAULT_SETTLE, LiveEditor } from "../../../src/agent/live-editor.ts";
import { createCore } from "../../../src/core/core.ts";
import type { EditorBridge } from "../../../src/core/editor/bridge.ts";
import { CcbError, isCcbError } from "../../../src/core/errors.ts";
import { silentLogger } from "../../../src/core/log.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

/**
 * The live editor's answer when the workbench's bridge goes away in the middle of an edit's
 * diagnostics (CI saw an edit come back with no diagnostics line at all, in a shared workbench
 * under load). The editor is a scripted bridge: the boundary is the bridge's call, nothing above it.
 */

const range = { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } };

/** The editor's answer to `editor.open` for `path`, a file of `languageId`. */
const shown = (path: string, languageId: string) => ({
  path,
  uri: `file://${path}`,
  languageId,
  version: 2,
  isDirty: false,
  isUntitled: false,
  lineCount: 1,
  selections: [],
  visibleRanges: [],
});

/** A bridge that answers like a workbench holding `text` at `path`; `fail(method, n)` may throw for the n-th call of a method. */
function scriptedBridge(
  path: string,
  text: string,
  fail: (method: string, n: number) => Error | undefined,
): EditorBridge {
  const counts = new Map<string, number>();
  return {
    async call(method) {
      const n = (counts.get(method) ?? 0) + 1;
      counts.set(method, n);
      const err = fail(method, n);
      if (err) throw err;
      switch (method) {
        case "editor.open":
          return shown(path, "plaintext"); // no language server to wait for: the diagnostics are read at once
        case "document.read":
          return { path, version: 2, isDirty: false, languageId: "plaintext", text };
        case "diagnostics.get":
          return { files: [{ path, diagnostics: [{ range, severity: "error", message: "a real problem" }] }] };
        default:
          throw new Error(`unexpected ${method}`);
      }
    },
    onEvent: () => () => undefined,
  };
}

describe("the live editor when the workbench goes away during an edit's diagnostics", () => {
  const ws = tmpdirFixture({ prefix: "ccb-live-editor-" });
  after(() => ws.cleanup());
  const path = join(ws.path, "a.txt");
  const edit = async (fail: (method: string, n: number) => Error | undefined) => {
    const core = createCore({ roots: [ws.path] });
    core.claimEditor("test").set(scriptedBridge(path, "x\n", fail));
    const live = new LiveEditor(core, ws.path, silentLogger);
    return live.afterEdit([{ path, text: "x\n" }], new AbortController().signal);
  };
  const away = () => new CcbError("BRIDGE_UNAVAILABLE", "The editor went away before answering (test).");

  it("asks again once: the edit's result has the diagnostics", async () => {
    const text = await edit((method, n) => (method === "diagnostics.get" && n === 1 ? away() : undefined));
    assert.match(text ?? "", /a\.txt:1:1 error: a real problem/);
  });

  it("control: with the editor there all along, the same diagnostics at the first asking", async () => {
    assert.match((await edit(() => undefined)) ?? "", /a\.txt:1:1 error: a real problem/);
  });

  it("asks once more only: a bridge that stays away fails the diagnostics (the edit itself stands)", async () => {
    await assert.rejects(
      edit((method) => (method === "diagnostics.get" ? away() : undefined)),
      (err: unknown) => isCcbError(err, "BRIDGE_UNAVAILABLE"),
    );
  });

  it("a workbench whose bridge is away when the edit lands: the edit gets feedback, which waits for the bridge", async () => {
    const core = createCore({ roots: [ws.path] });
    const writer = core.claimEditor("test");
    writer.setWorkbench({ url: "http://127.0.0.1:1/", runtime: "code-server" });
    writer.clear("a probe the busy window missed");
    const live = new LiveEditor(core, ws.path, silentLogger);
    assert.equal(live.connected, false);
    assert.equal(live.present, true, "the session hands the edit to the live editor");
    setTimeout(() => writer.set(scriptedBridge(path, "x\n", () => undefined)), 300);
    const text = await live.afterEdit([{ path, text: "x\n" }], new AbortController().signal);
    assert.match(text ?? "", /a\.txt:1:1 error: a real problem/);
    // control: no workbench at all is no feedback, at once
    const bare = new LiveEditor(createCore({ roots: [ws.path] }), ws.path, silentLogger);
    assert.equal(bare.present, false);
  });

  it("a workbench whose bridge stays away past the wait: the result says the diagnostics are not available, never silence", async () => {
    const core = createCore({ roots: [ws.path] });
    const writer = core.claimEditor("test");
    writer.setWorkbench({ url: "http://127.0.0.1:1/", runtime: "code-server" });
    writer.clear("a window starved of CPU misses its probes");
    const timing = { ...DEFAULT_SETTLE, reconnectMs: 200 };
    const live = new LiveEditor(core, ws.path, silentLogger, timing);
    const text = await live.afterEdit([{ path, text: "x\n" }], new AbortController().signal);
    assert.match(
      text ?? "",
      /^Diagnostics: not available for this edit: the workbench runs, but no editor window answered/,
    );
    // control: back within the wait, the diagnostics
    const core2 = createCore({ roots: [ws.path] });
    const writer2 = core2.claimEditor("test");
    writer2.setWorkbench({ url: "http://127.0.0.1:1/", runtime: "code-server" });
    writer2.clear("a probe missed");
    setTimeout(() => writer2.set(scriptedBridge(path, "x\n", () => undefined)), 50);
    const back = await new LiveEditor(core2, ws.path, silentLogger, { ...timing, reconnectMs: 5_000 }).afterEdit(
      [{ path, text: "x\n" }],
      new AbortController().signal,
    );
    assert.match(back ?? "", /a\.txt:1:1 error: a real problem/);
  });

  it("an answer of another shape is not a bridge that went away: no second asking", async () => {
    let asked = 0;
    await assert.rejects(
      edit((method) => {
        if (method !== "diagnostics.get") return undefined;
        asked++;
        return new CcbError("BRIDGE_ERROR", "The editor answered diagnostics.get with an unexpected shape.");
      }),
      (err: unknown) => isCcbError(err, "BRIDGE_ERROR"),
    );
    assert.equal(asked, 1);
  });

  it("an answer of the wrong shape is refused by the editor port's one check (checkAnswer), asked once", async () => {
    const core = createCore({ roots: [ws.path] });
    const scripted = scriptedBridge(path, "x\n", () => undefined);
    let asked = 0;
    core.claimEditor("test").set({
      onEvent: scripted.onEvent,
      async call(method, params, options) {
        if (method !== "diagnostics.get") return scripted.call(method, params, options);
        asked++;
        return { files: "not a list" };
      },
    });
    const live = new LiveEditor(core, ws.path, silentLogger);
    await assert.rejects(
      live.afterEdit([{ path, text: "x\n" }], new AbortController().signal),
      (err: unknown) =>
        isCcbError(err, "BRIDGE_ERROR") && /diagnostics\.get with an unexpected shape/.test(err.message) && !!err.hint,
    );
    assert.equal(asked, 1);
  });
});

/**
 * The settle bounds count from when the editor has shown the edited files, not from the edit: a
 * fresh workbench on a busy machine took 8 s to open the first TypeScript file (its extension
 * activating), and the first edit's list came back "may be stale" before its language server was
 * asked anything (acp-live-editor, CI).
 */
describe("the live editor's settle bounds", () => {
  const ws = tmpdirFixture({ prefix: "ccb-live-settle-" });
  after(() => ws.cleanup());
  const path = join(ws.path, "a.ts");
  const timing = { quietMs: 20, idleMs: 60, maxMs: 200, startMs: 2_000 };

  /** A TypeScript file's editor: `open` answers after `openMs`; the buffer holds `buffer`. */
  const tsBridge = (openMs: number, buffer: string): EditorBridge => ({
    async call(method) {
      switch (method) {
        case "editor.open":
          await new Promise((r) => setTimeout(r, openMs));
          return shown(path, "typescript");
        case "document.read":
          return { path, version: 2, isDirty: false, languageId: "typescript", text: buffer };
        case "language.ready":
          return { languageId: "typescript", activated: [], semantic: true, ms: 1 };
        case "diagnostics.get":
          return { files: [{ path, diagnostics: [{ range, severity: "error", message: "a type error" }] }] };
        default:
          throw new Error(`unexpected ${method}`);
      }
    },
    onEvent: () => () => undefined,
  });
  const edit = (bridge: EditorBridge) => {
    const core = createCore({ roots: [ws.path] });
    core.claimEditor("test").set(bridge);
    return new LiveEditor(core, ws.path, silentLogger, timing).afterEdit(
      [{ path, text: "x\n" }],
      new AbortController().signal,
    );
  };

  it("an editor slower to open the file than the whole settle bound: the list settles, not marked stale", async () => {
    const text = (await edit(tsBridge(timing.maxMs + 150, "x\n"))) ?? "";
    assert.match(text, /a\.ts:1:1 error: a type error/);
    assert.doesNotMatch(text, /may be stale/);
  });

  it("control: an editor whose buffer never holds the edit (the person's unsaved typing): marked stale, and says why", async () => {
    const text = (await edit(tsBridge(0, "the person's unsaved text\n"))) ?? "";
    assert.match(text, /the editor did not hold the edited text within 200 ms: this list may be stale/);
  });
});
