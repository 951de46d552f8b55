import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { pidAlive } from "../../src/core/pid.ts";
import { artifactSource, saveArtifacts, stateLogs } from "./artifacts.ts";
import { codeServerArgs } from "./peers.ts";

import { connectHttp, type HttpServe, spawnHttpServe } from "./serve.ts";
import { homeEnv } from "./tmp.ts";

/** Spawn `ccb serve --http --port 0 ...` (workbench on) and wait for the URL it prints on stderr. */
export function startWorkbenchServe(
  workspace: string,
  extraArgs: string[],
  env: Record<string, string>,
): Promise<HttpServe> {
  return spawnHttpServe(["--http", "--port", "0", "--workspace", workspace, ...extraArgs], env);
}

/** Shared by the workbench end-to-end tests: `ccb serve` with real code-server and headless Chromium. */

export interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

export interface Workbench {
  serve: HttpServe;
  client: Client;
  home: string;
  call(name: string, args?: Record<string, unknown>): Promise<ToolResult>;
  /** Call a tool and fail the test on an error result. */
  ok(name: string, args?: Record<string, unknown>): Promise<ToolResult>;
  /** Resolve when stderr matches (an event the server logs), with everything seen so far. */
  waitLog(re: RegExp | ((stderr: string) => boolean), timeoutMs?: number): Promise<string>;
  /** Count stderr lines matching. */
  countLog(re: RegExp): number;
  stop(): Promise<void>;
}

export function text(r: ToolResult): string {
  return r.content.map((c) => c.text ?? "").join("\n");
}

/** A tool result's structured content, read loosely in a test. */
export const structured = (r: ToolResult) => r.structuredContent as Record<string, any>;

/** Write the workspace's launch configurations (.vscode/launch.json). */
export function writeLaunchJson(workspace: string, configurations: unknown[]): void {
  mkdirSync(join(workspace, ".vscode"), { recursive: true });
  writeFileSync(join(workspace, ".vscode/launch.json"), JSON.stringify({ version: "0.2.0", configurations }));
}

/** Boot `ccb serve --http --runtime code-server --headless-client` once and wait until the bridge serves. */
export async function bootWorkbench(
  workspace: string,
  home: string,
  extraArgs: string[] = [],
  opts: { env?: Record<string, string>; headers?: Record<string, string>; runtimeArgs?: string[] } = {},
): Promise<Workbench> {
  // CI runs the same suite on OpenVSCode Server from the runtime cache (.github/workflows/openvscode-e2e.yml:
  // CCB_E2E_RUNTIME=openvscode, CCB_CACHE_DIR filled by `ccb runtime fetch`).
  const openvscode = process.env.CCB_E2E_RUNTIME === "openvscode";
  const runtimeArgs = opts.runtimeArgs ?? (openvscode ? ["--runtime", "openvscode"] : codeServerArgs());
  const serve = await startWorkbenchServe(
    workspace,
    [...runtimeArgs, "--headless-client", "--log-level", "debug", ...extraArgs],
    {
      // Defaults: as root, ccb runs Chromium as an unprivileged account with its sandbox on.
      ...homeEnv(home),
      ...(process.env.CCB_CACHE_DIR ? { CCB_CACHE_DIR: process.env.CCB_CACHE_DIR } : {}),
      // A workbench test run under other levers: CCB_E2E_TUNING=+one-process becomes ccb's CCB_WORKBENCH_TUNING.
      ...(process.env.CCB_E2E_TUNING ? { CCB_WORKBENCH_TUNING: process.env.CCB_E2E_TUNING } : {}),
      ...(opts.env ?? {}),
    },
  );
  const child: ChildProcess = serve.child;
  const waitLog = (re: RegExp | ((stderr: string) => boolean), timeoutMs = 240_000): Promise<string> =>
    new Promise((resolve, reject) => {
      const check = () => {
        if (typeof re === "function" ? re(serve.stderr()) : re.test(serve.stderr())) {
          cleanup();
          resolve(serve.stderr());
        }
      };
      const onExit = () => {
        cleanup();
        reject(new Error(`ccb serve exited while waiting for ${re}:\n${serve.stderr().slice(-4000)}`));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out waiting for ${re}:\n${serve.stderr().slice(-4000)}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        child.stderr?.off("data", check);
        child.off("exit", onExit);
      };
      child.stderr?.on("data", check);
      child.once("exit", onExit);
      setImmediate(check);
    });
  // What a failed test keeps: ccb serve's log, and the host's and the runtime's logs under its state home.
  const off = artifactSource("ccb-serve", () => ({ "stderr.log": serve.stderr(), ...stateLogs(join(home, "state")) }));
  try {
    await waitLog(/bridge: extension host \d+ serves/);
  } catch (err) {
    await saveArtifacts("boot-workbench", err);
    off();
    await serve.stop();
    throw err;
  }
  const client = await connectHttp(serve.url, opts.headers);
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args }, undefined, { timeout: 180_000 })) as ToolResult;
  return {
    serve,
    client,
    home,
    call,
    async ok(name, args = {}) {
      const r = await call(name, args);
      if (r.isError) throw new Error(`${name} failed: ${text(r)}`);
      return r;
    },
    waitLog,
    countLog: (re) =>
      serve
        .stderr()
        .split("\n")
        .filter((l) => re.test(l)).length,
    async stop() {
      off();
      await client.close().catch(() => undefined);
      await serve.stop();
    },
  };
}

