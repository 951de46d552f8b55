import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { WebSocketServer } from "ws";
import { pidAlive } from "../../src/core/pid.ts";
import { shareKey } from "../../src/workbench/share/record.ts";
import { runCcb } from "../helpers/cli.ts";
import { cleanEnv, spawnStdioPeer } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { eventually } from "../helpers/workbench.ts";

/**
 * The discovery record's races and lifetime, with the real CLI (`ccb serve --stdio`, MCP SDK
 * Client) and a runtime that is not installed: the record, the lock and the attach channel work
 * the same whether the runtime starts or not (the workbench-shared test covers a real one).
 */
const home = tmpdirFixture({ prefix: "ccb-race-home-" });
const env = () =>
  cleanEnv({
    HOME: home.path,
    XDG_STATE_HOME: join(home.path, "state"),
    XDG_CACHE_HOME: join(home.path, "cache"),
    // the host stops as soon as its last front end left
    CCB_WORKBENCH_GRACE: "0",
  });
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

/** The one record (there must be one). */
function record(): { pid: number; frontEnd: string } {
  const [name] = records();
  assert.ok(name, "a record is published");
  return JSON.parse(readFileSync(join(recordsDir, name), "utf8"));
}

/** The host `pid` stopped (grace 0: once its last front end left) and its record is gone. */
async function hostGone(pid: number): Promise<void> {
  const logs = () =>
    readdirSync(recordsDir)
      .filter((n) => n.endsWith(".host.log"))
      .map((n) => readFileSync(join(recordsDir, n), "utf8"))
      .join("\n");
  await eventually(`host ${pid} stopped and its record removed; the host logs:\n${logs()}`, () =>
    !pidAlive(pid) && !records().some((n) => readFileSync(join(recordsDir, n), "utf8").includes(`"pid":${pid},`))
      ? true
      : undefined,
  );
}

after(() => home.cleanup());

