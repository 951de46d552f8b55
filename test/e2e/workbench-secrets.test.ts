import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { liveRuntime } from "../fixtures/runtime/live.ts";
import { repoRoot } from "../helpers/cli.ts";
import { OtherAccount } from "../helpers/other-account.ts";
import { codeServerArgs } from "../helpers/peers.ts";
import { type StdioPeer, spawnStdioPeer } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { bridgeConfigs, eventually, type ToolResult, text } from "../helpers/workbench.ts";

/**
 * The person's workbench stays theirs, attacked as another local account (useradd, runuser):
 *
 * 1. While each runtime runs (real code-server; OpenVSCode's launcher on the live OpenVSCode-shaped
 *    archive of test/fixtures/runtime/live.ts), the other account reads every /proc/<pid>/cmdline
 *    and every /proc/<pid>/environ it can for the workbench's secret prefix `/ide/<key>`, a
 *    one-time link's token, the share secret and the bridge token: none is there (front end,
 *    workbench host, runtime and its extension host, headless Chromium). Positive controls: the same
 *    scan finds a value planted on a command line of the person's account and one planted in an
 *    environment it can read. The person's own account finds none in any environment either.
 * 2. A dead workbench host whose parent cannot reap it (the front end that started it is stopped, as
 *    by Ctrl-Z) is a zombie that still "exists"; the other account binds its port and records all
 *    it is told. A second front end does not take the zombie for live and heals to a new real host;
 *    and a record naming a live pid at the squatted port (the handshake's turn) gets the squatter a
 *    hello and nothing secret, then the front end heals too.
 */

const SCAN = `import { readdirSync, readFileSync } from "node:fs";
let input = ""; process.stdin.on("data", (d) => (input += d)).on("end", () => {
  const needles = JSON.parse(input);
  const hits = []; let cmdlines = 0, environs = 0;
  for (const pid of readdirSync("/proc").filter((p) => /^\\d+$/.test(p))) {
    for (const where of ["cmdline", "environ"]) {
      let body;
      try { body = readFileSync("/proc/" + pid + "/" + where, "latin1"); } catch { continue; }
      if (where === "cmdline") cmdlines++; else environs++;
      for (const [name, value] of Object.entries(needles)) if (body.includes(value)) hits.push({ pid, where, name });
    }
  }
  console.log(JSON.stringify({ hits, cmdlines, environs, uid: process.getuid() }));
});`;

/** Binds a port as whoever runs it and records the upgrade request and every frame; answers as a host would without the secret. */
const SQUAT = `import { appendFileSync } from "node:fs";
import { createRequire } from "node:module";
const [port, log, wsPath] = process.argv.slice(2);
const { WebSocketServer } = createRequire(import.meta.url)(wsPath);
const wss = new WebSocketServer({ host: "127.0.0.1", port: Number(port) });
wss.on("listening", () => console.log("listening"));
wss.on("error", (e) => { console.log("error " + e.code); process.exit(3); });
wss.on("connection", (s, req) => {
  appendFileSync(log, JSON.stringify({ upgrade: req.url, headers: req.headers }) + "\\n");
  s.on("message", (d) => {
    appendFileSync(log, JSON.stringify({ frame: String(d) }) + "\\n");
    s.send(JSON.stringify({ type: "challenge", nonce: "n".repeat(32), proof: "A".repeat(43) }));
    s.send(JSON.stringify({ type: "welcome" }));
    s.send(JSON.stringify({ type: "state", connected: true, reason: "", ready: true, runtime: "code-server" }));
  });
});`;

let other: OtherAccount;
const scripts = tmpdirFixture({ prefix: "ccb-wbsec-scripts-" });

before(() => {
  other = OtherAccount.create("ccbwbs");
  chmodSync(scripts.path, 0o755);
  writeFileSync(join(scripts.path, "scan.mjs"), SCAN, { mode: 0o644 });
  writeFileSync(join(scripts.path, "squat.mjs"), SQUAT, { mode: 0o644 });
});
after(() => {
  other?.remove();
  scripts.cleanup();
});

interface Scan {
  hits: Array<{ pid: string; where: string; name: string }>;
  cmdlines: number;
  environs: number;
  uid: number;
}

