import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { repoRoot } from "../helpers/cli.ts";
import { OtherAccount } from "../helpers/other-account.ts";
import { type StdioPeer, spawnStdioPeer } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";
import { envOf, eventually, hostsGone, recordOf, type ToolResult, text } from "../helpers/workbench.ts";

/**
 * A front end never presents the share secret to a listener it has not authenticated, attacked as
 * another local account (useradd, runuser). A dead workbench host whose parent cannot reap it (the
 * front end that started it is stopped, as by Ctrl-Z) is a zombie that still "exists"; the other
 * account binds its port and records all it is told. A second front end does not take the zombie
 * for live and heals to a new real host (positive control: a real host is accepted); a record naming
 * a running pid at the squatted port (the handshake's turn) gets the squatter a hello and nothing
 * secret, and that front end heals too. The runtime is absent on purpose: the host and the attach
 * channel are real, the workbench says why it is unavailable (test/e2e/workbench-secrets.test.ts
 * runs the runtimes).
 */

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
const scripts = tmpdirFixture({ prefix: "ccb-wbsq-scripts-" });

before(() => {
  other = OtherAccount.create("ccbwsq");
  chmodSync(scripts.path, 0o755);
  writeFileSync(join(scripts.path, "squat.mjs"), SQUAT, { mode: 0o644 });
});
after(() => {
  other?.remove();
  scripts.cleanup();
});

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