describe("shared workbench: races, stale records, who shares", { timeout: 300_000 }, () => {
  it("two front ends starting at once for the same roots give one workbench: one host, both attached", async () => {
    const ws = tmpdirFixture({ prefix: "ccb-race-ws-" });
    try {
      const [a, b] = await Promise.all([serve(ws.path), serve(ws.path)]);
      assert.equal(records().length, 1);
      const rec = record();
      assert.equal(rec.frontEnd, "host", "the workbench runs in a host of its own");
      assert.ok(rec.pid !== a.pid && rec.pid !== b.pid, "neither front end holds it");
      const starters = [a, b].filter((p) =>
        new RegExp(`started the workbench host \\(pid ${rec.pid}\\)`).test(p.stderr()),
      );
      assert.equal(starters.length, 1, "exactly one of the two started the host");
      for (const p of [a, b])
        assert.match(p.stderr(), new RegExp(`share: attached to the workbench of pid ${rec.pid} \\(host\\)`));
      const st = await runCcb(["workbench", "status"], { env: env() });
      assert.match(st.stdout, new RegExp(`owner\\s+host\\s+pid ${rec.pid}\\s+\\(started by serve; stops 0 s after`));
      for (const p of [a, b]) assert.match(st.stdout, new RegExp(`attached\\s+serve\\s+pid ${p.pid}`));
      // Editor tools carry the host's reason (no runtime), not a second workbench's.
      const r = (await b.client.callTool({ name: "editor_state", arguments: {} })) as {
        isError?: boolean;
        content: Array<{ text?: string }>;
      };
      assert.equal(r.isError, true);
      assert.match(r.content[0]?.text ?? "", /BRIDGE_UNAVAILABLE.*ccb's workbench host \(pid \d+\) runs it/s);
      await a.client.close();
      assert.ok(pidAlive(rec.pid), "one front end leaving leaves the host");
      await b.client.close();
      await eventually("the host gone with its record after the last front end left (grace 0)", () =>
        records().length === 0 && !pidAlive(rec.pid) ? true : undefined,
      );
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
      const rec = record();
      assert.match(b.stderr(), new RegExp(`share: attached to the workbench of pid ${rec.pid} \\(host\\)`));
      assert.doesNotMatch(b.stderr(), /started the workbench host/);
      await b.client.close();
      await a.client.close();
      await hostGone(rec.pid);
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
      await hostGone(JSON.parse(stale).pid);
      // Put the record of the process that is gone back, as a kill -9 leaves it.
      mkdirSync(recordsDir, { recursive: true });
      writeFileSync(join(recordsDir, name), stale, { mode: 0o600 });
      const s = await runCcb(["workbench", "status"], { env: env() });
      assert.match(s.stdout, /stale record \(owner pid \d+ is gone\)/);
      const next = await serve(ws.path);
      assert.match(next.stderr(), /share: replacing the stale workbench record of pid \d+/);
      const replaced = JSON.parse(readFileSync(join(recordsDir, name), "utf8"));
      assert.notEqual(replaced.pid, JSON.parse(stale).pid);
      assert.match(next.stderr(), new RegExp(`started the workbench host \\(pid ${replaced.pid}\\)`));
      const other = await serve(ws2.path);
      assert.equal(records().length, 2, "another workspace, another workbench");
      assert.match(other.stderr(), /started the workbench host/);
      const hosts = records().map((n) => JSON.parse(readFileSync(join(recordsDir, n), "utf8")).pid as number);
      assert.equal(new Set(hosts).size, 2, "two hosts");
      await other.client.close();
      await next.client.close();
      for (const h of hosts) await hostGone(h);
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
      const host = record().pid;
      const b = await serve(ws.path, ["--render-mode", "stream"]);
      assert.doesNotMatch(b.stderr(), /share: attached|started the workbench host/);
      assert.equal(records().length, 1);
      const st = await runCcb(["workbench", "status"], { env: env() });
      assert.match(st.stdout, new RegExp(`attached\\s+serve\\s+pid ${a.pid}`), "positive control");
      assert.doesNotMatch(st.stdout, new RegExp(`attached\\s+serve\\s+pid ${b.pid}`));
      await b.client.close();
      await a.client.close();
      await hostGone(host);
    } finally {
      ws.cleanup();
    }
  });
});

describe("shared workbench: a gateway that cannot prove the secret", { timeout: 120_000 }, () => {
  it("a port squatter named by a record gets the hello and nothing else; serve starts its own workbench", async () => {
    const ws = tmpdirFixture({ prefix: "ccb-race-ws-" });
    const frames: Array<{ type: string }> = [];
    const upgrades: string[] = [];
    const fake = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    fake.on("connection", (s, req) => {
      upgrades.push(JSON.stringify(req.headers));
      s.on("message", (d) => {
        frames.push(JSON.parse(String(d)));
        s.send(JSON.stringify({ type: "challenge", nonce: "n".repeat(32), proof: "not-the-proof" }));
        s.send(JSON.stringify({ type: "welcome" }));
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
        version: 2,
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
      for (const h of upgrades) assert.ok(!h.includes(rec.secret) && !/authorization/i.test(h), `no secret in ${h}`);
      const host = JSON.parse(readFileSync(join(recordsDir, `${key}.json`), "utf8"));
      assert.equal(host.frontEnd, "host");
      assert.match(p.stderr(), new RegExp(`attached to the workbench of pid ${host.pid} \\(host\\)`));
      const r = (await p.client.callTool({ name: "editor_state", arguments: {} })) as {
        content: Array<{ text?: string }>;
      };
      assert.doesNotMatch(r.content[0]?.text ?? "", new RegExp(`pid ${process.pid}`), "not the squatter's");
      await p.client.close();
      await hostGone(host.pid);
    } finally {
      fake.close();
      ws.cleanup();
    }
  });
});
