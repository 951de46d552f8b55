import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { artifactSource, keepArtifacts, stateLogs } from "../helpers/artifacts.ts";
import { ccbCommand, spawnCcb } from "../helpers/cli.ts";
import { codeServerArgs } from "../helpers/peers.ts";
import { cleanEnv, waitExit } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { hostsStopped, type ToolResult, text } from "../helpers/workbench.ts";

/**
 * A host that connects the moment `ccb serve` answers (HTTP: the first 200 of /healthz; stdio: from
 * the process's start) must get the MCP App once the workbench is up, whatever the order: the
 * session exists before the workbench (its first vscode_open says "still starting"), then lists and
 * reads ui://ccb/workbench.html and sees vscode_open's _meta.ui. Ten runs per transport, each with a
 * fresh serve and real code-server. The serve publishes the folder's shared workbench (a host process
 * of its own, which stops once the serve left): each run waits for the last run's host to be gone, or
 * its serve would attach to a workbench already up (a busy machine saw "9 of 10").
 */
const APP_URI = "ui://ccb/workbench.html";
const RUNS = 10;
const ws = tmpdirFixture({ prefix: "ccb-app-early-ws-" });
const home = tmpdirFixture({ prefix: "ccb-app-early-home-" });
writeFileSync(join(ws.path, "hello.txt"), "hello\n");
keepArtifacts(import.meta.url);
/** The current run's ccb stderr: kept with the hosts' and runtime's logs when a test fails. */
let runLog = "";
artifactSource("ccb", () => ({ "stderr.log": runLog, ...stateLogs(join(home.path, "state")) }));
after(async () => {
  // The last runtime may still be exiting (Node writes its compile cache under home at exit).
  await home.cleanupAfterProcesses();
  ws.cleanup();
});

function env(): Record<string, string> {
  for (const d of ["state", "cache", "config", "data"]) mkdirSync(join(home.path, d), { recursive: true });
  return cleanEnv({
    HOME: home.path,
    XDG_STATE_HOME: join(home.path, "state"),
    XDG_CACHE_HOME: join(home.path, "cache"),
    XDG_CONFIG_HOME: join(home.path, "config"),
    XDG_DATA_HOME: join(home.path, "data"),
    // the host stops as soon as its serve left: the next run waits for that (hostsStopped)
    CCB_WORKBENCH_GRACE: "0",
  });
}

const runtimeArgs = () => [...codeServerArgs(), "--no-headless-client"];

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** What a host does after connecting: note whether the workbench was up, wait for it, then look for the App. */
async function checkApp(client: Client, origin: string | undefined): Promise<{ startedBefore: boolean }> {
  const tools = await client.listTools();
  const open = tools.tools.find((t) => t.name === "vscode_open");
  assert.deepEqual(
    (open?._meta as { ui?: unknown } | undefined)?.ui,
    { resourceUri: APP_URI },
    "vscode_open carries _meta.ui from the first tools/list",
  );
  const call = async () =>
    (await client.callTool({ name: "vscode_open", arguments: {} }, undefined, { timeout: 120_000 })) as ToolResult;
  let r = await call();
  const startedBefore = r.isError === true;
  if (startedBefore)
    assert.match(
      text(r),
      /still starting.*\n.*again in \d+ seconds/s,
      "vscode_open while starting says so and when to retry",
    );
  const deadline = Date.now() + 240_000;
  while (r.isError) {
    assert.match(text(r), /still starting/, `vscode_open fails only because the workbench starts: ${text(r)}`);
    assert.ok(Date.now() < deadline, "the workbench came up");
    await new Promise((res) => setTimeout(res, 500));
    r = await call();
  }
  assert.ok((r._meta?.["ccb/workbench"] as { url?: string } | undefined)?.url, "the workbench address in _meta");
  const listed = (await client.listResources()).resources;
  assert.deepEqual(
    listed.map((x) => x.uri),
    [APP_URI],
  );
  const read = await client.readResource({ uri: APP_URI });
  const c = read.contents[0] as unknown as {
    mimeType: string;
    text: string;
    _meta: { ui: { csp: { frameDomains: string[] } } };
  };
  assert.equal(c.mimeType, "text/html;profile=mcp-app");
  assert.match(c.text, /<html/i);
  assert.equal(c._meta.ui.csp.frameDomains.length, 1);
  if (origin) assert.deepEqual(c._meta.ui.csp.frameDomains, [origin]);
  return { startedBefore };
}

describe("the App reaches sessions created before the workbench is up", () => {
  it(`HTTP: a client connecting on the first /healthz answer, ${RUNS} of ${RUNS} runs`, async (t) => {
    let before = 0;
    for (let i = 0; i < RUNS; i++) {
      const port = await freePort();
      const child = spawnCcb(["serve", "--http", "--port", String(port), "--workspace", ws.path, ...runtimeArgs()], {
        env: env(),
      });
      let err = "";
      runLog = "";
      child.stderr?.setEncoding("utf8").on("data", (d: string) => {
        err += d;
        runLog += d;
      });
      const base = `http://127.0.0.1:${port}`;
      try {
        for (;;) {
          assert.equal(child.exitCode, null, `ccb serve exited:\n${err}`);
          const ok = await fetch(`${base}/healthz`).then(
            (res) => res.ok,
            () => false,
          );
          if (ok) break;
          await new Promise((res) => setTimeout(res, 2));
        }
        const client = new Client({ name: "early-http-host", version: "1.0.0" });
        await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
        const r = await checkApp(client, base);
        if (r.startedBefore) before++;
        await client.close();
      } finally {
        child.kill("SIGTERM");
        await waitExit(child);
        await hostsStopped(join(home.path, "state"));
      }
    }
    // Every run must reach the App (checkApp); whether its session came before the workbench was up
    // is a race the test cannot hold (CI: 9 of 10 once, when code-server came up in 0.47 s, before the
    // first tools/call): at least one run of the ten must have tested the early case.
    t.diagnostic(`${before} of ${RUNS} sessions were created before the workbench was up`);
    assert.ok(before >= 1, `a session created before the workbench was up, in at least one run (${before} of ${RUNS})`);
  });

  it(`stdio: a client connected from the process's start, ${RUNS} of ${RUNS} runs`, async (t) => {
    let before = 0;
    for (let i = 0; i < RUNS; i++) {
      const { command, args } = ccbCommand(["serve", "--stdio", "--workspace", ws.path, ...runtimeArgs()]);
      const transport = new StdioClientTransport({ command, args, env: env(), stderr: "pipe" });
      runLog = "";
      transport.stderr?.on("data", (d: Buffer) => {
        runLog += d.toString("utf8");
      });
      const client = new Client({ name: "early-stdio-host", version: "1.0.0" });
      await client.connect(transport);
      try {
        const r = await checkApp(client, undefined);
        if (r.startedBefore) before++;
      } finally {
        await client.close();
        await hostsStopped(join(home.path, "state"));
      }
    }
    // Every run must reach the App (checkApp); whether its session came before the workbench was up
    // is a race the test cannot hold (CI: 9 of 10 once, when code-server came up in 0.47 s, before the
    // first tools/call): at least one run of the ten must have tested the early case.
    t.diagnostic(`${before} of ${RUNS} sessions were created before the workbench was up`);
    assert.ok(before >= 1, `a session created before the workbench was up, in at least one run (${before} of ${RUNS})`);
  });
});
