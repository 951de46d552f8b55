import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { ccbCommand, spawnCcb } from "../helpers/cli.ts";
import { codeServerArgs } from "../helpers/peers.ts";
import { cleanEnv } from "../helpers/serve.ts";
import { tmpdirFixture } from "../helpers/tmp.ts";

/**
 * Containment, attacked the way a terminal user would: five kinds of children that try to outlive
 * ccb (foreground, `&`, `nohup`, `setsid`, a double fork), started in ccb's terminals; then ccb
 * ends by SIGKILL, SIGTERM, SIGINT, SIGHUP or its stdin closing, and `ps` must find none of them.
 * Each child's command line carries a unique marker, so the scan cannot confuse them with others.
 */

const KINDS = ["fg", "bg", "nohup", "setsid", "dfork"] as const;

function lines(mark: string): Record<(typeof KINDS)[number], string> {
  const sleeper = (k: string) => `sh -c 'sleep 900; : ${mark}-${k}'`;
  return {
    fg: `${sleeper("fg")}`,
    bg: `${sleeper("bg")} & wait`,
    nohup: `nohup ${sleeper("nohup")} >/dev/null 2>&1 & sleep 900`,
    setsid: `setsid ${sleeper("setsid")} >/dev/null 2>&1 < /dev/null & sleep 900`,
    dfork: `( ${sleeper("dfork")} >/dev/null 2>&1 < /dev/null & ) ; sleep 900`,
  };
}

/** pids whose command line contains `mark` (what `ps -eo pid,args | grep mark` shows). */
function marked(mark: string): Array<{ pid: number; args: string }> {
  const out: Array<{ pid: number; args: string }> = [];
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const args = readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0").join(" ");
      if (args.includes(mark)) out.push({ pid: Number(p), args });
    } catch {
      // gone
    }
  }
  return out;
}

async function until<T>(what: string, fn: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not reached in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A raw newline-delimited JSON-RPC client on the child's stdio (no SDK: the test owns stdin). */
function rpc(child: ChildProcess) {
  let buf = "";
  let id = 0;
  const waiting = new Map<number, (m: { result?: unknown; error?: unknown }) => void>();
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    buf += d;
    let i: number;
    while ((i = buf.indexOf("\n")) !== -1) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      try {
        const m = JSON.parse(line) as { id?: number; result?: unknown; error?: unknown };
        if (typeof m.id === "number") waiting.get(m.id)?.(m);
      } catch {
        // not a frame
      }
    }
  });
  const request = (method: string, params: unknown) =>
    new Promise<{ result?: unknown; error?: unknown }>((resolve) => {
      const n = ++id;
      waiting.set(n, resolve);
      child.stdin?.write(`${JSON.stringify({ jsonrpc: "2.0", id: n, method, params })}\n`);
    });
  const notify = (method: string) => child.stdin?.write(`${JSON.stringify({ jsonrpc: "2.0", method })}\n`);
  return { request, notify };
}

type Ending = "SIGKILL" | "SIGTERM" | "SIGINT" | "SIGHUP" | "stdin";

describe("containment: nothing ccb started outlives it", { timeout: 600_000 }, () => {
  const ws = tmpdirFixture({ prefix: "ccb-contain-ws-" });
  const home = tmpdirFixture({ prefix: "ccb-contain-home-" });
  for (const d of ["state", "cache", "config", "data"]) mkdirSync(join(home.path, d), { recursive: true });

  for (const ending of ["SIGKILL", "SIGTERM", "SIGINT", "SIGHUP", "stdin"] as Ending[]) {
    it(`${ending}: zero of the five kinds of children left`, async () => {
      const mark = `ccbmark${randomBytes(6).toString("hex")}`;
      const child = spawnCcb(["serve", "--stdio", "--no-workbench", "--workspace", ws.path], {
        env: cleanEnv({
          HOME: home.path,
          XDG_STATE_HOME: join(home.path, "state"),
          XDG_CONFIG_HOME: join(home.path, "config"),
        }),
      });
      let stderr = "";
      child.stderr?.setEncoding("utf8").on("data", (d: string) => (stderr += d));
      const exited = new Promise<void>((r) => child.once("exit", () => r()));
      try {
        const c = rpc(child);
        const init = await c.request("initialize", {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "containment", version: "1" },
        });
        assert.ok(init.result, JSON.stringify(init));
        c.notify("notifications/initialized");
        for (const [kind, line] of Object.entries(lines(mark))) {
          const r = (await c.request("tools/call", {
            name: "terminal_create",
            arguments: { command: "bash", args: ["-c", line], title: kind },
          })) as { result?: { isError?: boolean } };
          assert.ok(r.result && !r.result.isError, `terminal_create ${kind}: ${JSON.stringify(r)}`);
        }
        // Positive control: every kind is running before ccb ends.
        await until("all five kinds running", () =>
          KINDS.every((k) => marked(`${mark}-${k}`).length > 0) ? true : undefined,
        );
        if (ending === "stdin") child.stdin?.end();
        else child.kill(ending);
        await exited;
        const left = await until(
          "no marked process left",
          () => (marked(mark).length === 0 ? [] : undefined),
          20_000,
        ).catch(() => marked(mark));
        assert.deepEqual(
          left,
          [],
          `left after ${ending}:\n${left.map((p) => `${p.pid} ${p.args}`).join("\n")}\n${stderr.slice(-2000)}`,
        );
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
        for (const p of marked(mark)) {
          try {
            process.kill(p.pid, "SIGKILL");
          } catch {
            // gone
          }
        }
      }
    });
  }

  it("`ccb serve ... | head`: when the reader of stdout leaves, serve ends and its workbench state folder is gone", async () => {
    const stateHome = join(home.path, "state-head");
    const base = join(stateHome, "ccb/workbench");
    const { command, args } = ccbCommand([
      "serve",
      "--stdio",
      "--workspace",
      ws.path,
      ...codeServerArgs(),
      "--no-headless-client",
    ]);
    const q = (a: string) => `'${a.replace(/'/g, "'\\''")}'`;
    const shell = spawn(
      "/bin/sh",
      ["-c", `${[command, ...args].map(q).join(" ")} 2>${q(join(home.path, "head.err"))} | head -n 1`],
      {
        env: cleanEnv({ HOME: home.path, XDG_STATE_HOME: stateHome, XDG_CACHE_HOME: join(home.path, "cache") }),
        stdio: ["pipe", "pipe", "inherit"],
      },
    );
    let out = "";
    shell.stdout?.setEncoding("utf8").on("data", (d: string) => (out += d));
    const frame = (id: number, method: string, params: unknown) =>
      `${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`;
    shell.stdin?.write(
      frame(1, "initialize", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "head", version: "1" },
      }),
    );
    await until("head printed the first line", () => (out.includes('"id":1') ? true : undefined));
    const dirs = await until("the workbench state folder exists", () => {
      try {
        const d = readdirSync(base);
        return d.length > 0 ? d : undefined;
      } catch {
        return undefined;
      }
    });
    assert.equal(dirs.length, 1);
    // head has exited; the next frame ccb writes meets a closed pipe (EPIPE).
    shell.stdin?.write(frame(2, "tools/list", {}));
    shell.stdin?.write(frame(3, "tools/list", {}));
    await until("the state folder is removed", () => (readdirSync(base).length === 0 ? true : undefined), 60_000).catch(
      () => undefined,
    );
    assert.deepEqual(readdirSync(base), [], readFileSync(join(home.path, "head.err"), "utf8").slice(-2000));
    shell.stdin?.end();
    await new Promise((r) => (shell.exitCode !== null ? r(null) : shell.once("exit", r)));
  });
});
