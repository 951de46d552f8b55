import assert from "node:assert/strict";
import { type ChildProcess, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import WebSocket from "ws";
import { silentLogger } from "../../src/core/log.ts";
import { pidAlive } from "../../src/core/pid.ts";
import { isAlive } from "../../src/core/terminals/process-tree.ts";
import { type Chromium, launchChromium } from "../../src/platform/chromium.ts";
import { ClientHandshake } from "../../src/workbench/share/handshake.ts";
import type { ShareRecord } from "../../src/workbench/share/record.ts";
import { fetchStatus, shareLink } from "../../src/workbench/share/status.ts";
import { AgentHarness, tempDataDir } from "../helpers/acp-harness.ts";
import { lastToolResults, toolThenText } from "../helpers/acp-scripts.ts";
import { type Artifacts, artifactSource, keepArtifacts, stateLogs } from "../helpers/artifacts.ts";
import { runCcb, spawnCcb } from "../helpers/cli.ts";
import { startFakeAnthropic } from "../helpers/fake-anthropic.ts";
import { IdeClient, textsOf } from "../helpers/ide-client.ts";
import { OtherAccount } from "../helpers/other-account.ts";
import { codeServerArgs } from "../helpers/peers.ts";
import { exitOf, Output } from "../helpers/proc-output.ts";
import { cleanEnv, spawnStdioPeer } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { backupsHolding, bridgeConfigs, eventually, type ToolResult, text } from "../helpers/workbench.ts";

/**
 * One workbench per workspace, shared by every ccb front end: the real CLI from dist/ (`ccb ide`,
 * then `ccb serve --stdio` twice, spoken to with the MCP SDK Client and the IDE protocol client),
 * real code-server with the bridge extension, real headless Chromium. Processes are counted from
 * /proc: a runtime is a process group leader whose command line names this test's state folder,
 * a headless Chromium a browser process (no --type=) whose profile is in this test's TMPDIR.
 */
const ws = tmpdirFixture({ prefix: "ccb-shared-ws-" });
const home = tmpdirFixture({ prefix: "ccb-shared-home-" });
let other: OtherAccount;
const tmp = join(home.path, "tmp");
const env = () =>
  cleanEnv({
    HOME: home.path,
    XDG_STATE_HOME: join(home.path, "state"),
    XDG_CACHE_HOME: join(home.path, "cache"),
    XDG_CONFIG_HOME: join(home.path, "config"),
    XDG_DATA_HOME: join(home.path, "data"),
    CLAUDE_CONFIG_DIR: join(home.path, "claude"),
    TMPDIR: tmp,
    CCB_WORKBENCH_GRACE: String(GRACE_S),
  });
/** How long the workbench host stays after its last front end left (the default is 600 s). */
const GRACE_S = 15;
const recordsDir = join(home.path, "state/ccb/workbenches");

function records(): string[] {
  return existsSync(recordsDir) ? readdirSync(recordsDir).filter((n) => /^[0-9a-f]{32}\.json$/.test(n)) : [];
}
function record(): { pid: number; secret: string; gatewayUrl: string; frontEnd: string; instance: string } {
  const [name] = records();
  assert.ok(name, "a discovery record is published");
  return JSON.parse(readFileSync(join(recordsDir, name), "utf8"));
}

/** The containment marker of ccb process `pid`: the argument of its supervisor (src/platform/supervisor.ts), a child of it. */
function scopeMarkerOf(pid: number): string | undefined {
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) !== pid) continue;
      const argv = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      if (argv.includes("ccb-supervisor")) return argv.find((a) => a.startsWith("CCB_SCOPE_"));
    } catch {
      // gone
    }
  }
  return undefined;
}

/** The runtimes and headless Chromiums of this test, from /proc. */
function processes(): { runtimes: number[]; chromiums: number[] } {
  const runtimes: number[] = [];
  const chromiums: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let cmd = "";
    let stat = "";
    try {
      cmd = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").join(" ");
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue;
    }
    const pgrp = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
    const pid = Number(name);
    if (cmd.includes(`${home.path}/state/ccb/workbench/`) && pgrp === pid && !cmd.startsWith("/bin/sh"))
      runtimes.push(pid);
    if (cmd.includes(`--user-data-dir=${tmp}/ccb-chromium-`) && !cmd.includes("--type=")) chromiums.push(pid);
  }
  return { runtimes, chromiums };
}

interface Serve {
  client: Client;
  transport: StdioClientTransport;
  pid: number;
  stderr: () => string;
  call(name: string, args?: Record<string, unknown>): Promise<ToolResult>;
}

async function startServe(extra: string[] = []): Promise<Serve> {
  const peer = await spawnStdioPeer(
    ["serve", "--stdio", "--workspace", ws.path, ...codeServerArgs(), "--log-level", "debug", ...extra],
    env(),
  );
  return {
    ...peer,
    call: async (name, a = {}) =>
      (await peer.client.callTool({ name, arguments: a }, undefined, { timeout: 120_000 })) as ToolResult,
  };
}

