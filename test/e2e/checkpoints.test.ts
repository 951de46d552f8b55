import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ccbCommand } from "../helpers/cli.ts";
import { cleanEnv, type HttpServe, spawnHttpServe } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

/*
 * Checkpoints across front ends, with real peers: two `ccb serve --stdio` processes driven by the MCP
 * SDK's client under different clientInfo names, and a third client over `ccb serve --http`, all on
 * one workspace and one store (three ccb processes). One change is made by a terminal command.
 */

interface Peer {
  client: Client;
  close(): Promise<void>;
}

async function stdioPeer(name: string, ws: string, env: Record<string, string>): Promise<Peer> {
  const { command, args } = ccbCommand(["serve", "--no-workbench", "--stdio", "--workspace", ws]);
  const transport = new StdioClientTransport({ command, args, env: cleanEnv(env), stderr: "pipe" });
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(transport);
  return { client, close: () => client.close() };
}

async function httpPeer(name: string, url: string): Promise<Peer> {
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return { client, close: () => client.close() };
}

async function call(p: Peer, name: string, args: Record<string, unknown>) {
  const r = (await p.client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    content: { text: string }[];
    structuredContent?: any;
  };
  return { ...r, text: r.content.map((c) => c.text).join("\n") };
}

async function ok(p: Peer, name: string, args: Record<string, unknown>) {
  const r = await call(p, name, args);
  assert.notEqual(r.isError, true, `${name}: ${r.text}`);
  return r;
}

