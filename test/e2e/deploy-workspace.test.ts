import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { runCcb } from "../helpers/cli.ts";
import { codeServerArgs } from "../helpers/peers.ts";
import type { HttpServe } from "../helpers/serve.ts";
import { rawRequest } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { startWorkbenchServe } from "../helpers/workbench.ts";

/**
 * What a Kubernetes pod relies on: JSON log lines on stderr, /readyz following the editor bridge,
 * and a clean exit on SIGTERM well before terminationGracePeriodSeconds (30 s in the manifests)
 * ends in SIGKILL, leaving no process of the workspace behind.
 */

const GRACE_MS = 30_000;
const dirs: Array<{ cleanup(): void }> = [];
after(() => {
  for (const d of dirs) d.cleanup();
});

function sandbox(): { root: string; workspace: string; env: Record<string, string> } {
  const d = tmpdirFixture({ prefix: "ccb-deploy-" });
  dirs.push(d);
  const workspace = join(d.path, "workspace");
  for (const s of ["workspace", "home", "state", "cache", "config", "data", "tmp"])
    mkdirSync(join(d.path, s), { recursive: true });
  const env: Record<string, string> = {
    HOME: join(d.path, "home"),
    XDG_STATE_HOME: join(d.path, "state"),
    XDG_CACHE_HOME: join(d.path, "cache"),
    XDG_CONFIG_HOME: join(d.path, "config"),
    XDG_DATA_HOME: join(d.path, "data"),
    TMPDIR: join(d.path, "tmp"),
    CCB_LOG_FORMAT: "json",
    ...(process.getuid?.() === 0 ? { CCB_CHROMIUM_NO_SANDBOX: "1" } : {}),
    ...(process.env.CHROME_PATH ? { CHROME_PATH: process.env.CHROME_PATH } : {}),
  };
  return { root: d.path, workspace, env };
}

/** Every stderr line must be one JSON record with time, level and msg. */
function assertJsonLines(stderr: string): Array<{ time: string; level: string; msg: string; tag?: string }> {
  const lines = stderr.split("\n").filter((l) => l.length > 0);
  assert.ok(lines.length > 0, "some log lines");
  return lines.map((l) => {
    let rec: { time: string; level: string; msg: string; tag?: string };
    assert.doesNotThrow(() => (rec = JSON.parse(l)), `not a JSON line: ${l.slice(0, 300)}`);
    rec = JSON.parse(l);
    assert.ok(!Number.isNaN(Date.parse(rec.time)), l);
    assert.equal(typeof rec.level, "string", l);
    assert.equal(typeof rec.msg, "string", l);
    return rec;
  });
}

/** Pids of live processes whose command line or environment names `marker` (a unique temp path). */
function processesNaming(marker: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      if (/\) Z /.test(stat)) continue;
      const cmd = readFileSync(`/proc/${name}/cmdline`, "utf8");
      const env = readFileSync(`/proc/${name}/environ`, "utf8");
      if (cmd.includes(marker) || env.includes(marker)) out.push(Number(name));
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

/** Proportional memory (PSS: shared pages split between their users, MiB) and CPU time (s) of a set of processes. */
function usage(pids: number[]): { pssMiB: number; cpuSeconds: number } {
  const tick = 100; // USER_HZ on Linux
  let pssKiB = 0;
  let ticks = 0;
  for (const pid of pids) {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
      pssKiB += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // exited meanwhile
    }
  }
  return { pssMiB: Math.round(pssKiB / 1024), cpuSeconds: ticks / tick };
}

async function stopWithin(serve: HttpServe, ms: number): Promise<{ code: number | null; ms: number }> {
  const t0 = Date.now();
  const killer = setTimeout(() => serve.child.kill("SIGKILL"), ms);
  const code = await serve.stop();
  clearTimeout(killer);
  return { code, ms: Date.now() - t0 };
}

