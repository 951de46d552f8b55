import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { WebSocketServer } from "ws";
import { shareKey } from "../../src/workbench/share/record.ts";
import { runCcb } from "../helpers/cli.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { cleanEnv, spawnStdioPeer } from "./serve-helpers.ts";

/**
 * The discovery record's races and lifetime, with the real CLI (`ccb serve --stdio`, MCP SDK
 * Client) and a runtime that is not installed: the record, the lock and the attach channel work
 * the same whether the runtime starts or not (the workbench-shared test covers a real one).
 */
const home = tmpdirFixture({ prefix: "ccb-race-home-" });
const env = () =>
  cleanEnv({ HOME: home.path, XDG_STATE_HOME: join(home.path, "state"), XDG_CACHE_HOME: join(home.path, "cache") });
const recordsDir = join(home.path, "state/ccb/workbenches");
const records = () =>
  existsSync(recordsDir) ? readdirSync(recordsDir).filter((n) => /^[0-9a-f]{32}\.json$/.test(n)) : [];
const NO_RUNTIME = ["--runtime", "openvscode", "--runtime-root", "/nonexistent-runtime"];

interface Peer {
  client: Client;
  pid: number;
  stderr: () => string;
}

function serve(workspace: string, extra: string[] = []): Promise<Peer> {
  return spawnStdioPeer(
    ["serve", "--stdio", "--workspace", workspace, ...NO_RUNTIME, "--log-level", "debug", ...extra],
    env(),
  );
}

after(() => home.cleanup());

describe("shared workbench: races, stale records, who shares", { timeout: 300_000 }, () => {
  it("two front ends starting at once for the same roots give one workbench: one owner, one attached", async () => {
    const ws = tmpdirFixture({ prefix: "ccb-race-ws-" });
    try {
      const [a, b] = await Promise.all([serve(ws.path), serve(ws.path)]);
      assert.equal(records().length, 1);
      const rec = JSON.parse(readFileSync(join(recordsDir, records()[0] as string), "utf8"));
      const owner = [a, b].find((p) => p.pid === rec.pid);
      const other = [a, b].find((p) => p.pid !== rec.pid);
      assert.ok(owner && other, "one of the two owns the record");
      assert.match(other.stderr(), /share: attached to the workbench of pid \d+ \(serve\)/);
      assert.doesNotMatch(owner.stderr(), /share: attached/);
      const st = await runCcb(["workbench", "status"], { env: env() });
      assert.match(st.stdout, new RegExp(`owner\\s+serve\\s+pid ${owner.pid}`));
      assert.match(st.stdout, new RegExp(`attached\\s+serve\\s+pid ${other.pid}`));
      // The attached one's editor tools carry the owner's reason (no runtime), not a second workbench's.
      const r = (await other.client.callTool({ name: "editor_state", arguments: {} })) as {
        isError?: boolean;
        content: Array<{ text?: string }>;
      };
      assert.equal(r.isError, true);
      assert.match(r.content[0]?.text ?? "", /BRIDGE_UNAVAILABLE.*another ccb front end runs it/s);
      await other.client.close();
      await owner.client.close();
      assert.deepEqual(records(), [], "the owner removes its record when it leaves");
    } finally {
      ws.cleanup();
    }
  });

  it("roots are keyed by their real paths: a symlinked workspace attaches to the same workbench", async () => {
    const ws = tmpdirFixture({ prefix: "ccb-race-ws-" });
    const link = `${ws.path}-link`;
    symlinkSync(ws.path, link);
    try {
      const a = await serve(ws.path);
      const b = await serve(link);
      assert.equal(records().length, 1);
      assert.match(b.stderr(), /share: attached to the workbench of pid \d+/);
      await b.client.close();
      await a.client.close();
    } finally {
      spawnSync("rm", ["-f", link]);
      ws.cleanup();
    }
  });

  it("a stale record (owner gone, gateway closed) is replaced; a different workspace gets its own workbench", async () => {
    const ws = tmpdirFixture({ prefix: "ccb-race-ws-" });
    const ws2 = tmpdirFixture({ prefix: "ccb-race-ws2-" });
    try {
      const first = await serve(ws.path);
      const name = records()[0] as string;
      const stale = readFileSync(join(recordsDir, name), "utf8");
      await first.client.close();
      assert.deepEqual(records(), []);
      // Put the record of the process that is gone back, as a kill -9 leaves it.
      mkdirSync(recordsDir, { recursive: true });
      writeFileSync(join(recordsDir, name), stale, { mode: 0o600 });
      const s = await runCcb(["workbench", "status"], { env: env() });
      assert.match(s.stdout, /stale record \(owner pid \d+ is gone\)/);
      const next = await serve(ws.path);
      assert.match(next.stderr(), /share: replacing the stale workbench record of pid \d+/);
      assert.equal(JSON.parse(readFileSync(join(recordsDir, name), "utf8")).pid, next.pid);
      const other = await serve(ws2.path);
      assert.equal(records().length, 2, "another workspace, another workbench");
      assert.doesNotMatch(other.stderr(), /share: attached/);
      await other.client.close();
      await next.client.close();
      assert.deepEqual(records(), []);
      const none = await runCcb(["workbench", "status"], { env: env() });
      assert.match(none.stdout, /No shared ccb workbench is running/);
    } finally {
      ws.cleanup();
      ws2.cleanup();
    }
  });

  it("serve --render-mode stream keeps a workbench of its own (no record, attaches to nothing)", async () => {
    const ws = tmpdirFixture({ prefix: "ccb-race-ws-" });
    try {
      const a = await serve(ws.path);
      assert.equal(records().length, 1, "positive control: the default mode publishes");
      const b = await serve(ws.path, ["--render-mode", "stream"]);
      assert.doesNotMatch(b.stderr(), /share: attached/);
      assert.equal(records().length, 1);
      const st = await runCcb(["workbench", "status"], { env: env() });
      assert.doesNotMatch(st.stdout, /attached/);
      await b.client.close();
      await a.client.close();
    } finally {
      ws.cleanup();
    }
  });
});

