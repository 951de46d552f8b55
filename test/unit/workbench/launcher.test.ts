import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { after, describe, test } from "node:test";
import { isCcbError } from "../../../src/core/errors.ts";
import { silentLogger } from "../../../src/core/log.ts";
import { resolveRuntime, runtimeEnv } from "../../../src/workbench/index.ts";
import { codeServerRuntime, findNode24 } from "../../../src/workbench/launcher/code-server.ts";
import { RuntimeSupervisor, type WorkbenchState } from "../../../src/workbench/launcher/process.ts";
import type { Runtime } from "../../../src/workbench/launcher/types.ts";
import { createStateDirs, LEAN_SETTINGS, removeStateDirs } from "../../../src/workbench/launcher/user-data.ts";
import { codeServerRoot, node24 } from "../../helpers/peers.ts";
import { tmpdirFixture } from "../../helpers/tmp.ts";

const tmp = tmpdirFixture({ prefix: "ccb-launcher-" });
after(() => tmp.cleanup());

describe("runtime resolution", () => {
  test("code-server refuses a Node that is not 24, naming the version and the fix", async () => {
    await assert.rejects(findNode24(process.execPath), (e: unknown) => {
      assert.ok(isCcbError(e, "RUNTIME_UNAVAILABLE"));
      assert.match((e as Error).message, new RegExp(`is ${process.version.replace(/\./g, "\\.")}`));
      assert.match((e as { hint: string }).hint, /--runtime-node|CCB_RUNTIME_NODE/);
      return true;
    });
    assert.match((await findNode24(node24())).version, /^v24\./);
    const fromEnv = await findNode24(undefined, { ...process.env, CCB_RUNTIME_NODE: node24() });
    assert.equal(fromEnv.path, node24());
  });

  test("OpenVSCode missing from the cache says to run `ccb runtime fetch`", async () => {
    const env = { ...process.env, CCB_CACHE_DIR: join(tmp.path, "cache"), CCB_RUNTIME_ROOT: "" };
    await assert.rejects(
      resolveRuntime({ env }),
      (e: unknown) =>
        isCcbError(e, "RUNTIME_UNAVAILABLE") &&
        /ccb runtime fetch/.test(`${(e as Error).message} ${(e as { hint?: string }).hint}`),
    );
  });

  test("code-server needs a root, and a wrong root is named", async () => {
    await assert.rejects(
      resolveRuntime({ runtime: "code-server", env: {} }),
      (e: unknown) => isCcbError(e, "RUNTIME_UNAVAILABLE") && /--runtime-root/.test((e as Error).message),
    );
    await assert.rejects(
      resolveRuntime({ runtime: "code-server", runtimeRoot: tmp.path, runtimeNode: node24(), env: {} }),
      (e: unknown) => isCcbError(e, "RUNTIME_UNAVAILABLE") && /not a code-server package/.test((e as Error).message),
    );
  });

  test("ccb's own secrets are not passed to the runtime (its terminals inherit its environment)", () => {
    const env = runtimeEnv({
      PATH: "/bin",
      CCB_AUTH_TOKEN: "x",
      CCB_BRIDGE_SECRET: "y",
      FLUJO_MCP_APP_RUNTIME_REGISTER_TOKEN: "z",
      CCB_LOG_LEVEL: "info",
      CCB_WORKBENCH_TUNING: "-compile-cache", // its NODE_COMPILE_CACHE: compile-cache.test.ts
    });
    assert.deepEqual(env, {
      PATH: "/bin",
      CCB_LOG_LEVEL: "info",
      CCB_WORKBENCH_TUNING: "-compile-cache",
      NODE_DISABLE_COMPILE_CACHE: "1",
    });
  });
});

