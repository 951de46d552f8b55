import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { createLogging } from "../../cli/logging.ts";
import { silentLogger } from "../../src/core/log.ts";
import { artifactSource, saveArtifacts } from "./artifacts.ts";
import { claudeDirs, makeClaudeDirs, type PtyProcess, stopClaude } from "./claude-session.ts";
import { type ClaudeDiffs, claudeDiffs, type MainRequests, mainRequests, startClaudeOnIde } from "./claude-turns.ts";
import { type FakeAnthropic, type Reply, type Script, startFakeAnthropic } from "./fake-anthropic.ts";
import { IdeClient } from "./ide-client.ts";
import { startWorkbenchIde, type WorkbenchIde } from "./ide-workbench.ts";
import { openPersonWindow, type PersonPage, type PersonWindow } from "./person-page.ts";
import { connectHttp, type HttpServe, startHttpServe } from "./serve.ts";
import { gitInit, tmpdirFixture } from "./tmp.ts";
import { bootWorkbench, type Workbench, writeLaunchJson } from "./workbench.ts";

/**
 * One end-to-end fixture, set up by named options (after code-server's `test/e2e/baseFixture.ts`):
 * a test file (or a describe block) calls `e2e({...})` once, and gets what it asked for, booted in
 * one `before` and torn down in one `after` that always runs, last started first stopped, each step
 * whether or not the one before it threw:
 *
 * - `files` (and `git`, `launch`, `dirs`): a workspace under one temporary folder (`f.ws`), with
 *   claude's HOME and TMPDIR beside it (`f.home`, `f.tmp`) and any other folders a test names
 *   (`f.dir("outside")`, made now: a test may write into them at load time).
 * - `model`: the fake Messages API (`f.api`), scripted by the main request's number (`f.main`
 *   records them) or by a raw `Script`.
 * - `http`: `ccb serve --http` without a workbench (`f.http`), stopped with an exit 0.
 * - `workbench: "serve"`: `ccb serve --http` with code-server and its headless client
 *   (`bootWorkbench`: `f.wb`, its MCP client `f.wb.client`); `person: true` adds a person's window on
 *   the one-time `/app` link ccb printed, focused, its extension host serving (`f.window`, `f.person`).
 * - `workbench: "ide"`: ccb's IDE server over a private workbench with the person's window on it,
 *   in process (`startWorkbenchIde`: `f.ide`, `f.person`).
 * - `claude`: the real claude CLI on the IDE server, started when the test says so
 *   (`await f.startClaude()`), its diffs in order (`f.diffs`), its screen kept by a failed test.
 * - clients: more MCP clients on the serve (`f.serveClient(headers)`) and Claude Code IDE protocol
 *   clients on the IDE server (`f.ideClient()`), each closed at the teardown.
 *
 * A test that fails (every file keeps its artifacts: keep-failed.ts), and a set-up that fails, keep
 * what every live source holds (`artifacts.ts`). The teardown removes the temporary folder last.
 */
export interface E2eOptions {
  /** The temporary folder's prefix. */
  prefix?: string;
  /** The workspace's files, by path relative to it (a list of lines is joined with "\n"). */
  files?: Record<string, string | string[]>;
  /** The workspace is a git repository. */
  git?: boolean;
  /** The workspace's launch configurations (.vscode/launch.json). */
  launch?: unknown[];
  /** More temporary folders by name (`f.dir(name)`), made at once. */
  dirs?: string[];
  /**
   * The fake model: a reply for main request number `n` (side requests get "Fake title"; `f.main`
   * waits for request `n`), or `{ script }` for a raw script.
   */
  model?: ((n: number) => Reply) | { script: Script };
  /** A workbench: `ccb serve --http` (spawned) or `ccb ide`'s (in process). */
  workbench?: "serve" | "ide";
  /** `workbench: "serve"`: more arguments, environment, request headers, runtime arguments. */
  serve?: { args?: string[]; env?: Record<string, string>; headers?: Record<string, string>; runtimeArgs?: string[] };
  /** `ccb serve --http` without a workbench (`f.http`); its teardown asserts it exits 0 on SIGTERM. */
  http?: { args?: string[]; env?: Record<string, string> };
  /** `workbench: "serve"`: a person's window on the workbench (its extension host serves). */
  person?: boolean;
  /** The claude CLI on the IDE server (needs `model` and `workbench: "ide"`): its defaults. */
  claude?: { allowedTools?: string[]; permissionMode?: string };
  /** The `before` hook's bound. */
  setupTimeout?: number;
}