/** Poll a condition made of tool calls until it holds (language services answer when ready). */
export async function eventually<T>(
  what: string,
  fn: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 120_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`${what}: not reached in ${timeoutMs} ms${last ? ` (last error: ${String(last)})` : ""}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * Every workbench host published under a private XDG_STATE_HOME has stopped and removed its record
 * (the test run's grace is 0: a host stops once its last front end left, but on its own time). A
 * test's cleanup waits for this before it removes the folder its runtime may still be writing to.
 */
export async function hostsStopped(stateHome: string, timeoutMs = 60_000): Promise<void> {
  const dir = join(stateHome, "ccb/workbenches");
  const records = () => (existsSync(dir) ? readdirSync(dir).filter((n) => /^[0-9a-f]{32}\.json$/.test(n)) : []);
  const pids = new Set<number>();
  await eventually(
    `the workbench hosts under ${stateHome} stopped`,
    () => {
      for (const n of records()) {
        try {
          pids.add(JSON.parse(readFileSync(join(dir, n), "utf8")).pid);
        } catch {
          // a record being written or removed: read again on the next poll
        }
      }
      return records().length === 0 && [...pids].every((pid) => !pidAlive(pid)) ? true : undefined;
    },
    timeoutMs,
  );
}

/** The bridge config files of running workbenches under a private XDG_STATE_HOME. */
export function bridgeConfigs(home: string): Array<{ path: string; mode: number; token: string }> {
  const base = join(home, "state/ccb/workbench");
  const out: Array<{ path: string; mode: number; token: string }> = [];
  let instances: string[] = [];
  try {
    instances = readdirSync(base);
  } catch {
    return out;
  }
  for (const inst of instances) {
    const exts = join(base, inst, "extensions");
    for (const e of readdirSync(exts)) {
      const p = join(exts, e, "ccb-bridge.json");
      try {
        out.push({
          path: p,
          mode: statSync(p).mode & 0o777,
          token: (JSON.parse(readFileSync(p, "utf8")) as { token: string }).token,
        });
      } catch {
        // not the bridge extension
      }
    }
  }
  return out;
}

/**
 * The backups of unsaved buffers holding `needle` that VS Code wrote into the workbench's user data,
 * anywhere below ccb's state folder `stateDir` ($XDG_STATE_HOME/ccb).
 */
export function backupsHolding(stateDir: string, needle: string): string[] {
  const walk = (d: string): string[] =>
    existsSync(d)
      ? readdirSync(d, { withFileTypes: true }).flatMap((e) =>
          e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)],
        )
      : [];
  return walk(stateDir).filter((f) => {
    if (!f.includes("/Backups/")) return false;
    try {
      return readFileSync(f, "utf8").includes(needle);
    } catch {
      return false; // replaced meanwhile
    }
  });
}

/** A front end's environment confined to `home` (its XDG folders), with a 5 s workbench grace. */
export function envOf(home: string): Record<string, string> {
  return { ...homeEnv(home), CCB_WORKBENCH_GRACE: "5" };
}

/**
 * Wait until no workbench host process of `home` runs (read from /proc: its command line and its
 * environment); they stop a grace period after the last front end left.
 */
export async function hostsGone(home: string): Promise<void> {
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

/** The shared-workbench record published under `home`'s state folder. */
export function recordOf(home: string): { pid: number; secret: string; gatewayUrl: string; instance: string } {
  const dir = join(home, "state/ccb/workbenches");
  const name = readdirSync(dir).find((n) => /^[0-9a-f]{32}\.json$/.test(n));
  if (!name) throw new Error("no workbench record is published");
  return JSON.parse(readFileSync(join(dir, name), "utf8"));
}
