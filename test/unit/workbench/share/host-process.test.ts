import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { createCore } from "../../../../src/core/core.ts";
import { isCcbError } from "../../../../src/core/errors.ts";
import { silentLogger } from "../../../../src/core/log.ts";
import { hostArgs, hostEnv, hostGraceMs, runHost } from "../../../../src/workbench/share/host-process.ts";
import { readRecord, recordPath, shareKey } from "../../../../src/workbench/share/record.ts";
import { RemoteBridge } from "../../../../src/workbench/share/remote.ts";
import { fetchStatus } from "../../../../src/workbench/share/status.ts";
import { tmpdirFixture } from "../../../helpers/tmp.ts";

describe("the workbench host's settings", () => {
  it("CCB_WORKBENCH_GRACE is seconds (default 600); anything else is refused with the variable's name", () => {
    assert.equal(hostGraceMs(undefined), 600_000);
    assert.equal(hostGraceMs(""), 600_000);
    assert.equal(hostGraceMs("0"), 0);
    assert.equal(hostGraceMs("2.5"), 2500);
    for (const bad of ["-1", "ten", "Infinity"]) {
      assert.throws(
        () => hostGraceMs(bad),
        (e: unknown) => isCcbError(e) && e.code === "CONFIG_INVALID" && /CCB_WORKBENCH_GRACE/.test(e.message),
        bad,
      );
    }
  });

  it("its command line carries the roots and the runtime flags of the front end that starts it", () => {
    const args = hostArgs({
      roots: ["/a", "/b"],
      startedBy: "acp",
      options: { runtime: "code-server", runtimeRoot: "/rt", runtimeNode: "/n24", headlessClient: false },
      previousUrl: "http://127.0.0.1:4100",
    });
    assert.deepEqual(args, [
      "workbench",
      "host",
      "--started-by",
      "acp",
      "--workspace",
      "/a",
      "--workspace",
      "/b",
      "--runtime",
      "code-server",
      "--runtime-root",
      "/rt",
      "--runtime-node",
      "/n24",
      "--no-headless-client",
      "--previous-url",
      "http://127.0.0.1:4100",
    ]);
    assert.deepEqual(hostArgs({ roots: ["/a"], startedBy: "ide", options: {} }), [
      "workbench",
      "host",
      "--started-by",
      "ide",
      "--workspace",
      "/a",
    ]);
  });

  it("its environment has no secret and not the spawning front end's containment marker", () => {
    const env = hostEnv({
      PATH: "/usr/bin",
      HOME: "/home/u",
      ANTHROPIC_API_KEY: "sk-ant-planted",
      CCB_AUTH_TOKEN: "planted-token",
      CCB_SCOPE_0123456789abcdef: "4242",
      CCB_WORKBENCH_GRACE: "30",
    });
    assert.equal(env.PATH, "/usr/bin", "positive control: the rest passes");
    assert.equal(env.CCB_WORKBENCH_GRACE, "30");
    assert.ok(!Object.keys(env).some((k) => k.startsWith("CCB_SCOPE_")), JSON.stringify(env));
    assert.ok(!JSON.stringify(env).includes("planted"), JSON.stringify(env));
  });
});

describe("the workbench host in-process: publish, attach, stop a grace period after the last front end", () => {
  const ws = tmpdirFixture({ prefix: "ccb-host-ws-" });
  const state = tmpdirFixture({ prefix: "ccb-host-state-" });
  after(() => {
    ws.cleanup();
    state.cleanup();
  });
  const env = { ...process.env, XDG_STATE_HOME: state.path };

  it("publishes a host record, answers status with who started it, and stops once the last attached front end left", async () => {
    const key = shareKey([ws.path]);
    const exited = runHost(
      // no runtime is installed at this root: the workbench is unavailable, the host and channel work the same
      {
        roots: [ws.path],
        startedBy: "ide",
        options: { runtime: "openvscode", runtimeRoot: join(ws.path, "no-runtime"), headlessClient: false },
      },
      { log: silentLogger, env, graceMs: 300, signals: false },
    );
    let record = await readRecord(key, env);
    for (let i = 0; !record && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 20));
      record = await readRecord(key, env);
    }
    assert.ok(record, "the host published its record");
    assert.equal(record.frontEnd, "host");
    assert.equal(record.pid, process.pid);

    const attached = createCore({ roots: [ws.path] });
    const remote = await RemoteBridge.connect(record, {
      editor: attached.claimEditor("test"),
      log: silentLogger,
      frontEnd: "serve",
    });
    await remote.firstState;
    assert.ok(remote.open, "attached, and the host proved the secret");
    await remote.ready;
    const reason = attached.bridge.status().reason;
    assert.match(reason, new RegExp(`ccb's workbench host \\(pid ${process.pid}\\) runs it`));
    assert.match(reason, /not an OpenVSCode Server folder/, "the host's own reason reaches the attached front end");

    const status = await fetchStatus(record);
    assert.equal(status?.owner.frontEnd, "host");
    assert.equal(status?.owner.startedBy, "ide");
    assert.equal(status?.owner.graceMs, 300);
    assert.deepEqual(
      status?.attached.map((a) => a.frontEnd),
      ["serve"],
    );

    let done = false;
    void exited.then(() => (done = true));
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(done, false, "an attached front end keeps the host");
    await remote.close();
    assert.equal(await exited, 0, "the host stops after the grace period");
    assert.equal(existsSync(recordPath(key, env)), false, "and removes its record");
    await attached.dispose();
  });
});