describe("shared workbench: a gateway that cannot prove the secret", { timeout: 120_000 }, () => {
  it("a port squatter named by a record gets the hello and nothing else; serve starts its own workbench", async () => {
    const ws = tmpdirFixture({ prefix: "ccb-race-ws-" });
    const frames: Array<{ type: string }> = [];
    const fake = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    fake.on("connection", (s) => {
      s.on("message", (d) => {
        frames.push(JSON.parse(String(d)));
        s.send(JSON.stringify({ type: "welcome", proof: "not-the-proof" }));
        s.send(JSON.stringify({ type: "state", connected: true, reason: "", ready: true, runtime: "code-server" }));
      });
    });
    await new Promise((r) => fake.once("listening", r));
    const port = (fake.address() as AddressInfo).port;
    try {
      mkdirSync(recordsDir, { recursive: true, mode: 0o700 });
      const key = shareKey([ws.path]);
      // A live pid (this test's) and a gateway that answers: only the missing proof gives it away.
      const rec = {
        version: 1,
        instance: "f".repeat(24),
        pid: process.pid,
        frontEnd: "ide",
        roots: [ws.path],
        gatewayUrl: `http://127.0.0.1:${port}`,
        secret: "s".repeat(43),
        startedAt: Date.now(),
      };
      writeFileSync(join(recordsDir, `${key}.json`), JSON.stringify(rec), { mode: 0o600 });
      const p = await serve(ws.path);
      assert.match(p.stderr(), /did not prove it knows the secret; not attaching/);
      assert.match(p.stderr(), /replacing the stale workbench record/);
      assert.ok(frames.length > 0, "positive control: the squatter was reached");
      assert.deepEqual([...new Set(frames.map((f) => f.type))], ["hello"], "nothing but the hello reached it");
      assert.equal(JSON.parse(readFileSync(join(recordsDir, `${key}.json`), "utf8")).pid, p.pid);
      const r = (await p.client.callTool({ name: "editor_state", arguments: {} })) as {
        content: Array<{ text?: string }>;
      };
      assert.doesNotMatch(r.content[0]?.text ?? "", /another ccb front end runs it/);
      await p.client.close();
    } finally {
      fake.close();
      ws.cleanup();
    }
  });
});
