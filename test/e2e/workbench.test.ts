import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { WebSocket } from "ws";
import { silentLogger } from "../../src/core/log.ts";
import { startHeadlessClient } from "../../src/workbench/headless-client.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { bootWorkbench, bridgeConfigs, eventually, text, type Workbench } from "../helpers/workbench.ts";
import { tinyVsix } from "../helpers/zip.ts";

/**
 * The live workbench end to end: `ccb serve --http` launches a real code-server with the real
 * bridge extension, headless Chromium opens it, and an MCP SDK client drives the editor tools.
 * Booted once for the whole file.
 */
const ws = tmpdirFixture({ prefix: "ccb-wb-ws-" });
const home = tmpdirFixture({ prefix: "ccb-wb-home-" });
const outside = tmpdirFixture({ prefix: "ccb-wb-outside-" });
let wb: Workbench;

mkdirSync(join(ws.path, "src"));
writeFileSync(
  join(ws.path, "tsconfig.json"),
  JSON.stringify({
    compilerOptions: { strict: true, target: "ES2022", module: "ESNext", moduleResolution: "Bundler", noEmit: true },
    include: ["src"],
  }),
);
writeFileSync(
  join(ws.path, "src/lib.ts"),
  'export function greet(name: string): string {\n  return "hi " + name;\n}\n',
);
writeFileSync(join(ws.path, "src/main.ts"), 'import { greet } from "./lib";\n\ngreet("a");\ngreet("b");\n');
writeFileSync(join(ws.path, "notes.txt"), "first line\nsecond line\n");
writeFileSync(join(ws.path, "tiny.vsix"), tinyVsix("ccbtest", "tiny", "0.0.1"));
writeFileSync(join(outside.path, "target.txt"), "outside\n");
symlinkSync(join(outside.path, "target.txt"), join(ws.path, "escape.txt"));

// Secrets planted in ccb's environment: no child (runtime, its terminals, Chromium) may have them.
const planted = {
  ACP_AUTH_TOKEN: `acp-planted-${randomBytes(12).toString("hex")}`,
  ACP_RCS_TOKEN: `rcs-planted-${randomBytes(12).toString("hex")}`,
  ANTHROPIC_API_KEY: `sk-ant-planted-${randomBytes(12).toString("hex")}`,
};

before(
  async () => {
    wb = await bootWorkbench(ws.path, home.path, [], { env: planted });
  },
  { timeout: 300_000 },
);

after(async () => {
  await wb?.stop();
  ws.cleanup();
  home.cleanup();
  outside.cleanup();
});