describe("state folders", () => {
  test("live outside the workspace even when XDG_STATE_HOME is inside it, and are removed", () => {
    const ws = join(tmp.path, "home-as-workspace");
    mkdirSync(ws);
    const dirs = createStateDirs([ws], { XDG_STATE_HOME: join(ws, ".local/state") });
    assert.ok(!dirs.state.startsWith(ws), `${dirs.state} is outside ${ws}`);
    assert.ok(existsSync(join(dirs.userData, "User/settings.json")));
    assert.ok(existsSync(dirs.extensions));
    removeStateDirs(dirs);
    assert.ok(!existsSync(dirs.state));
  });

  test("the lean settings (one TypeScript server, no recommendation lookups) are written by default, and not when turned off", () => {
    const ws = join(tmp.path, "lean-ws");
    mkdirSync(ws);
    const env = { XDG_STATE_HOME: join(tmp.path, "lean-state") };
    const lean = createStateDirs([ws], env);
    const on = JSON.parse(readFileSync(join(lean.userData, "User/settings.json"), "utf8"));
    assert.equal(on["typescript.tsserver.useSyntaxServer"], "never");
    for (const [k, v] of Object.entries(LEAN_SETTINGS)) assert.deepEqual(on[k], v, k);
    const plain = createStateDirs([ws], env, undefined, false);
    const off = JSON.parse(readFileSync(join(plain.userData, "User/settings.json"), "utf8"));
    assert.equal(off["typescript.tsserver.useSyntaxServer"], undefined);
    assert.equal(off["telemetry.telemetryLevel"], "off", "ccb's own settings either way");
    assert.equal(on["typescript.disableAutomaticTypeAcquisition"], undefined, "the typings installer by default");
    const typings = createStateDirs([ws], env, undefined, true, true);
    const noTypings = JSON.parse(readFileSync(join(typings.userData, "User/settings.json"), "utf8"));
    assert.equal(noTypings["typescript.disableAutomaticTypeAcquisition"], true, "+no-typings");
    removeStateDirs(typings);
    removeStateDirs(lean);
    removeStateDirs(plain);
  });

  test("the shared workbench's user data is kept per key across instances (the person's settings too); never in a folder not the user's own 0700", () => {
    const ws = join(tmp.path, "kept-ws");
    mkdirSync(ws);
    const env = { XDG_STATE_HOME: join(tmp.path, "kept-state") };
    const first = createStateDirs([ws], env, "k1");
    assert.ok(!first.userData.startsWith(first.state), "outside the per-instance folder");
    const settings = join(first.userData, "User/settings.json");
    writeFileSync(settings, JSON.stringify({ "editor.fontSize": 19, "telemetry.telemetryLevel": "all" }));
    mkdirSync(join(first.userData, "User/Backups"), { recursive: true });
    writeFileSync(join(first.userData, "User/Backups/unsaved"), "typed");
    removeStateDirs(first);
    const second = createStateDirs([ws], env, "k1");
    assert.equal(second.userData, first.userData);
    assert.notEqual(second.state, first.state);
    assert.equal(readFileSync(join(second.userData, "User/Backups/unsaved"), "utf8"), "typed");
    const merged = JSON.parse(readFileSync(join(second.userData, "User/settings.json"), "utf8"));
    assert.equal(merged["editor.fontSize"], 19, "the person's setting kept");
    assert.equal(merged["telemetry.telemetryLevel"], "off", "ccb's setting enforced");
    assert.equal(statSync(dirname(second.userData)).mode & 0o777, 0o700);
    const other = createStateDirs([ws], env, "k2");
    assert.notEqual(other.userData, first.userData, "another set of roots, other user data");
    // a kept folder someone loosened (or planted) is not used: the instance gets its own
    const loose = join(`${dirname(dirname(first.userData))}`, "k3");
    mkdirSync(loose, { mode: 0o755 });
    chmodSync(loose, 0o755);
    const fallback = createStateDirs([ws], env, "k3");
    assert.ok(
      fallback.userData.startsWith(fallback.state),
      "per-instance user data when the kept folder is not private",
    );
    for (const d of [second, other, fallback]) removeStateDirs(d);
  });
});

/** Live (non-zombie) members of a process group, from /proc. */
function liveInGroup(pgid: number): number {
  let n = 0;
  for (const p of readdirSync("/proc").filter((x) => /^\d+$/.test(x))) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(f[2]) === pgid && f[0] !== "Z") n++;
    } catch {
      // gone
    }
  }
  return n;
}