/** editor_state answers (the bridge serves through whoever owns the workbench). */
const editorLive = (s: Serve) =>
  eventually(
    `editor_state of serve ${s.pid}`,
    async () => {
      const r = await s.call("editor_state");
      return r.isError ? undefined : r;
    },
    400_000,
  );

/** A WebSocket upgrade to the attach route: the HTTP status it gets (101 when accepted). */
function upgrade(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = request({
      host: u.hostname,
      port: u.port,
      path: u.pathname,
      headers: {
        connection: "Upgrade",
        upgrade: "websocket",
        "sec-websocket-version": "13",
        "sec-websocket-key": randomBytes(16).toString("base64"),
        ...headers,
      },
    });
    req.on("upgrade", (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

/** A plain GET (no redirects followed): status and body. */
function get(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString("utf8")));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

let ide: { child: ChildProcess; out: Output; err: Output } | undefined;
let ideClient: IdeClient | undefined;
const serves: Serve[] = [];
/** A person's tab on the shared workbench (a real Chromium page). */
let person: Chromium | undefined;

// A failed test keeps the front ends' logs, the host's and the runtime's, and the person's screen.
keepArtifacts(import.meta.url);
artifactSource("ccb", () => ({
  ...(ide ? { "ide.stdout.log": ide.out.text, "ide.stderr.log": ide.err.text } : {}),
  ...Object.fromEntries(serves.map((s, i) => [`serve-${i}.stderr.log`, s.stderr()])),
  ...stateLogs(join(home.path, "state")),
}));
artifactSource("person-page", async (): Promise<Artifacts> => {
  if (!person) return {};
  const shot = (await person.page.send("Page.captureScreenshot", { format: "png" })) as { data: string };
  return { "screenshot.png": Buffer.from(shot.data, "base64") };
});

async function evaluate(c: Chromium, expression: string): Promise<unknown> {
  const r = (await c.page.send("Runtime.evaluate", { expression, returnByValue: true })) as {
    result?: { value?: unknown };
  };
  return r.result?.value;
}

before(() => {
  for (const d of ["state", "cache", "config", "data", "claude", "tmp"])
    mkdirSync(join(home.path, d), { recursive: true });
  // Chromium runs as an unprivileged account when ccb is root: it must reach its profile in TMPDIR.
  chmodSync(home.path, 0o711);
  chmodSync(tmp, 0o711);
  writeFileSync(join(ws.path, "a.ts"), "export const a: number = 1;\n");
  // A person who saves by hand (auto save off, VS Code's desktop default): unsaved text lives in the
  // workbench only. Plain text files are saved by VS Code's auto save, for the auto-save-on case.
  mkdirSync(join(ws.path, ".vscode"));
  writeFileSync(
    join(ws.path, ".vscode/settings.json"),
    JSON.stringify({
      "files.autoSave": "off",
      "[plaintext]": { "files.autoSave": "afterDelay" },
      "files.autoSaveDelay": 300,
    }),
  );
  writeFileSync(join(ws.path, "draft.md"), "# Draft\n");
  writeFileSync(join(ws.path, "notes.txt"), "notes\n");
  other = OtherAccount.create("ccbshare");
});

after(async () => {
  await person?.close().catch(() => undefined);
  await ideClient?.close().catch(() => undefined);
  for (const s of serves) await s.client.close().catch(() => undefined);
  if (ide && ide.child.exitCode === null && ide.child.signalCode === null) {
    ide.child.kill("SIGKILL");
    await exitOf(ide.child);
  }
  other?.remove();
  ws.cleanup();
  home.cleanup();
});

describe("one workbench shared by ccb ide and ccb serve", { timeout: 1_500_000 }, () => {
  it("ccb ide starts the workbench and publishes a 0600 record; ccb serve --stdio attaches: one runtime, one headless Chromium", async () => {
    const child = spawnCcb(["ide", "--workspace", ws.path, ...codeServerArgs(), "--log-level", "debug"], {
      env: env(),
    });
    ide = { child, out: new Output(child.stdout), err: new Output(child.stderr) };
    await ide.out.waitFor(
      /Workbench \(one-time link\) \(in the workbench host, pid \d+[^)]*\): http:\/\/127\.0\.0\.1:\d+\//,
      400_000,
    );
    const lockFile = (await ide.err.waitFor(/lock file (\S+\.lock)/))[1] as string;
    const lock = JSON.parse(readFileSync(lockFile, "utf8"));
    ideClient = await IdeClient.connect(Number(/(\d+)\.lock$/.exec(lockFile)?.[1]), lock.authToken);
    await ideClient.handshake();

    const rec = record();
    assert.equal(rec.frontEnd, "host", "the workbench runs in a host process of its own");
    assert.notEqual(rec.pid, child.pid);
    assert.match(ide.err.text, new RegExp(`started the workbench host \\(pid ${rec.pid}\\)`));
    assert.match(ide.err.text, new RegExp(`share: attached to the workbench of pid ${rec.pid} \\(host\\)`));
    // Its own session (a hangup or group kill of ide's terminal misses it), outside ide's containment scope.
    const sid = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ")[3]);
    assert.equal(sid(rec.pid), rec.pid, "the host leads its own session");
    const ideMarker = scopeMarkerOf(child.pid as number);
    const hostMarker = scopeMarkerOf(rec.pid);
    assert.ok(ideMarker && hostMarker && ideMarker !== hostMarker, "each has a containment scope of its own");
    const environ = (pid: number) => readFileSync(`/proc/${pid}/environ`, "latin1").split("\0");
    assert.ok(!environ(rec.pid).some((e) => e.startsWith(`${ideMarker}=`)), "the host is not in ide's scope");
    const runtime = processes().runtimes[0] as number;
    assert.ok(
      environ(runtime).some((e) => e.startsWith(`${hostMarker}=`)),
      "positive control: the runtime is in the host's",
    );
    assert.ok(!environ(runtime).some((e) => e.startsWith(`${ideMarker}=`)));
    assert.equal(statSync(join(recordsDir, `${records()[0]}`)).mode & 0o777, 0o600);
    assert.equal(statSync(recordsDir).mode & 0o777, 0o700);

    const serve = await startServe();
    serves.push(serve);
    await editorLive(serve);
    assert.match(serve.stderr(), new RegExp(`share: attached to the workbench of pid ${rec.pid} \\(host\\)`));
    assert.doesNotMatch(
      serve.stderr(),
      /started the workbench host|started by this serve/,
      "serve started no workbench of its own",
    );
    // it names where the workbench runs and gives the App's link there (the MCP host's, a person's)
    const announced = new RegExp(
      `workbench \\(code-server\\) running in the workbench host \\(pid ${rec.pid}\\); open http://127\\.0\\.0\\.1:\\d+/app\\?`,
    );
    await eventually("serve announced the workbench host and the App's link", () =>
      announced.test(serve.stderr()) ? true : undefined,
    );
    const p = processes();
    assert.equal(p.runtimes.length, 1, `one runtime: ${JSON.stringify(p)}`);
    assert.equal(p.chromiums.length, 1, `one headless Chromium: ${JSON.stringify(p)}`);
    assert.equal(records().length, 1);
    assert.doesNotMatch(
      serve.stderr() + ide.err.text,
      new RegExp(rec.secret),
      "the attach secret never reaches the logs",
    );
  });

  it("a file opened through the IDE socket (openFile) appears in serve's editor_state", async () => {
    const serve = serves[0] as Serve;
    const opened = await ideClient!.call("openFile", { filePath: join(ws.path, "a.ts"), makeFrontmost: true });
    assert.notEqual(opened.isError, true, textsOf(opened).join("\n"));
    const st = await eventually(
      "a.ts active in serve's editor_state",
      async () => {
        const r = await serve.call("editor_state");
        return (r.structuredContent as { active?: { path: string } | null } | undefined)?.active?.path === "a.ts"
          ? r
          : undefined;
      },
      60_000,
    );
    assert.match(text(st), /a\.ts/);
  });

  it("an attached serve's vscode_open gives the MCP host a working one-time link, a fresh one per call", async () => {
    const serve = serves[0] as Serve;
    const links: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await serve.call("vscode_open");
      assert.notEqual(r.isError, true, text(r));
      links.push(String((r._meta?.["ccb/workbench"] as { url?: string } | undefined)?.url ?? ""));
    }
    for (const l of links) assert.match(l, /^http:\/\/127\.0\.0\.1:\d+\/ide\/[A-Za-z0-9_-]{32,}\/.*[?&]ccb_ott=/);
    assert.equal(new Set(links).size, 3, "each call a fresh link");
    // The link opens the workbench once (302 with the cookie), then is spent.
    const first = await get(links[0] as string, {});
    assert.equal(first.status, 302);
    assert.equal((await get(links[0] as string, {})).status, 401);
  });

  it("terminals are the workbench's: one serve's terminal runs under the host, shows in the panel, and the other serve writes and reads it; it dies with the serve that started it", async () => {
    const starter = await startServe();
    try {
      await eventually("the second serve attached", async () =>
        /share: attached to the workbench/.test(starter.stderr()) ? true : undefined,
      );
      const created = await starter.call("terminal_create", { command: "/bin/sh", title: "shared-term" });
      assert.notEqual(created.isError, true, text(created));
      const info = (created.structuredContent as { terminal: { id: string; pid: number } }).terminal;
      // its process is the host's child, not the serve's that asked for it
      const ppid = Number(readFileSync(`/proc/${info.pid}/stat`, "utf8").split(") ")[1]?.split(" ")[1]);
      assert.equal(ppid, record().pid, "the terminal runs under the workbench host");
      const other = serves[0] as Serve;
      const listed = await other.call("terminal_list");
      const terminals = (listed.structuredContent as { terminals: Array<{ id: string; title: string }> }).terminals;
      assert.ok(
        terminals.some((t) => t.id === info.id && t.title === "shared-term"),
        `the other serve lists it: ${text(listed)}`,
      );
      const shown = await eventually(
        "the terminal shown in the workbench's panel",
        async () => {
          const r = await other.call("vscode_execute_command", { command: "ccb.terminals.list" });
          const list = (r.structuredContent as { result?: Array<{ name: string; coreId?: string }> }).result ?? [];
          return list.find((t) => t.coreId === info.id);
        },
        60_000,
      );
      assert.match(shown.name, /shared-term/);
      const wrote = await other.call("terminal_write", { id: info.id, data: "echo shared-$((6*7))\n" });
      assert.notEqual(wrote.isError, true, text(wrote));
      await eventually("the write's output, read through the first serve", async () => {
        const r = await other.call("terminal_read", { id: info.id, view: "output", offset: 0, waitMs: 2000 });
        return /shared-42/.test(text(r)) ? true : undefined;
      });
      const read = await starter.call("terminal_read", { id: info.id, view: "output", offset: 0 });
      assert.match(text(read), /shared-42/, "the starter reads the same terminal");
      // the host's secrets (its bridge token, which no front end ever saw) are masked in what it relays
      const [config] = bridgeConfigs(home.path);
      assert.ok(config && config.token.length >= 32, "the host's bridge config is there");
      await other.call("terminal_write", { id: info.id, data: `cat '${config.path}'; echo; echo cat-done\n` });
      const catted = await eventually("the bridge config printed in the shared terminal", async () => {
        const r = text(await other.call("terminal_read", { id: info.id, view: "output", offset: 0, waitMs: 2000 }));
        return /cat-done\s*$/m.test(r) && /workspaceFolders/.test(r) ? r : undefined;
      });
      assert.ok(!catted.includes(config.token), "the host's bridge token is masked in relayed terminal output");
      // an id the owner never issued is refused over the relay as it is locally
      const unknown = await other.call("terminal_read", { id: "t999" });
      assert.equal(unknown.isError, true);
      assert.match(text(unknown), /TERMINAL_NOT_FOUND/);
    } finally {
      await starter.client.close().catch(() => undefined);
    }
    await eventually("the terminal killed when its serve left", async () => {
      const r = await (serves[0] as Serve).call("terminal_list");
      const list = (r.structuredContent as { terminals: Array<{ title: string; running: boolean }> }).terminals;
      const t = list.find((x) => x.title === "shared-term");
      return t && !t.running ? true : undefined;
    });
  });

  it("--no-share: a serve of the same folders runs a private workbench; the shared one and its record stay as they were", async () => {
    const rec = record();
    const own = await startServe(["--no-share", "--no-headless-client"]);
    try {
      await eventually(
        "the private workbench running",
        async () => (/workbench \(code-server\) running/.test(own.stderr()) ? true : undefined),
        400_000,
      );
      assert.doesNotMatch(own.stderr(), /share: attached/);
      assert.equal(processes().runtimes.length, 2, "its own runtime beside the shared one");
      assert.deepEqual(records().length, 1);
      assert.equal(record().instance, rec.instance, "the shared record is untouched");
    } finally {
      await own.client.close().catch(() => undefined);
    }
    await eventually("the private runtime gone", async () => (processes().runtimes.length === 1 ? true : undefined));
  });

  it("ccb workbench status and ccb ide --status list the workbench and who is attached (never the secret)", async () => {
    const rec = record();
    for (const args of [
      ["workbench", "status"],
      ["ide", "--status"],
    ]) {
      const r = await runCcb(args, { env: env() });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`workbench ${ws.path}\\s+code-server running`));
      assert.match(
        r.stdout,
        new RegExp(
          `owner\\s+host\\s+pid ${rec.pid}\\s+\\(started by ide; stops ${GRACE_S} s after the last front end leaves\\)`,
        ),
      );
      assert.match(r.stdout, new RegExp(`attached\\s+ide\\s+pid ${ide!.child.pid}`));
      assert.match(r.stdout, new RegExp(`attached\\s+serve\\s+pid ${serves[0]!.pid}`));
      assert.ok(!r.stdout.includes(rec.secret));
    }
  });

  it("ccb acp in the same workspace attaches too: still one runtime and one Chromium; an edit's type error comes back in its tool result", async () => {
    const api = await startFakeAnthropic({
      script: toolThenText((prompt) =>
        prompt === "break"
          ? [{ name: "edit", input: { path: "a.ts", old_string: "= 1;", new_string: '= "one";' } }]
          : undefined,
      ),
    });
    const data = tempDataDir();
    const agent = AgentHarness.start({
      apiUrl: api.url,
      dataDir: data.path,
      onPermission: (req) => {
        const o = req.options.find((x) => x.kind === "allow_once");
        assert.ok(o, "allow_once offered");
        return { outcome: { outcome: "selected", optionId: o.optionId } };
      },
      env: { ...(env() as Record<string, string>), CCB_LOG_LEVEL: "info" },
    });
    try {
      await agent.initialize();
      const { sessionId } = await agent.newSession(ws.path);
      await eventually(
        "ccb acp attached",
        () => (/share: attached to the workbench of pid \d+ \(host\)/.test(agent.stderr) ? true : undefined),
        400_000,
      );
      const p = processes();
      assert.equal(p.runtimes.length, 1, `one runtime with ide, serve and acp: ${JSON.stringify(p)}`);
      assert.equal(p.chromiums.length, 1, `one headless Chromium with ide, serve and acp: ${JSON.stringify(p)}`);
      assert.equal((await agent.prompt(sessionId, "break")).stopReason, "end_turn");
      const withResult = api.requests.find((r) => lastToolResults(r.body).length > 0);
      assert.ok(withResult, "the model received the edit's tool result");
      const content = lastToolResults(withResult.body)[0]?.content;
      const result = typeof content === "string" ? content : JSON.stringify(content);
      assert.match(result, /^Edited .*a\.ts/);
      assert.match(result, /a\.ts:1:\d+ error: Type 'string' is not assignable to type 'number'\./);
      // the same workbench shows the agent's edit to the other front ends
      const st = await (serves[0] as Serve).call("editor_state", { includeText: false });
      assert.match(text(st), /a\.ts/);
      assert.deepEqual(agent.strayStdout, []);
    } finally {
      await agent.close();
      await api.close();
      data.cleanup();
      writeFileSync(join(ws.path, "a.ts"), "export const a: number = 1;\n");
    }
  });

  it("the attach channel: only the owner's user, only by proving the secret (which never travels), no browser Origin, no foreign Host; relayed calls held to the contract and the workspace", async () => {
    const rec = record();
    const file = join(recordsDir, records()[0] as string);
    const attach = `${rec.gatewayUrl}/workbench/attach`;
    const host = new URL(rec.gatewayUrl).host;
    // The record: readable by its owner (positive control), not by another account.
    assert.equal(JSON.parse(readFileSync(file, "utf8")).secret, rec.secret);
    const cat = spawnSync("runuser", ["-u", other.name, "--", "cat", file], { encoding: "utf8" });
    assert.notEqual(cat.status, 0);
    assert.match(cat.stderr, /Permission denied/);
    // No route takes the secret as a bearer token any more: status and links are asked on the channel, after the proof.
    for (const route of ["/workbench/status", "/workbench/link"]) {
      const r = other.probe("self", {
        url: `${rec.gatewayUrl}${route}`,
        headers: { authorization: `Bearer ${rec.secret}` },
      });
      assert.equal(r.status, 404, `${route} is gone`);
    }
    // The upgrade itself needs no credential (the proof is in-band), but keeps the edge's rules.
    assert.equal(await upgrade(attach, { host }), 101, "positive control");
    assert.equal(await upgrade(attach, { host, origin: "http://evil.example" }), 403, "a browser Origin");
    assert.equal(await upgrade(attach, { host, origin: rec.gatewayUrl }), 403, "even the gateway's own origin");
    assert.equal(await upgrade(attach, { host: "evil.example" }), 403, "a foreign Host");
    // ccb workbench status and link ask over the channel: a fresh one-time link, usable once
    const printed = await runCcb(["workbench", "link", "--workspace", ws.path], { env: env() });
    assert.equal(printed.code, 0, printed.stderr);
    const url = printed.stdout.trim();
    assert.ok(url.startsWith(`${rec.gatewayUrl}/`), url);
    assert.ok((await get(url, {})).status < 400, "the link opens the workbench");
    assert.ok((await get(url, {})).status >= 400, "only once");
    /** A raw client of the channel: hello, then the proof this secret makes (or none), then `then`. */
    const client = async (secret: string | undefined) => {
      const sock = new WebSocket(attach);
      const frames: Array<{ type: string; id?: number; result?: unknown; error?: { code: string } }> = [];
      const hs = new ClientHandshake(secret ?? "x".repeat(43), rec.gatewayUrl, {
        frontEnd: "serve",
        pid: process.pid,
        purpose: "attach",
      });
      sock.on("message", (d) => {
        const f = JSON.parse(d.toString());
        frames.push(f);
        if (f.type !== "challenge") return;
        const step = hs.step(f);
        if (typeof step === "object") sock.send(JSON.stringify(step.send));
        else if (secret === undefined)
          sock.send(JSON.stringify({ type: "prove", proof: randomBytes(32).toString("base64url") }));
      });
      await new Promise((r) => sock.once("open", r));
      const closed = new Promise<number>((r) => sock.once("close", (code) => r(code)));
      return { sock, frames, closed, hello: () => sock.send(JSON.stringify(hs.hello())) };
    };
    // A connected socket that skips the hello is closed (nothing is relayed without one).
    const skip = await client(rec.secret);
    skip.sock.send(JSON.stringify({ type: "call", id: 1, method: "editor.state", params: {} }));
    assert.equal(await skip.closed, 4400);
    // One that cannot prove the secret gets the challenge and nothing else.
    const stranger = await client(undefined);
    stranger.hello();
    assert.equal(await stranger.closed, 4401);
    assert.deepEqual(
      stranger.frames.map((f) => f.type),
      ["challenge"],
    );
    // A peer that proves the secret still gets only the contract: the owner validates each relayed call.
    const peer = await client(rec.secret);
    peer.hello();
    const answer = async (id: number, method: string, params: unknown) => {
      peer.sock.send(JSON.stringify({ type: "call", id, method, params }));
      return eventually(`answer ${id}`, () => peer.frames.find((f) => f.type === "response" && f.id === id));
    };
    await eventually("welcomed", () => (peer.frames.some((f) => f.type === "welcome") ? true : undefined));
    assert.ok(Array.isArray((await answer(1, "terminals.list", {})).result), "positive control");
    assert.equal((await answer(2, "editor.state", { path: 5 })).error?.code, "INVALID_ARGUMENT");
    assert.equal((await answer(3, "fs.delete", { path: "/" })).error?.code, "INVALID_ARGUMENT");
    assert.equal((await answer(4, "terminals.create", { cwd: "/etc" })).error?.code, "PATH_OUTSIDE_WORKSPACE");
    assert.equal((await answer(5, "editor.open", { path: "/etc/passwd" })).error?.code, "PATH_OUTSIDE_WORKSPACE");
    peer.sock.close();
  });

  it("kill -9 of ccb ide while a person's tab holds unsaved text and a serve is mid-call: nothing moves, no call fails", async (t) => {
    const second = await startServe();
    serves.push(second);
    await editorLive(second);
    assert.match(second.stderr(), /share: attached to the workbench of pid \d+ \(host\)/);
    const before = processes();
    assert.equal(before.runtimes.length, 1);
    const recBefore = record();
    // A person's tab, opened from a fresh link as a person would (`ccb workbench link`).
    const link = await runCcb(["workbench", "link", "--workspace", ws.path], { env: env() });
    assert.equal(link.code, 0, link.stderr);
    person = await launchChromium({ url: link.stdout.trim(), log: silentLogger, width: 1280, height: 800 });
    await eventually("the person's workbench rendered", async () =>
      (await evaluate(person as Chromium, "Boolean(document.querySelector('.monaco-workbench'))")) ? true : undefined,
    );
    await evaluate(person, "window.__ccbMark = 1");
    // Its extension host serves (a focused person's window takes the role as it connects), so the
    // unsaved text below is typed into the person's window.
    await eventually(
      "the person's window answering",
      async () => {
        const st = await runCcb(["workbench", "status"], { env: env() });
        return /editor answers \(2 of 2 windows/.test(st.stdout) ? true : undefined;
      },
      120_000,
    );
    // Text typed and not saved (through the editor: an unsaved change in the person's window), backed up by it.
    const typed = await second.call("editor_apply_edits", {
      path: "draft.md",
      edits: [{ range: { start: { line: 2, column: 1 }, end: { line: 2, column: 1 } }, newText: "typed, not saved\n" }],
    });
    assert.notEqual(typed.isError, true, text(typed));
    assert.match(
      text(typed),
      /unsaved changes in the editor\.$/,
      "auto-save is off for markdown here: nothing says it will be written",
    );
    assert.equal(readFileSync(join(ws.path, "draft.md"), "utf8"), "# Draft\n", "not on disk");
    await eventually("the workbench backed the unsaved buffer up", () =>
      backupsHolding(join(home.path, "state/ccb/workbench-data"), "typed, not saved").length > 0 ? true : undefined,
    );
    // Auto save on (plain text): typed in the person's window, it reaches the disk (the positive control for after the kill).
    const autoSaved = async (line: string) => {
      const r = await second.call("editor_apply_edits", {
        path: "notes.txt",
        edits: [{ range: { start: { line: 2, column: 1 }, end: { line: 2, column: 1 } }, newText: `${line}\n` }],
      });
      assert.notEqual(r.isError, true, text(r));
      assert.match(
        text(r),
        /auto-save \(files\.autoSave: afterDelay\) writes to disk 300 ms after/,
        "the language's own setting",
      );
      await eventually(`auto save wrote "${line}" to the disk`, () =>
        readFileSync(join(ws.path, "notes.txt"), "utf8").includes(line) ? true : undefined,
      );
    };
    await autoSaved("auto-saved before");
    const unsaved = /Unsaved buffer draft\.md[^:]*:\n# Draft\ntyped, not saved\n/;
    const stBefore = text(await second.call("editor_state", { path: "draft.md" }));
    assert.match(stBefore, unsaved, "the editor holds the unsaved text before the kill");
    // Calls in flight on both serves while ccb ide dies: a terminal read that waits, and editor calls back to back.
    const term = await second.call("terminal_create", { command: "/bin/sh", title: "mid-call" });
    assert.notEqual(term.isError, true, text(term));
    const termId = (term.structuredContent as { terminal: { id: string } }).terminal.id;
    const midCall = second.call("terminal_read", { id: termId, view: "output", offset: 0, waitMs: 6000 });
    let calls = 0;
    const failures: string[] = [];
    let stop = false;
    const loop = (async () => {
      while (!stop) {
        for (const s of serves) {
          const r = await s.call("editor_state", { includeText: false });
          calls++;
          if (r.isError) failures.push(text(r));
        }
      }
    })();
    await new Promise((r) => setTimeout(r, 1000));
    ide!.child.kill("SIGKILL");
    await exitOf(ide!.child);
    await eventually("the host saw ccb ide leave", async () => {
      const st = await runCcb(["workbench", "status"], { env: env() });
      return new RegExp(`attached\\s+ide\\s+pid ${ide!.child.pid}`).test(st.stdout) ? undefined : st.stdout;
    });
    await new Promise((r) => setTimeout(r, 3000));
    stop = true;
    await loop;
    assert.ok(calls > 4, `calls were made across the kill (${calls})`);
    assert.deepEqual(failures, [], "no editor call failed while the first front end died");
    const mid = await midCall;
    assert.notEqual(mid.isError, true, text(mid));
    t.diagnostic(`${calls} editor calls across kill -9 of ccb ide, 0 failed`);
    assert.equal(record().instance, recBefore.instance, "the same host, the same record");
    assert.deepEqual(processes(), before, "the same runtime and headless Chromium");
    assert.doesNotMatch(second.stderr() + (serves[0] as Serve).stderr(), /taking over/);
    // The person's tab kept its page (no reload, no banner) and the unsaved text is where it was.
    assert.equal(await evaluate(person, "window.__ccbMark"), 1, "the person's tab did not reload");
    assert.equal(await evaluate(person, "Boolean(document.getElementById('ccb-gone'))"), false, "no 'stopped' banner");
    const st = await second.call("editor_state", { path: "draft.md" });
    const hostLog = () =>
      readdirSync(recordsDir)
        .filter((n) => n.endsWith(".host.log"))
        .map((n) => readFileSync(join(recordsDir, n), "utf8").slice(-5000))
        .join("\n");
    assert.match(text(st), unsaved, `the unsaved text is where it was; the host's log:\n${hostLog()}`);
    assert.ok(
      backupsHolding(join(home.path, "state/ccb/workbench-data"), "typed, not saved").length > 0,
      "and still backed up",
    );
    // With auto save on, what is typed after the front end died still reaches the disk.
    await autoSaved("auto-saved after ccb ide died");
    await second.call("terminal_kill", { id: termId });
  });

  it("kill -9 of the workbench host: a serve starts a new host on the same port, the other re-attaches; tools and the unsaved text come back", async (t) => {
    const second = serves[1] as Serve;
    const before = processes();
    const recBefore = record();
    // A terminal on the host (started by a serve): the host's containment ends it with the host.
    const term = await second.call("terminal_create", { command: "/bin/sh", title: "on-the-host" });
    assert.notEqual(term.isError, true, text(term));
    const termPid = (term.structuredContent as { terminal: { pid: number } }).terminal.pid;
    assert.ok(isAlive(termPid), "positive control: the terminal runs");
    const killedAt = performance.now();
    process.kill(recBefore.pid, "SIGKILL");
    // The person's tab is told at once (the gateway it talks to is gone), not after VS Code's 40 s of retrying.
    await eventually(
      "the person's tab says the workbench stopped",
      async () =>
        (await evaluate(person as Chromium, "Boolean(document.getElementById('ccb-gone'))")) ? true : undefined,
      60_000,
    );
    t.diagnostic(`the person's tab told ${Math.round(performance.now() - killedAt)} ms after kill -9 of the host`);
    for (const s of serves) await editorLive(s);
    t.diagnostic(
      `editor tools back on every serve ${Math.round(performance.now() - killedAt)} ms after kill -9 of the host`,
    );
    const rec = await eventually(
      "a new record",
      () => {
        const r = record();
        return r.pid !== recBefore.pid ? r : undefined;
      },
      60_000,
    );
    assert.equal(rec.frontEnd, "host");
    const starters = serves.filter((s) =>
      new RegExp(`started the workbench host \\(pid ${rec.pid}\\)`).test(s.stderr()),
    );
    assert.equal(starters.length, 1, "one serve started the new host");
    const after = await eventually(
      "the old runtime gone",
      () => {
        const p = processes();
        return p.runtimes.length === 1 && p.chromiums.length === 1 && !p.runtimes.includes(before.runtimes[0] as number)
          ? p
          : undefined;
      },
      60_000,
    );
    assert.equal(after.runtimes.length, 1);
    await eventually("the dead host's terminal ended with it", () => (isAlive(termPid) ? undefined : true), 30_000);
    const r = await runCcb(["workbench", "status"], { env: env() });
    assert.match(r.stdout, new RegExp(`owner\\s+host\\s+pid ${rec.pid}\\s+\\(started by serve;`));
    for (const s of serves) assert.match(r.stdout, new RegExp(`attached\\s+serve\\s+pid ${s.pid}`));
    // Both serves' MCP App asks the host to frame the new host's gateway.
    for (const s of serves) {
      const read = await s.client.readResource({ uri: "ui://ccb/workbench.html" });
      const meta = read.contents[0]?._meta as { ui?: { csp?: { frameDomains?: string[] } } } | undefined;
      assert.deepEqual(meta?.ui?.csp?.frameDomains, [new URL(rec.gatewayUrl).origin], `serve ${s.pid}'s App CSP`);
    }
    // A fresh link points to the new host's gateway.
    const link = await runCcb(["workbench", "link", "--workspace", ws.path], { env: env() });
    assert.equal(link.code, 0, link.stderr);
    assert.ok(link.stdout.trim().startsWith(`${rec.gatewayUrl}/`), link.stdout);
    const opened = await second.call("editor_open", { path: "a.ts" });
    assert.notEqual(opened.isError, true, text(opened));
    // Nothing typed is lost: the new host (same port, the kept user data) restores the unsaved buffer.
    assert.equal(
      new URL(rec.gatewayUrl).port,
      new URL(recBefore.gatewayUrl).port,
      "the new host listens where the old one did",
    );
    // Hot exit reopens the backed-up editor as an inactive tab, which VS Code resolves (from the
    // backup) when it is shown: open it, as the person clicking its tab would, then read it.
    await eventually(
      "the unsaved text back in the new workbench",
      async () => {
        await second.call("editor_open", { path: "draft.md" });
        const st = await second.call("editor_state", { path: "draft.md" });
        return /Unsaved buffer draft\.md[^:]*:\n# Draft\ntyped, not saved\n/.test(text(st)) ? true : undefined;
      },
      120_000,
    );
    t.diagnostic(`the unsaved buffer back ${Math.round(performance.now() - killedAt)} ms after kill -9 of the host`);
    assert.equal(readFileSync(join(ws.path, "draft.md"), "utf8"), "# Draft\n", "still the person's to save");
    await person?.close();
    person = undefined;
  });

  it("the last front end leaving: the host stays the grace period (a fresh link works), then stops: no runtime, no Chromium, no record", async (t) => {
    const host = record().pid;
    const [a, b] = serves as [Serve, Serve];
    await a.client.close();
    assert.equal(processes().runtimes.length, 1, "a front end leaving leaves the workbench running");
    await b.client.close();
    const leftAt = performance.now();
    // Asked in process, as `ccb workbench status` and `ccb workbench link` ask (the CLI's own output is
    // checked above): two CLI starts took longer than the grace at load 20-40, and the host had
    // stopped by then (a time bound on process starts, not on the host; ledger).
    const status = await fetchStatus(record() as unknown as ShareRecord);
    assert.equal(status?.owner.pid, host, "the host stays after the last front end");
    assert.deepEqual(status?.attached, [], "no front end is attached");
    const link = await shareLink([ws.path], env());
    assert.equal((await get(link, {})).status, 302, "a person still gets a link, and it opens the workbench");
    await eventually(
      "no runtime, no Chromium, no host left",
      () => {
        const p = processes();
        return p.runtimes.length === 0 && p.chromiums.length === 0 && !pidAlive(host) ? p : undefined;
      },
      (GRACE_S + 60) * 1000,
    );
    const stoppedMs = performance.now() - leftAt;
    t.diagnostic(`the host stopped ${Math.round(stoppedMs)} ms after the last front end left (grace ${GRACE_S} s)`);
    assert.ok(stoppedMs >= GRACE_S * 1000 - 1000, `not before the grace period (${Math.round(stoppedMs)} ms)`);
    assert.deepEqual(records(), []);
    const r = await runCcb(["workbench", "status"], { env: env() });
    assert.match(r.stdout, /No shared ccb workbench is running/);
  });
});
