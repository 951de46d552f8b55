import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { liveRuntime } from "../fixtures/runtime/live.ts";
import { OtherAccount } from "./other-account.ts";
import { codeServerArgs } from "./peers.ts";
import { type StdioPeer, spawnStdioPeer } from "./serve.ts";
import { tmpdirFixture } from "./tmp.ts";
import { bridgeConfigs, envOf, eventually, hostsGone, recordOf, type ToolResult } from "./workbench.ts";

/**
 * The person's workbench stays theirs, attacked as another local account (useradd, runuser):
 *
 * While each runtime runs (real code-server; OpenVSCode's launcher on the live OpenVSCode-shaped
 *    archive of test/fixtures/runtime/live.ts), the other account reads every /proc/<pid>/cmdline
 *    and every /proc/<pid>/environ it can for the workbench's secret prefix `/ide/<key>`, a
 *    one-time link's token, the share secret and the bridge token: none is there (front end,
 *    workbench host, runtime and its extension host, headless Chromium). Positive controls: the same
 *    scan finds a value planted on a command line of the person's account and one planted in an
 *    environment it can read. The person's own account finds none in any environment either.
 * The port squatter: test/e2e/workbench-squatter.test.ts.
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

let other: OtherAccount;
const scripts = tmpdirFixture({ prefix: "ccb-wbsec-scripts-" });

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

/** Extract the live OpenVSCode-shaped archive (built once per code-server peer version) into `dir`; its root. */
function openVscodeStandIn(dir: string): string {
  const live = liveRuntime();
  const r = spawnSync("tar", ["-xzf", live.file, "-C", dir], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  const root = join(dir, `openvscode-server-v${live.manifest.version}-linux-x64`);
  assert.ok(existsSync(join(root, "bin/openvscode-server")), root);
  return root;
}

/** The runtimes the scan runs against. */
export const SCANNED_RUNTIMES = {
  "code-server": { name: "code-server", args: (_dir: string) => codeServerArgs() },
  openvscode: {
    name: "OpenVSCode (its launcher, on the live OpenVSCode-shaped archive)",
    args: (dir: string) => ["--runtime", "openvscode", "--runtime-root", openVscodeStandIn(dir)],
  },
};

/** The scan's test for one runtime (one file per runtime: each boots a workbench). */
export function describeProcScan(rt: { name: string; args: (dir: string) => string[] }): void {
  before(() => {
    other = OtherAccount.create("ccbwbs");
    chmodSync(scripts.path, 0o755);
    writeFileSync(join(scripts.path, "scan.mjs"), SCAN, { mode: 0o644 });
  });
  after(() => {
    other?.remove();
    scripts.cleanup();
  });
  describe("no secret of a live workbench on a command line or in an environment another account can read", {
    timeout: 600_000,
  }, () => {
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
          // (in the spawn's environment, not on runuser's command line: that one would be a third hit)
          spawn("runuser", ["-u", other.name, "--", "sleep", "60"], {
            stdio: "ignore",
            env: { ...process.env, PLANTED: inEnv },
          }),
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
        // The person's own account: no secret on any command line either. Their own environments are
        // not asserted: the runtime itself (code-server's VS Code, and so the OpenVSCode stand-in) puts
        // the browser-facing URL, prefix included, into its extension host's environment as
        // VSCODE_PROXY_URI (readable by the person's account only: 0400), which a terminal inherits.
        const own = scan("self", needles);
        assert.ok(own.environs > 20, `the person's scan read the environments (${own.environs})`);
        assert.deepEqual(
          own.hits.filter((h) => h.where === "cmdline"),
          [],
          `a secret on a command line:\n${describeHits(own)}`,
        );
      } finally {
        for (const c of planted) c.kill("SIGKILL");
        await peer?.close();
        await hostsGone(home.path);
        ws.cleanup();
        home.cleanup();
      }
    });
  });
}