/** The processes of the process group `pgid`. */
function groupPids(pgid: number): number[] {
  const out: number[] = [];
  for (const p of readdirSync("/proc").filter((x) => /^\d+$/.test(x))) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]) === pgid) out.push(Number(p));
    } catch {
      // gone
    }
  }
  return out;
}

/** The TCP ports `pids` listen on: the LISTEN sockets of /proc/net/tcp{,6} whose inode one of them holds open. */
function tcpListenPorts(pids: number[]): number[] {
  const listening = new Map<string, number>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const [, local, , state, , , , , , inode] = line.trim().split(/\s+/);
      if (state === "0A" && local && inode) listening.set(inode, Number.parseInt(local.split(":")[1] ?? "", 16));
    }
  }
  const ports: number[] = [];
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone
    }
    for (const fd of fds) {
      try {
        const port = listening.get(/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1] ?? "");
        if (port !== undefined) ports.push(port);
      } catch {
        // closed meanwhile
      }
    }
  }
  return ports;
}

/** SIGKILL was sent; the kernel needs a moment to finish the processes. */
async function groupGone(pgid: number): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (liveInGroup(pgid) === 0) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

describe("runtime supervisor", () => {
  test("waits for health, restarts a crashed runtime with backoff, stops the process group", async () => {
    const script = join(tmp.path, "fake-runtime.mjs");
    writeFileSync(
      script,
      `import { createServer } from "node:http";
       import { spawn } from "node:child_process";
       const socketPath = process.argv[2];
       spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" }); // a child in the same group
       createServer((req, res) => res.writeHead(req.url === "/healthz" ? 200 : 404).end()).listen(socketPath);`,
    );
    const runtime: Runtime = {
      kind: "code-server",
      describe: "fake runtime",
      root: tmp.path,
      announcePrefix: false,
      healthPath: "/healthz",
      workbenchPath: () => "/",
      command: (input) => ({ command: process.execPath, args: [script, input.socketPath], env: {} }),
    };
    const dirs = createStateDirs([join(tmp.path, "ws")], { XDG_STATE_HOME: join(tmp.path, "state") });
    const sup = new RuntimeSupervisor({
      runtime,
      dirs,
      folder: tmp.path,
      log: silentLogger,
      env: process.env,
      minBackoffMs: 50,
      maxBackoffMs: 200,
    });
    const states: WorkbenchState[] = [];
    sup.onState((s) => states.push(s));
    await sup.start();
    assert.equal(sup.state, "running");
    const first = sup.pid as number;
    const back = new Promise<void>((resolve) => {
      const off = sup.onState((s) => {
        if (s === "running") {
          off();
          resolve();
        }
      });
    });
    process.kill(first, "SIGKILL");
    await back;
    assert.notEqual(sup.pid, first);
    assert.deepEqual(states, ["starting", "running", "crashed", "starting", "running"]);
    const second = sup.pid as number;
    await sup.stop();
    assert.equal(sup.state, "stopped");
    assert.equal(await groupGone(second), true, "the whole process group is gone");
    assert.equal(await groupGone(first), true, "the crashed group was cleaned up too");
    removeStateDirs(dirs);
  });

  test("code-server in one process (no restart wrapper forking a second Node), with the server's Node flags; the control forks; neither listens on TCP once VS Code's server is loaded", async () => {
    const runtime = await codeServerRuntime(codeServerRoot(), node24());
    // Positive control of the TCP check: a listener of this very process is found.
    const probe = createServer().listen(0, "127.0.0.1");
    await once(probe, "listening");
    const probePort = (probe.address() as { port: number }).port;
    assert.deepEqual(tcpListenPorts([process.pid]), [probePort]);
    probe.close();
    const entries = (pgid: number) => {
      const out: string[] = [];
      for (const p of readdirSync("/proc").filter((x) => /^\d+$/.test(x))) {
        try {
          const stat = readFileSync(`/proc/${p}/stat`, "utf8");
          const cmd = readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0");
          if (
            Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]) === pgid &&
            cmd.some((a) => a.endsWith("entry.js") || a.endsWith("/out/node/entry"))
          )
            out.push(cmd.slice(0, 3).join(" "));
        } catch {
          // gone
        }
      }
      return out;
    };
    for (const oneProcess of [true, false]) {
      const dirs = createStateDirs([join(tmp.path, "ws")], { XDG_STATE_HOME: join(tmp.path, "state") });
      const sup = new RuntimeSupervisor({
        runtime,
        dirs,
        folder: tmp.path,
        log: silentLogger,
        env: process.env,
        oneProcess,
        nodeFlags: ["--max-semi-space-size=2"],
      });
      try {
        await sup.start();
        assert.equal(await sup.get("/healthz"), 200);
        const procs = entries(sup.pid as number);
        if (oneProcess) {
          assert.equal(procs.length, 1, procs.join("; "));
          assert.match(procs[0] as string, /--max-semi-space-size=2 \S*code-server-one-process\.cjs$/);
        } else assert.equal(procs.length, 2, `control: the wrapper and its forked server: ${procs.join("; ")}`);
        // The workbench page loads VS Code's server (server-main.js); then, and a moment later, the
        // runtime's group listens on its Unix socket only (one-process once also ran VS Code's own
        // standalone server on TCP localhost:8000).
        assert.equal(await sup.get(runtime.workbenchPath(tmp.path)), 200);
        for (let i = 0; i < 10; i++) {
          assert.deepEqual(tcpListenPorts(groupPids(sup.pid as number)), [], `one-process ${oneProcess}: a TCP port`);
          await new Promise((r) => setTimeout(r, 200)); // a late listener would show within 2 s
        }
      } finally {
        await sup.stop();
        removeStateDirs(dirs);
      }
    }
  });

  test("a ccb killed with SIGKILL does not leave its runtime running (watchdog)", async () => {
    const fake = join(tmp.path, "fake-runtime-2.mjs");
    writeFileSync(
      fake,
      `import { createServer } from "node:http"; createServer((q, r) => r.writeHead(200).end()).listen(process.argv[2]);`,
    );
    const host = join(tmp.path, "host.mts");
    const processTs = new URL("../../../src/workbench/launcher/process.ts", import.meta.url).pathname;
    const userDataTs = new URL("../../../src/workbench/launcher/user-data.ts", import.meta.url).pathname;
    writeFileSync(
      host,
      `import { RuntimeSupervisor } from ${JSON.stringify(processTs)};
       import { createStateDirs } from ${JSON.stringify(userDataTs)};
       const log = { debug() {}, info() {}, warn() {}, error() {}, child() { return log; } };
       const runtime = { kind: "code-server", describe: "fake", root: "/", announcePrefix: false, healthPath: "/", workbenchPath: () => "/",
         command: (i) => ({ command: process.execPath, args: [${JSON.stringify(fake)}, i.socketPath], env: {} }) };
       const dirs = createStateDirs([${JSON.stringify(join(tmp.path, "ws2"))}], { XDG_STATE_HOME: ${JSON.stringify(join(tmp.path, "state2"))} });
       const sup = new RuntimeSupervisor({ runtime, dirs, folder: "/", log, env: process.env });
       await sup.start();
       process.stdout.write(String(sup.pid) + "\\n");
       setInterval(() => {}, 1000);`,
    );
    const child = spawn(process.execPath, ["--import", "tsx", host], { stdio: ["ignore", "pipe", "inherit"] });
    const [line] = (await once(createInterface({ input: child.stdout as NodeJS.ReadableStream }), "line")) as [string];
    const runtimePid = Number(line);
    assert.ok(runtimePid > 0);
    assert.ok(liveInGroup(runtimePid) > 0, "the runtime runs");
    child.kill("SIGKILL");
    await once(child, "exit");
    assert.equal(await groupGone(runtimePid), true, "the watchdog stopped the runtime's group");
  });
});