export interface E2e {
  /** The temporary folder everything lives in. */
  readonly root: string;
  /** The workspace. */
  readonly ws: string;
  /** The HOME of what runs (claude's; the serve's XDG folders). */
  readonly home: string;
  /** claude's TMPDIR. */
  readonly tmp: string;
  /** A path in the workspace. */
  path(rel: string): string;
  /** A workspace file's content on disk. */
  read(rel: string): string;
  /** One of the `dirs` named in the options. */
  dir(name: string): string;
  readonly api: FakeAnthropic;
  readonly main: MainRequests;
  /** `workbench: "serve"`. */
  readonly wb: Workbench;
  /** `http`. */
  readonly http: HttpServe;
  /** `workbench: "ide"`. */
  readonly ide: WorkbenchIde;
  readonly window: PersonWindow;
  readonly person: PersonPage;
  /** The claude started by `startClaude` (undefined before). */
  readonly claude: PtyProcess | undefined;
  readonly diffs: ClaudeDiffs;
  /** Start claude on the IDE server and wait until it has connected (once). */
  startClaude(o?: { allowedTools?: string[]; permissionMode?: string }): Promise<PtyProcess>;
  /** Another MCP client on the serve (`http`, else the workbench's), closed at the teardown. */
  serveClient(headers?: Record<string, string>): Promise<Client>;
  /** A Claude Code IDE protocol client on the IDE server, handshake done, closed at the teardown. */
  ideClient(): Promise<IdeClient>;
  /** Run `fn` at the teardown, before what the fixture started is stopped. */
  defer(fn: () => unknown): void;
}

function need<T>(v: T | undefined, what: string): T {
  if (v === undefined) throw new Error(`the e2e fixture has no ${what} (not asked for in its options, or not started)`);
  return v;
}

/** The one-time /app link `ccb serve` printed. */
const appLink = (stderr: string) => /open (http:\/\/127\.0\.0\.1:\d+\/app\?ccb_ott=[A-Za-z0-9_-]+)/.exec(stderr)?.[1];