describe("workbench over MCP (code-server + headless Chromium)", { timeout: 900_000 }, () => {
  it("editor_open then editor_state shows the file", async () => {
    const opened = await wb.ok("editor_open", { path: "src/main.ts" });
    assert.match(text(opened), /src\/main\.ts \(typescript, version \d+/);
    const st = await wb.ok("editor_state");
    const active = (st.structuredContent as { active: { path: string; languageId: string } }).active;
    assert.equal(active.path, "src/main.ts");
    assert.equal(active.languageId, "typescript");
  });

  it("vscode_open gives the workbench URL only in _meta", async () => {
    const r = await wb.ok("vscode_open");
    const url = (r._meta?.["ccb/workbench"] as { url: string }).url;
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/ide\/[A-Za-z0-9_-]{32,}\//);
    const key = /\/ide\/([^/]+)/.exec(url)?.[1] as string;
    assert.ok(!text(r).includes(key) && !JSON.stringify(r.structuredContent).includes(key));
    assert.match(url, /[?&]ccb_ott=[A-Za-z0-9_-]{40,}/, "a one-time link");
    const plain = new URL(url);
    plain.searchParams.delete("ccb_ott");
    assert.equal((await fetch(plain)).status, 401, "the path alone opens nothing");
    const exchange = await fetch(url, { redirect: "manual" });
    assert.equal(exchange.status, 302);
    const cookie = String(exchange.headers.get("set-cookie")).split(";")[0] as string;
    const page = await fetch(new URL(String(exchange.headers.get("location")), url), { headers: { cookie } });
    assert.equal(page.status, 200, "the gateway proxies the workbench page");
    assert.match(await page.text(), /<html/i);
  });

  it("edits without save: the unsaved overlay is visible, the result names the auto-save, which then writes the disk", async () => {
    await wb.ok("editor_open", { path: "notes.txt" });
    const r = await wb.ok("editor_apply_edits", {
      path: "notes.txt",
      edits: [{ range: { start: { line: 1, column: 1 }, end: { line: 1, column: 6 } }, newText: "FIRST" }],
    });
    assert.equal((r.structuredContent as { isDirty: boolean }).isDirty, true);
    // the web workbench auto-saves after a delay by default: the result says so, and it is what happens
    assert.deepEqual((r.structuredContent as { autoSave?: unknown }).autoSave, { mode: "afterDelay", delayMs: 1000 });
    assert.match(
      text(r),
      /unsaved changes in the editor, which the editor's auto-save \(files\.autoSave: afterDelay\) writes to disk 1000 ms after the last edit/,
    );
    const st = await wb.ok("editor_state", { path: "notes.txt" });
    const overlay = (
      st.structuredContent as { overlays: Array<{ path: string; isDirty: boolean; text: string; version: number }> }
    ).overlays.find((o) => o.path === "notes.txt");
    assert.ok(overlay, text(st));
    // (dirty or, a second later, auto-saved: the text is the buffer's either way)
    assert.equal(overlay.text, "FIRST line\nsecond line\n");
    await eventually("the auto-save wrote the edit", () =>
      readFileSync(join(ws.path, "notes.txt"), "utf8") === "FIRST line\nsecond line\n" ? true : undefined,
    );
    const stale = await wb.call("editor_apply_edits", {
      path: "notes.txt",
      expectedVersion: overlay.version - 1,
      edits: [{ range: { start: { line: 2, column: 1 }, end: { line: 2, column: 1 } }, newText: "x" }],
    });
    assert.equal(stale.isError, true);
    assert.match(text(stale), /VERSION_CONFLICT/);
  });

  it("a broken TS file produces diagnostics with severity names that clear after a fix", async () => {
    writeFileSync(join(ws.path, "src/broken.ts"), 'export const n: number = "not a number";\n');
    await wb.ok("editor_open", { path: "src/broken.ts" });
    const errs = await eventually("TS error reported", async () => {
      const r = await wb.ok("diagnostics_get", { path: "src/broken.ts" });
      const files = (
        r.structuredContent as { files: Array<{ diagnostics: Array<{ severity: string; message: string }> }> }
      ).files;
      const d = files.flatMap((f) => f.diagnostics).filter((x) => x.severity === "error");
      return d.length > 0 ? d : undefined;
    });
    assert.match(errs[0]?.message ?? "", /not assignable to type 'number'/);
    await wb.ok("editor_apply_edits", {
      path: "src/broken.ts",
      edits: [{ range: { start: { line: 1, column: 26 }, end: { line: 1, column: 40 } }, newText: "42" }],
      save: true,
    });
    assert.equal(readFileSync(join(ws.path, "src/broken.ts"), "utf8"), "export const n: number = 42;\n");
    await eventually("diagnostics cleared", async () => {
      const r = await wb.ok("diagnostics_get", { path: "src/broken.ts" });
      return (r.structuredContent as { count: number }).count === 0 ? true : undefined;
    });
  });

  it("a provider command runs with a tagged URI argument", async () => {
    const r = await eventually("document symbols via command", async () => {
      const res = await wb.ok("vscode_execute_command", {
        command: "vscode.executeDocumentSymbolProvider",
        args: [{ $type: "uri", path: "src/lib.ts" }],
      });
      const list = (res.structuredContent as { result: unknown }).result;
      return Array.isArray(list) && list.length > 0 ? list : undefined;
    });
    assert.equal((r[0] as { name: string }).name, "greet");
    assert.equal((r[0] as { range: { $type: string } }).range.$type, "range");
    const outside = await wb.call("vscode_execute_command", {
      command: "vscode.open",
      args: [{ $type: "uri", path: "/etc/passwd" }],
    });
    assert.equal(outside.isError, true);
    assert.match(text(outside), /PATH_OUTSIDE_WORKSPACE/);
  });

  it("symbols, definition, references and hover on a small TS project", async () => {
    await wb.ok("editor_open", { path: "src/main.ts" });
    const syms = await eventually("document symbols", async () => {
      const r = await wb.ok("language_document_symbols", { path: "src/lib.ts" });
      const s = (r.structuredContent as { symbols: Array<{ name: string; kind: string }> }).symbols;
      return s.length ? s : undefined;
    });
    assert.deepEqual(
      syms.map((s) => [s.name, s.kind]),
      [["greet", "Function"]],
    );
    const def = await eventually("definition", async () => {
      const r = await wb.ok("language_definition", { path: "src/main.ts", position: { line: 3, column: 2 } });
      const l = (r.structuredContent as { locations: Array<{ path: string; range: { start: { line: number } } }> })
        .locations;
      return l.length ? l : undefined;
    });
    assert.deepEqual(
      def.map((l) => [l.path, l.range.start.line]),
      [["src/lib.ts", 1]],
    );
    const refs = await wb.ok("language_references", { path: "src/lib.ts", position: { line: 1, column: 17 } });
    const where = (
      refs.structuredContent as { locations: Array<{ path: string; range: { start: { line: number } } }> }
    ).locations
      .map((l) => `${l.path}:${l.range.start.line}`)
      .sort();
    assert.deepEqual(where, ["src/lib.ts:1", "src/main.ts:1", "src/main.ts:3", "src/main.ts:4"]);
    const ws2 = await eventually("workspace symbols", async () => {
      const r = await wb.ok("language_workspace_symbols", { query: "greet" });
      const s = (r.structuredContent as { symbols: Array<{ name: string; path: string }> }).symbols;
      return s.length ? s : undefined;
    });
    assert.ok(
      ws2.some((s) => /^greet\b/.test(s.name) && s.path === "src/lib.ts"),
      JSON.stringify(ws2),
    );
    const hover = await wb.ok("language_hover", { path: "src/main.ts", position: { line: 3, column: 2 } });
    assert.match(text(hover), /greet\(name: string\): string/);
  });

  it("a .vsix the model asks for is not installed without a person's tab to ask (only the headless window serves)", async () => {
    const r = await wb.call("extensions_install", { vsixPath: "tiny.vsix" });
    assert.equal(r.isError, true);
    assert.match(text(r), /PERMISSION_DENIED/);
    assert.match(text(r), /no person's tab is open/);
    const listed = await wb.ok("extensions_list");
    assert.ok(
      !(listed.structuredContent as { extensions: Array<{ id: string }> }).extensions.some(
        (e) => e.id.toLowerCase() === "ccbtest.tiny",
      ),
      "not installed",
    );
    // the tool works otherwise: an uninstall of what is not installed answers plainly
    const un = await wb.ok("extensions_uninstall", { id: "ccbtest.tiny" });
    assert.equal((un.structuredContent as { uninstalled: boolean }).uninstalled, false);
  });

  it("edits through the bridge cannot follow a symlink out of the workspace", async () => {
    const r = await wb.call("editor_apply_edits", {
      path: "escape.txt",
      edits: [{ range: { start: { line: 1, column: 1 }, end: { line: 1, column: 1 } }, newText: "pwned" }],
      save: true,
    });
    assert.equal(r.isError, true);
    assert.match(text(r), /PATH_OUTSIDE_WORKSPACE/);
    assert.equal(readFileSync(join(outside.path, "target.txt"), "utf8"), "outside\n");
  });

  it("terminals are shared both ways: a tool's terminal appears in the workbench, a workbench terminal in terminal_list", async () => {
    const created = await wb.ok("terminal_create", {
      command: "bash",
      args: ["-c", "echo shared-terminal-ok; sleep 600"],
      title: "shared",
    });
    const id = (created.structuredContent as { terminal: { id: string } }).terminal.id;
    const shown = await eventually(
      "terminal shown in the workbench",
      async () => {
        const r = await wb.ok("vscode_execute_command", { command: "ccb.terminals.list" });
        const list = (r.structuredContent as { result: Array<{ name: string; coreId?: string }> }).result;
        return list.find((t) => t.coreId === id);
      },
      60_000,
    );
    assert.match(shown.name, /shared/);
    await wb.ok("vscode_execute_command", { command: "ccb.terminal.new" });
    const fromPanel = await eventually(
      "workbench terminal listed by terminal_list",
      async () => {
        const r = await wb.ok("terminal_list");
        const list = JSON.stringify(r.structuredContent ?? {});
        return /"origin":"workbench"/.test(list) ? list : undefined;
      },
      60_000,
    );
    assert.match(fromPanel, /"origin":"workbench"/);
    await wb.ok("terminal_kill", { id });
  });

  it("bridge auth: wrong token 4401, bad JSON 4400, no hello 4408", async () => {
    const bridgeUrl = `${wb.serve.base.replace(/^http/, "ws")}/bridge`;
    const closeCode = (first?: string) =>
      new Promise<number>((resolve, reject) => {
        const s = new WebSocket(bridgeUrl);
        s.on("open", () => first !== undefined && s.send(first));
        s.on("close", (code) => resolve(code));
        s.on("error", reject);
      });
    const hello = {
      type: "hello",
      protocol: 1,
      token: "A".repeat(43),
      clientId: "intruder",
      focused: true,
      extensionVersion: "x",
      vscodeVersion: "x",
      workspaceFolders: [],
    };
    assert.equal(await closeCode(JSON.stringify(hello)), 4401);
    assert.equal(await closeCode("{oops"), 4400);
    assert.equal(await closeCode(), 4408);
    assert.match(wb.serve.stderr(), /refused a connection with a wrong token/);
    // The real token is in a 0600 file outside the workspace, and no process environment has it.
    const cfgs = bridgeConfigs(home.path);
    assert.equal(cfgs.length, 1);
    assert.equal(cfgs[0]?.mode, 0o600);
    assert.ok(!cfgs[0]?.path.startsWith(ws.path));
    const token = cfgs[0]?.token as string;
    for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
      let env = "";
      try {
        env = readFileSync(`/proc/${pid}/environ`, "latin1");
      } catch {
        continue;
      }
      assert.ok(!env.includes(token), `process ${pid} has the bridge token in its environment`);
    }
    assert.ok(!wb.serve.stderr().includes(token), "the token is never logged");
  });

  it("planted secrets reach no process but ccb itself: the runtime, a workbench terminal, Chromium", async () => {
    const values = Object.values(planted);
    const env = (pid: string) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, "latin1");
      } catch {
        return "";
      }
    };
    const ccbPid = String(wb.serve.child.pid);
    assert.equal(
      values.filter((v) => env(ccbPid).includes(v)).length,
      values.length,
      "control: planted in ccb's own environment",
    );
    await wb.ok("vscode_execute_command", { command: "workbench.action.terminal.new" });
    const pids = () => readdirSync("/proc").filter((p) => /^\d+$/.test(p));
    await eventually(
      "a workbench (VS Code) terminal runs",
      async () => (pids().some((p) => env(p).includes("TERM_PROGRAM=vscode")) ? true : undefined),
      60_000,
    );
    const leaks = pids().filter((p) => p !== ccbPid && values.some((v) => env(p).includes(v)));
    assert.deepEqual(
      leaks.map((p) => `${p} ${readFileSync(`/proc/${p}/cmdline`, "latin1").replace(/\0/g, " ")}`),
      [],
    );
  });

  it("as root with defaults: the headless client runs unprivileged with its sandbox on, and the bridge is live", async () => {
    const m = /headless client: Chromium (\d+) \(uid (\d+), sandbox (on|OFF)\)/.exec(wb.serve.stderr());
    assert.ok(m, "the headless client started");
    const pid = Number(m[1]);
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
    assert.equal(uid, Number(m[2]));
    if (process.getuid?.() === 0) assert.notEqual(uid, 0, "Chromium does not run as root");
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    assert.ok(!cmdline.includes("--no-sandbox"), "the sandbox is on");
    assert.ok(
      cmdline.includes("--remote-debugging-pipe") && !cmdline.some((a) => a.startsWith("--remote-debugging-port")),
      "DevTools over a pipe, no port",
    );
    assert.equal(
      ((await (await fetch(`${wb.serve.base}/healthz`)).json()) as { bridge: { connected: boolean } }).bridge.connected,
      true,
    );
    assert.ok(!(await wb.call("editor_state")).isError);
  });

  it("two tabs for 30 s: one serves, at most one change, every call answered", { timeout: 400_000 }, async () => {
    const url = ((await wb.ok("vscode_open"))._meta?.["ccb/workbench"] as { url: string }).url;
    const connectedBefore = wb.countLog(/bridge: extension host \d+ connected/);
    const servesAtStart = wb.countLog(/bridge: extension host \d+ serves/);
    const second = await startHeadlessClient({ url, log: silentLogger });
    try {
      await wb.waitLog(() => wb.countLog(/bridge: extension host \d+ connected/) > connectedBefore, 300_000);
      const end = Date.now() + 30_000;
      let calls = 0;
      while (Date.now() < end) {
        await wb.ok("editor_state");
        calls++;
      }
      const switches = wb.countLog(/bridge: extension host \d+ serves/) - servesAtStart;
      assert.ok(switches <= 1, `the serving host changed ${switches} times in 30 s`);
      assert.ok(calls > 0);
      assert.equal(
        ((await (await fetch(`${wb.serve.base}/healthz`)).json()) as { bridge: { connected: boolean } }).bridge
          .connected,
        true,
      );
    } finally {
      await second.close();
    }
    await eventually(
      "still served after the second tab left",
      async () => ((await wb.call("editor_state")).isError ? undefined : true),
      60_000,
    );
  });

  // A person's tab: real Chromium, opened like a foreground tab (visible, focused). Headless
  // Chromium cannot show a window here; every headless page is visible and focused unless it says
  // otherwise, which is what ccb's own client does (Page Visibility "hidden", no focus). So this
  // page is what a person's visible tab is to the extension host, and ccb's client what a hidden one is.
  it("a person's visible tab serves within seconds while the headless tab is open; the headless serves again after it closes", {
    timeout: 400_000,
  }, async () => {
    const url = ((await wb.ok("vscode_open"))._meta?.["ccb/workbench"] as { url: string }).url;
    const before = wb.countLog(/bridge: extension host \d+ connected/);
    const person = await startHeadlessClient({ url, log: silentLogger, hidden: false });
    try {
      assert.equal(
        await person.evaluate("document.visibilityState"),
        "visible",
        "positive control: the person's page is visible",
      );
      await wb.waitLog(() => wb.countLog(/bridge: extension host \d+ connected/) > before, 300_000);
      const seq = Math.max(
        ...[...wb.serve.stderr().matchAll(/bridge: extension host (\d+) connected/g)].map((x) => Number(x[1])),
      );
      // "Within seconds" of its extension host connecting: the role moves with the hello.
      await wb.waitLog(new RegExp(`bridge: extension host ${seq} serves`), 10_000);
      await wb.ok("editor_open", { path: "src/lib.ts" });
      await eventually(
        "the file shows in the person's tab",
        async () => (String(await person.evaluate("document.title")).includes("lib.ts") ? true : undefined),
        30_000,
      );
    } finally {
      await person.close();
    }
    await eventually(
      "the headless tab serves again",
      async () => ((await wb.call("editor_state")).isError ? undefined : true),
      60_000,
    );
  });

  it("stopping serve stops the workbench and removes its state folder", async () => {
    const stateBase = join(home.path, "state/ccb/workbench");
    assert.equal(readdirSync(stateBase).length, 1);
    await wb.stop();
    assert.deepEqual(readdirSync(stateBase), []);
    assert.ok(existsSync(ws.path));
  });
});