function scan(as: "other" | "self", needles: Record<string, string>): Scan {
  const script = join(scripts.path, "scan.mjs");
  const cmd =
    as === "other" ? ["runuser", "-u", other.name, "--", process.execPath, script] : [process.execPath, script];
  const r = spawnSync(cmd[0] as string, cmd.slice(1), { input: JSON.stringify(needles), encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Scan;
}

const describeHits = (s: Scan) =>
  s.hits
    .map((h) => {
      let cmd = "";
      try {
        cmd = readFileSync(`/proc/${h.pid}/cmdline`, "latin1").replace(/\0/g, " ").slice(0, 160);
      } catch {
        cmd = "(gone)";
      }
      return `${h.name} in ${h.where} of ${h.pid}: ${cmd}`;
    })
    .join("\n");

function envOf(home: string): Record<string, string> {
  return {
    HOME: home,
    XDG_STATE_HOME: join(home, "state"),
    XDG_CACHE_HOME: join(home, "cache"),
    XDG_CONFIG_HOME: join(home, "config"),
    XDG_DATA_HOME: join(home, "data"),
    CCB_WORKBENCH_GRACE: "5",
    ...(process.env.CHROME_PATH ? { CHROME_PATH: process.env.CHROME_PATH } : {}),
  };
}

function recordOf(home: string): { pid: number; secret: string; gatewayUrl: string; instance: string } {
  const dir = join(home, "state/ccb/workbenches");
  const name = readdirSync(dir).find((n) => /^[0-9a-f]{32}\.json$/.test(n));
  assert.ok(name, "a record is published");
  return JSON.parse(readFileSync(join(dir, name), "utf8"));
}

/** Extract the live OpenVSCode-shaped archive (built once per code-server peer version) into `dir`; its root. */
function openVscodeStandIn(dir: string): string {
  const live = liveRuntime();
  const r = spawnSync("tar", ["-xzf", live.file, "-C", dir], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  const root = join(dir, `openvscode-server-v${live.manifest.version}-linux-x64`);
  assert.ok(existsSync(join(root, "bin/openvscode-server")), root);
  return root;
}

describe("no secret of a live workbench on a command line or in an environment another account can read", {
  timeout: 1_500_000,
}, () => {
  const runtimes: Array<{ name: string; args: (dir: string) => string[] }> = [
    { name: "code-server", args: () => codeServerArgs() },
    {
      name: "OpenVSCode (its launcher, on the live OpenVSCode-shaped archive)",
      args: (dir) => ["--runtime", "openvscode", "--runtime-root", openVscodeStandIn(dir)],
    },
  ];
  for (const rt of runtimes) {
    it(rt.name, async () => {
      const home = tmpdirFixture({ prefix: "ccb-wbsec-home-" });
      const ws = tmpdirFixture({ prefix: "ccb-wbsec-ws-" });
      writeFileSync(join(ws.path, "notes.txt"), "hello\n");
      let peer: StdioPeer | undefined;
      const planted: ChildProcess[] = [];
      try {
        const args = rt.args(home.path);
        peer = await spawnStdioPeer(
          ["serve", "--stdio", "--workspace", ws.path, ...args, "--log-level", "debug"],
          envOf(home.path),
        );
        const p = peer;
        const call = async (name: string, a: Record<string, unknown> = {}) =>
          (await p.client.callTool({ name, arguments: a }, undefined, { timeout: 180_000 })) as ToolResult;
        // The workbench runs and its extension host answers (the runtime, its extension host and
        // the headless Chromium all run while the scan reads /proc).
        await eventually(
          "the editor answers",
          async () => {
            const r = await call("editor_open", { path: "notes.txt" });
            return r.isError ? undefined : r;
          },
          600_000,
        );
        const opened = await call("vscode_open");
        const link = new URL((opened._meta?.["ccb/workbench"] as { url: string }).url);
        const key = /^\/ide\/([^/]+)\//.exec(link.pathname)?.[1];
        assert.ok(key, `the link names the secret prefix: ${link.pathname}`);
        const ott = [...link.searchParams.values()].find((v) => v.length >= 32);
        assert.ok(ott, "the link carries a one-time token");
        const rec = recordOf(home.path);
        const bridge = bridgeConfigs(home.path);
        assert.ok(bridge.length > 0, "the bridge token is known to the test");
        const needles: Record<string, string> = {
          "workbench key": key,
          "one-time link token": ott,
          "share secret": rec.secret,
          ...Object.fromEntries(bridge.map((b, i) => [`bridge token ${i}`, b.token])),
        };
        // The processes that run now: the front end, the host, the runtime, Chromium.
        const running = readdirSync("/proc")
          .filter((n) => /^\d+$/.test(n))
          .map((n) => {
            try {
              return readFileSync(`/proc/${n}/cmdline`, "latin1").replace(/\0/g, " ");
            } catch {
              return "";
            }
          });
        const runtimeRe = rt.name === "code-server" ? /out\/node\/entry\.js/ : /out\/server-main\.js/;
        assert.ok(
          running.some((c) => runtimeRe.test(c)),
          `the runtime runs (${runtimeRe})`,
        );
        assert.ok(
          running.some((c) => /\bworkbench host\b/.test(c)),
          "the workbench host runs",
        );
        assert.ok(
          running.some((c) => /chrom/i.test(c) && /--type=renderer/.test(c)),
          "headless Chromium's renderer runs",
        );

        // Positive controls: planted on a command line of the person's account, and in an
        // environment the other account can read (its own process's).
        const onCmdline = `planted-cmdline-${key.slice(0, 8)}${Date.now()}`;
        const inEnv = `planted-environ-${key.slice(0, 8)}${Date.now()}`;
        planted.push(spawn("/bin/sh", ["-c", "sleep 60", onCmdline], { stdio: "ignore" }));
        planted.push(
          spawn("runuser", ["-u", other.name, "--", "env", `PLANTED=${inEnv}`, "sleep", "60"], { stdio: "ignore" }),
        );
        let control: Scan | undefined;
        await eventually("the planted processes run", () => {
          control = scan("other", { onCmdline, inEnv });
          return control.hits.length === 2 ? true : undefined;
        });
        assert.deepEqual(
          control?.hits.map((h) => `${h.name} ${h.where}`).sort(),
          ["inEnv environ", "onCmdline cmdline"],
          "the scan finds what it can read",
        );

        const theirs = scan("other", needles);
        assert.notEqual(theirs.uid, process.getuid?.(), "the scan ran as another account");
        assert.ok(theirs.cmdlines > 20, `it read every command line (${theirs.cmdlines})`);
        assert.deepEqual(theirs.hits, [], `another account finds a secret:\n${describeHits(theirs)}`);
        // Stronger: not in any environment of the person's own account either (only in 0600 files and memory).
        const own = scan("self", needles);
        assert.ok(own.environs > 20, `the person's scan read the environments (${own.environs})`);
        assert.deepEqual(own.hits, [], `a secret on a command line or in an environment:\n${describeHits(own)}`);
      } finally {
        for (const c of planted) c.kill("SIGKILL");
        await peer?.close();
        await hostsGone(home.path);
        ws.cleanup();
        home.cleanup();
      }
    });
  }
});

/** Wait until no workbench host of this home runs (they stop a grace period after the last front end left). */
async function hostsGone(home: string): Promise<void> {
  await eventually(
    "the workbench hosts stopped",
    () => {
      for (const n of readdirSync("/proc").filter((x) => /^\d+$/.test(x))) {
        try {
          const cmd = readFileSync(`/proc/${n}/cmdline`, "latin1");
          const env = readFileSync(`/proc/${n}/environ`, "latin1");
          if (cmd.includes("workbench\0host") && env.includes(home)) return undefined;
        } catch {
          // gone
        }
      }
      return true;
    },
    120_000,
  );
}

function procState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  } catch {
    return undefined;
  }
}

describe("a front end never presents the share secret to a listener it has not authenticated", {
  timeout: 600_000,
}, () => {
  it("a zombie host's port, squatted by another account: the squatter learns nothing secret, the front ends heal to a new real host", async () => {
    const home = tmpdirFixture({ prefix: "ccb-wbsec-sq-home-" });
    const ws = tmpdirFixture({ prefix: "ccb-wbsec-sq-ws-" });
    const loot = join(scripts.path, `loot-${Date.now()}`);
    mkdirSync(loot, { mode: 0o700 });
    const uid = Number(spawnSync("id", ["-u", other.name], { encoding: "utf8" }).stdout.trim());
    chownSync(loot, uid, uid);
    const lootFile = join(loot, "heard.jsonl");
    const wsModule = createRequire(join(repoRoot, "package.json")).resolve("ws");
    // No runtime at this root: the workbench is unavailable, the host and the attach channel are real.
    const args = ["--runtime", "openvscode", "--runtime-root", join(ws.path, "no-runtime"), "--no-headless-client"];
    const squatters: ChildProcess[] = [];
    const squat = async (port: number): Promise<void> => {
      const s = spawn(
        "runuser",
        ["-u", other.name, "--", process.execPath, join(scripts.path, "squat.mjs"), String(port), lootFile, wsModule],
        { stdio: ["ignore", "pipe", "inherit"], detached: true },
      );
      squatters.push(s);
      let out = "";
      await new Promise<void>((resolve, reject) => {
        s.stdout?.on("data", (d: Buffer) => {
          out += d.toString();
          if (out.includes("listening")) resolve();
          if (out.includes("error")) reject(new Error(`the squatter could not bind ${port}: ${out}`));
        });
        s.once("exit", () => reject(new Error(`the squatter exited: ${out}`)));
      });
    };
    const first: StdioPeer[] = [];
    try {
      const a = await spawnStdioPeer(["serve", "--stdio", "--workspace", ws.path, ...args], envOf(home.path));
      first.push(a);
      await eventually("the first front end attached", () =>
        /share: attached to the workbench of pid \d+ \(host\)/.test(a.stderr()) ? true : undefined,
      );
      const dead = recordOf(home.path);
      // The front end that started the host (its parent) is stopped, so nobody reaps the host: kill -9 makes it a zombie.
      process.kill(a.pid, "SIGSTOP");
      await eventually("the first front end stopped", () => (procState(a.pid) === "T" ? true : undefined));
      process.kill(dead.pid, "SIGKILL");
      await eventually("the host is a zombie", () => (procState(dead.pid) === "Z" ? true : undefined));
      // The zombie still "exists" (kill 0 finds it) and its port is free: the other account binds it.
      process.kill(dead.pid, 0);
      await squat(Number(new URL(dead.gatewayUrl).port));

      const b = await spawnStdioPeer(["serve", "--stdio", "--workspace", ws.path, ...args], envOf(home.path));
      first.push(b);
      await eventually("the second front end attached to a new host", () =>
        recordOf(home.path).instance !== dead.instance &&
        /share: attached to the workbench of pid \d+ \(host\)/.test(b.stderr())
          ? true
          : undefined,
      );
      const healed = recordOf(home.path);
      assert.notEqual(healed.pid, dead.pid);
      assert.notEqual(healed.gatewayUrl, dead.gatewayUrl, "the squatted port was not the new host's");
      assert.match(
        b.stderr(),
        new RegExp(`attached to the workbench of pid ${healed.pid} \\(host\\)`),
        "a real host is accepted",
      );
      const r = (await b.client.callTool({ name: "editor_state", arguments: {} })) as ToolResult;
      assert.match(
        text(r),
        new RegExp(`ccb's workbench host \\(pid ${healed.pid}\\) runs it`),
        "editor calls go to the real host",
      );
      // The stopped front end, continued, reaps the zombie and heals to the same new host.
      process.kill(a.pid, "SIGCONT");
      await eventually("the first front end healed", () =>
        new RegExp(`attached to the workbench of pid ${healed.pid} \\(host\\)`).test(a.stderr()) ? true : undefined,
      );

      // The handshake's turn: a record naming a running pid (this test's) at the squatted port and the
      // real secret, as when an owner died between the record read and the connect.
      const recFile = join(
        home.path,
        "state/ccb/workbenches",
        readdirSync(join(home.path, "state/ccb/workbenches")).find((n) => /^[0-9a-f]{32}\.json$/.test(n)) as string,
      );
      const live = JSON.parse(readFileSync(recFile, "utf8")) as Record<string, unknown>;
      // stop the new host first, so the third front end's takeover is the only attach that can happen
      for (const p of first) await p.close();
      await hostsGone(home.path);
      const lure = {
        ...live,
        pid: process.pid,
        gatewayUrl: dead.gatewayUrl,
        instance: "e".repeat(24),
        frontEnd: "host",
      };
      writeFileSync(recFile, JSON.stringify(lure), { mode: 0o600 });
      const c = await spawnStdioPeer(["serve", "--stdio", "--workspace", ws.path, ...args], envOf(home.path));
      first.push(c);
      await eventually("the third front end refused the squatter and started a host", () =>
        /did not prove it knows the secret; not attaching/.test(c.stderr()) &&
        /share: attached to the workbench of pid \d+ \(host\)/.test(c.stderr())
          ? true
          : undefined,
      );
      const heard = readFileSync(lootFile, "utf8");
      const lines = heard
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { upgrade?: string; headers?: object; frame?: string });
      assert.ok(
        lines.some((l) => l.frame),
        "positive control: the squatter was reached and heard the hello",
      );
      for (const secret of [dead.secret, live.secret as string])
        assert.ok(!heard.includes(secret), "the squatter never heard a secret");
      assert.doesNotMatch(heard, /authorization/i, "no credential header");
      const types = lines.filter((l) => l.frame).map((l) => (JSON.parse(l.frame as string) as { type: string }).type);
      assert.deepEqual([...new Set(types)], ["hello"], `nothing but hellos: ${types.join(",")}`);
    } finally {
      for (const p of first) {
        try {
          process.kill(p.pid, "SIGCONT");
        } catch {
          // gone
        }
        await p.close().catch(() => undefined);
      }
      for (const s of squatters) {
        try {
          process.kill(-(s.pid as number), "SIGKILL"); // runuser and the squatter it started
        } catch {
          // gone
        }
      }
      await hostsGone(home.path);
      ws.cleanup();
      home.cleanup();
    }
  });
});