export function e2e(o: E2eOptions = {}): E2e {
  const root = tmpdirFixture({ prefix: o.prefix ?? "ccb-e2e-" });
  const dirs = claudeDirs(root.path);
  makeClaudeDirs(dirs);
  if (o.git) gitInit(dirs.ws);
  for (const [p, body] of Object.entries(o.files ?? {})) {
    mkdirSync(join(dirs.ws, p, ".."), { recursive: true });
    writeFileSync(join(dirs.ws, p), Array.isArray(body) ? body.join("\n") : body);
  }
  if (o.launch) writeLaunchJson(dirs.ws, o.launch);
  const named = new Map<string, string>();
  for (const name of o.dirs ?? []) {
    const d = join(root.path, name);
    mkdirSync(d);
    named.set(name, d);
  }

  const main = mainRequests();
  let api: FakeAnthropic | undefined;
  let wb: Workbench | undefined;
  let http: HttpServe | undefined;
  let ide: WorkbenchIde | undefined;
  let window: PersonWindow | undefined;
  let claude: PtyProcess | undefined;
  let claudePid: number | undefined;
  let diffs: ClaudeDiffs | undefined;
  /** The teardown, last in first out. */
  const undo: Array<() => unknown> = [];

  before(
    async () => {
      try {
        if (o.model) {
          const m = o.model;
          api = await startFakeAnthropic({ script: typeof m === "function" ? main.answer(m) : m.script });
          const a = api;
          undo.push(() => a.close());
        }
        if (o.http) {
          http = await startHttpServe(dirs.ws, o.http.args ?? [], o.http.env ?? {});
          const h = http;
          undo.push(async () => assert.equal(await h.stop(), 0, "SIGTERM shuts the server down with exit 0"));
        }
        if (o.workbench === "serve") {
          const s = o.serve ?? {};
          wb = await bootWorkbench(dirs.ws, dirs.home, s.args ?? [], {
            ...(s.env ? { env: s.env } : {}),
            ...(s.headers ? { headers: s.headers } : {}),
            ...(s.runtimeArgs ? { runtimeArgs: s.runtimeArgs } : {}),
          });
          const w = wb;
          undo.push(() => w.stop());
          if (o.person) {
            const link = appLink(w.serve.stderr());
            assert.ok(link, "ccb printed a one-time /app link");
            const hosts = (text: string, what: "connected" | "serves") =>
              [...text.matchAll(new RegExp(`bridge: extension host (\\d+) ${what}`, "g"))].map((m) => Number(m[1]));
            const known = Math.max(0, ...hosts(w.serve.stderr(), "connected"));
            window = await openPersonWindow(link, silentLogger);
            const win = window;
            undo.push(() => win.chromium.close());
            // The person's window is focused: its extension host, one that connected after the window
            // opened, takes the serving role from the headless one. Not any new "serves" line: under
            // load the headless host misses a probe and serves again before the person's host exists.
            await w.waitLog((text) => hosts(text, "serves").some((n) => n > known), 300_000);
          }
        } else if (o.workbench === "ide") {
          const { log } = createLogging({ level: process.env.CCB_TEST_LOG ?? "warn" });
          ide = await startWorkbenchIde({
            workspace: dirs.ws,
            stateDir: join(root.path, "state"),
            lockDir: dirs.ideLocks,
            log,
          });
          const w = ide;
          undo.push(() => w.close());
          window = w.window;
          diffs = claudeDiffs(w.ide, () => claude);
          undo.push(artifactSource("claude", () => ({ "screen.txt": claude?.output ?? "(not started)" })));
        }
      } catch (err) {
        await saveArtifacts("before", err);
        throw err;
      }
    },
    { timeout: o.setupTimeout ?? 700_000 },
  );

  after(async () => {
    const errors: unknown[] = [];
    for (const fn of undo.reverse()) {
      try {
        await fn();
      } catch (err) {
        errors.push(err);
      }
    }
    root.cleanup();
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, "the e2e fixture's teardown");
  });

  return {
    root: root.path,
    ws: dirs.ws,
    home: dirs.home,
    tmp: dirs.ctmp,
    path: (rel) => join(dirs.ws, rel),
    read: (rel) => readFileSync(join(dirs.ws, rel), "utf8"),
    dir: (name) => need(named.get(name), `folder "${name}"`),
    get api() {
      return need(api, "fake model (model)");
    },
    main,
    get wb() {
      return need(wb, 'serve workbench (workbench: "serve")');
    },
    get http() {
      return need(http, "serve (http)");
    },
    get ide() {
      return need(ide, 'IDE workbench (workbench: "ide")');
    },
    get window() {
      return need(window, "person's window");
    },
    get person() {
      return need(window, "person's window").person;
    },
    get claude() {
      return claude;
    },
    get diffs() {
      return need(diffs, 'claude diffs (workbench: "ide")');
    },
    async startClaude(more = {}) {
      assert.equal(claude, undefined, "claude runs already");
      const w = need(ide, 'IDE workbench (workbench: "ide")');
      const started = await startClaudeOnIde(w.ide, {
        cwd: dirs.ws,
        home: dirs.home,
        tmp: dirs.ctmp,
        apiUrl: need(api, "fake model (model)").url,
        ...o.claude,
        ...more,
      });
      claude = started.claude;
      claudePid = started.pid;
      const c = claude;
      // stopped before the IDE server goes (the workbench's teardown is earlier in the list)
      undo.push(() => stopClaude(c, claudePid));
      return c;
    },
    async serveClient(headers) {
      const url = http?.url ?? need(wb, 'serve (http or workbench: "serve")').serve.url;
      const c = await connectHttp(url, headers);
      undo.push(() => c.close().catch(() => undefined));
      return c;
    },
    async ideClient() {
      const w = need(ide, 'IDE workbench (workbench: "ide")');
      const c = await IdeClient.connect(w.ide.port, w.ide.authToken);
      undo.push(() => c.close());
      await c.handshake();
      return c;
    },
    defer(fn) {
      undo.push(fn);
    },
  };
}