/** Poll until `cond` holds (the effect of a command running in a terminal), bounded. */
async function until(cond: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 30_000;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe("checkpoints across MCP clients and processes", () => {
  const tmp = tmpdirFixture({ prefix: "ccb-ckpt-e2e-" });
  const ws = join(tmp.path, "ws");
  const outside = join(tmp.path, "outside");
  const state = join(tmp.path, "state");
  const env = { XDG_STATE_HOME: state, CCB_CHECKPOINT_MAX_FILE_BYTES: "4096" };
  let alpha: Peer;
  let beta: Peer;
  let gamma: Peer;
  let http: HttpServe;

  before(async () => {
    mkdirSync(ws);
    mkdirSync(outside);
    writeFileSync(join(outside, "secret.txt"), "OUTSIDE-SECRET\n");
    writeFileSync(join(ws, "shared.txt"), `${Array.from({ length: 30 }, (_, i) => `line ${i}`).join("\n")}\n`);
    alpha = await stdioPeer("alpha-host", ws, env);
    beta = await stdioPeer("beta-host", ws, env);
    http = await spawnHttpServe(["--no-workbench", "--http", "--port", "0", "--workspace", ws], env);
    gamma = await httpPeer("gamma-http", http.url);
  });
  after(async () => {
    await alpha?.close();
    await beta?.close();
    await gamma?.close();
    await http?.stop();
    tmp.cleanup();
  });

  it("attributes each change to its client, a terminal command's effects too; the store is 0700", async () => {
    await ok(alpha, "fs_write", { path: "alpha.txt", content: "from alpha\n" });
    const shared = readFileSync(join(ws, "shared.txt"), "utf8");
    await ok(alpha, "fs_write", { path: "shared.txt", content: shared.replace("line 3\n", "line 3 alpha\n") });
    await ok(beta, "fs_write", { path: "beta.txt", content: "from beta\n" });
    const now = readFileSync(join(ws, "shared.txt"), "utf8");
    await ok(beta, "fs_write", { path: "shared.txt", content: now.replace("line 25\n", "line 25 beta\n") });
    await ok(gamma, "terminal_create", {
      command: "sh",
      args: ["-c", "echo made by a command > cmd.txt"],
      name: "cmd",
    });
    await until(() => existsSync(join(ws, "cmd.txt")), "the command's file");
    const list = (await ok(beta, "checkpoint_list", {})).structuredContent.checkpoints as any[];
    const who = (f: string) => list.filter((c) => c.files.includes(f)).map((c) => `${c.frontEnd}:${c.client}`);
    assert.deepEqual(who("alpha.txt"), ["mcp:alpha-host"]);
    assert.deepEqual(who("beta.txt"), ["mcp:beta-host"]);
    assert.deepEqual(who("shared.txt").sort(), ["mcp:alpha-host", "mcp:beta-host"]);
    assert.deepEqual(who("cmd.txt"), ["mcp:gamma-http"]);
    const byAgent = (await ok(gamma, "checkpoint_list", { agent: "alpha-host" })).structuredContent.checkpoints;
    assert.deepEqual(byAgent.flatMap((c: any) => c.files).sort(), ["alpha.txt", "shared.txt"]);
    const d = await ok(alpha, "checkpoint_diff", { id: byAgent[byAgent.length - 1].id });
    assert.match(d.text, /\+from alpha/);
    const root = join(state, "ccb", "checkpoints");
    assert.equal(statSync(root).mode & 0o777, 0o700);
  });

  it("a path outside the roots and a file over the size limit are never recorded", async () => {
    const r = await call(alpha, "fs_write", { path: join(outside, "x.txt"), content: "no\n" });
    assert.equal(r.isError, true);
    assert.match(r.text, /PATH_OUTSIDE_WORKSPACE/);
    symlinkSync(outside, join(ws, "link-out"));
    await ok(alpha, "fs_write", { path: "big.txt", content: "x".repeat(5000) });
    await ok(alpha, "fs_write", { path: "small.txt", content: "small\n" });
    const list = (await ok(alpha, "checkpoint_list", { limit: 500 })).structuredContent.checkpoints as any[];
    const files = list.flatMap((c) => c.files);
    assert.ok(files.includes("small.txt"), "positive control: a small file is recorded");
    assert.ok(!files.includes("big.txt"));
    assert.ok(!files.some((f: string) => f.includes("secret")));
    for (const c of list) {
      const d = await ok(alpha, "checkpoint_diff", { id: c.id });
      assert.doesNotMatch(d.text, /OUTSIDE-SECRET/);
    }
  });

  it("undoing one client's changes restores exactly its files and keeps the others'; a same-line edit blocks it, naming the hunk", async () => {
    // The person edits alpha's line afterwards, by hand.
    const before = readFileSync(join(ws, "shared.txt"), "utf8");
    writeFileSync(join(ws, "shared.txt"), before.replace("line 3 alpha\n", "line 3 alpha, and the person\n"));
    const blocked = await call(beta, "checkpoint_restore", { agent: "alpha-host" });
    assert.equal(blocked.isError, true);
    assert.match(blocked.text, /shared\.txt was changed since on the same lines \(lines 4-4\)/);
    assert.match(readFileSync(join(ws, "shared.txt"), "utf8"), /line 3 alpha, and the person/, "nothing lost");
    assert.equal(readFileSync(join(ws, "alpha.txt"), "utf8"), "from alpha\n");
    // The person takes their edit back; now the undo goes through.
    writeFileSync(join(ws, "shared.txt"), before);
    const undo = await ok(beta, "checkpoint_restore", { agent: "alpha-host" });
    assert.equal(existsSync(join(ws, "alpha.txt")), false);
    assert.equal(existsSync(join(ws, "small.txt")), false);
    const after = readFileSync(join(ws, "shared.txt"), "utf8");
    assert.match(after, /^line 3\n/m);
    assert.match(after, /^line 25 beta\n/m, "beta's change on the same file is kept");
    assert.equal(readFileSync(join(ws, "beta.txt"), "utf8"), "from beta\n");
    assert.equal(readFileSync(join(ws, "cmd.txt"), "utf8"), "made by a command\n");
    // The undo is itself a checkpoint: undoing it brings alpha's changes back.
    const id = undo.structuredContent.recorded[0].id;
    await ok(gamma, "checkpoint_restore", { id });
    assert.equal(readFileSync(join(ws, "alpha.txt"), "utf8"), "from alpha\n");
    assert.match(readFileSync(join(ws, "shared.txt"), "utf8"), /^line 3 alpha\n/m);
  });

  it("records survive a restart", async () => {
    await alpha.close();
    alpha = await stdioPeer("alpha-host", ws, env);
    const list = (await ok(alpha, "checkpoint_list", { agent: "beta-host" })).structuredContent.checkpoints;
    assert.ok(list.some((c: any) => c.files.includes("beta.txt")));
  });
});