describe("ccb serve as a pod runs it", () => {
  test("--log-format json: every stderr line is a JSON record; /readyz is 503 with the reason while no bridge is live", async (t) => {
    const s = sandbox();
    const serve = await startWorkbenchServe(s.workspace, ["--no-workbench"], s.env);
    try {
      const ready = await rawRequest(`${serve.base}/readyz`);
      assert.equal(ready.status, 503);
      const body = JSON.parse(ready.body) as { ready: boolean; bridge: { connected: boolean; reason: string } };
      assert.equal(body.ready, false);
      assert.equal(body.bridge.connected, false);
      assert.match(body.bridge.reason, /workbench/i);
      assert.equal((await rawRequest(`${serve.base}/healthz`)).status, 200, "alive though not ready");
      const foreign = await rawRequest(`${serve.base}/readyz`, { headers: { host: "evil.example:80" } });
      assert.equal(foreign.status, 403, "/readyz keeps the Host check");
    } finally {
      const stopped = await stopWithin(serve, GRACE_MS);
      assert.equal(stopped.code, 0, serve.stderr());
      t.diagnostic(`SIGTERM to exit without a workbench: ${stopped.ms} ms`);
    }
    const recs = assertJsonLines(serve.stderr());
    assert.ok(
      recs.some((r) => /listening on http:\/\/127\.0\.0\.1:\d+\/mcp/.test(r.msg)),
      "the announcement is a record too",
    );
  });

  test("a bad --log-format stops startup with a JSON-free message naming the choices", async () => {
    const r = await runCcb(["serve", "--http", "--no-workbench", "--log-format", "xml"], {
      env: { ...process.env, CCB_LOG_FORMAT: "" },
    });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Unknown log format "xml"\. Use one of: text, json/);
  });

  test("fatal errors are JSON records under --log-format json", async () => {
    const s = sandbox();
    const r = await runCcb(["serve", "--http", "--no-workbench", "--host", "0.0.0.0", "--workspace", s.workspace], {
      env: { ...process.env, ...s.env },
    });
    assert.equal(r.code, 1);
    const recs = assertJsonLines(r.stderr);
    const fatal = recs.find((x) => x.level === "fatal");
    assert.ok(fatal, r.stderr);
    assert.match(fatal.msg, /Refusing to listen on 0\.0\.0\.0/);
  });

  test("with code-server and headless Chromium: /readyz turns 200 when the bridge is live; SIGTERM stops everything within the grace period", async (t) => {
    const s = sandbox();
    const serve = await startWorkbenchServe(s.workspace, [...codeServerArgs(), "--headless-client"], s.env);
    let peak = 0;
    try {
      const first = await rawRequest(`${serve.base}/readyz`);
      assert.ok(first.status === 503 || first.status === 200);
      const deadline = Date.now() + 240_000;
      let status = first.status;
      while (status !== 200) {
        if (Date.now() > deadline) throw new Error(`/readyz never became 200:\n${serve.stderr().slice(-3000)}`);
        if (serve.child.exitCode !== null) throw new Error(`ccb serve exited:\n${serve.stderr().slice(-3000)}`);
        peak = Math.max(peak, usage(processesNaming(s.root)).pssMiB);
        await new Promise((r) => setTimeout(r, 500));
        status = (await rawRequest(`${serve.base}/readyz`)).status;
      }
      const ready = JSON.parse((await rawRequest(`${serve.base}/readyz`)).body) as {
        ready: boolean;
        bridge: { connected: boolean };
      };
      assert.deepEqual([ready.ready, ready.bridge.connected], [true, true]);
      const pids = processesNaming(s.root);
      assert.ok(pids.length >= 3, "ccb, the runtime and Chromium are running");
      const atReady = usage(pids);
      t.diagnostic(
        `one workspace at ready: ${pids.length} processes, PSS ${atReady.pssMiB} MiB (peak while starting ${Math.max(peak, atReady.pssMiB)} MiB), CPU ${atReady.cpuSeconds.toFixed(1)} s to get ready`,
      );
    } finally {
      const stopped = await stopWithin(serve, GRACE_MS);
      t.diagnostic(`SIGTERM to exit with the workbench: ${stopped.ms} ms`);
      assert.equal(
        stopped.code,
        0,
        `exit code after SIGTERM (null = SIGKILL at the grace period):\n${serve.stderr().slice(-3000)}`,
      );
    }
    const left: number[] = [];
    for (let i = 0; i < 20; i++) {
      left.splice(0, left.length, ...processesNaming(s.root));
      if (left.length === 0) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.deepEqual(left, [], "no process of the workspace outlives ccb");
    assertJsonLines(serve.stderr());
  });
});
