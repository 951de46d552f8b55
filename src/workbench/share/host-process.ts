import { spawn } from "node:child_process";
import { closeSync, constants, fstatSync, ftruncateSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { childEnv } from "../../core/child-env.ts";
import { createCore } from "../../core/core.ts";
import { CcbError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import { selfCommand } from "../../util/self.ts";
import { type RuntimeOptions, runtimeArgv } from "../runtime-flags.ts";
import { startOwner } from "./owner.ts";
import type { FrontEnd } from "./protocol.ts";
import { ensureRecordsDir, readRecord, recordsDir, type ShareRecord, shareKey } from "./record.ts";

/**
 * The detached workbench host: the shared workbench of a set of roots in a process of its own
 * (`ccb workbench host`), so that no front end ending (`ccb ide -- claude` returning, a kill -9)
 * moves it: the person's tab, its links and the workbench's own terminals stay.
 *
 * The first front end that needs the workbench spawns the host under the record lock (spawnHost):
 * in its own session, with the environment every child of ccb gets (no secret) but without that
 * front end's containment marker, so the front end's supervisor leaves it alone. The host starts a
 * supervisor of its own (cli/main.ts), so the runtime and Chromium it starts end with it, however it
 * ends. Every front end, the first one too, attaches over the host's loopback gateway (remote.ts);
 * terminals a front end started on it are killed when that front end leaves (host.ts).
 *
 * It stops a grace period after the last front end left (CCB_WORKBENCH_GRACE seconds, default
 * ${DEFAULT_GRACE_S}), on SIGTERM or SIGINT; open tabs say so at once (alive.ts). Its log is
 * `<state>/ccb/workbenches/<key>.host.log` (0600).
 */

export const DEFAULT_GRACE_S = 600;
/** Longest wait for the first front end (the one that spawned the host attaches within milliseconds). */
const FIRST_ATTACH_MS = 60_000;
/** Longest wait for a spawned host's record. */
const PUBLISH_TIMEOUT_MS = 60_000;
const LOG_MAX_BYTES = 4 * 1024 * 1024;

export interface HostSpec {
  roots: string[];
  /** The front end that starts it (shown by `ccb workbench status`). */
  startedBy: FrontEnd;
  options: RuntimeOptions;
  /** The gateway of a host that died: its port is asked for first (hot exit keys backups by it). */
  previousUrl?: string | undefined;
}

/** How long a host stays after its last front end left: CCB_WORKBENCH_GRACE (seconds), else the default. */
export function hostGraceMs(value: string | undefined): number {
  if (value === undefined || value === "") return DEFAULT_GRACE_S * 1000;
  const s = Number(value);
  if (!Number.isFinite(s) || s < 0)
    throw new CcbError(
      "CONFIG_INVALID",
      `CCB_WORKBENCH_GRACE must be a number of seconds (0 or more), got "${value}".`,
    );
  return Math.round(s * 1000);
}

/** The command line of `ccb workbench host` for a spec (nothing secret: roots and runtime flags). */
export function hostArgs(spec: HostSpec): string[] {
  const args = ["workbench", "host", "--started-by", spec.startedBy];
  for (const r of spec.roots) args.push("--workspace", r);
  args.push(...runtimeArgv(spec.options));
  if (spec.previousUrl) args.push("--previous-url", spec.previousUrl);
  return args;
}

/** The host's environment: the one child policy (no secret), without the spawning front end's containment marker. */
export function hostEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out = childEnv(env);
  for (const k of Object.keys(out)) if (k.startsWith("CCB_SCOPE_")) delete out[k];
  return out;
}

export function hostLogPath(key: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(recordsDir(env), `${key}.host.log`);
}

/** The log file, opened for appending without following a symlink (0600); cut when it grew past LOG_MAX_BYTES. */
function openLog(path: string): number {
  const fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new CcbError("PERMISSION_DENIED", `The workbench host's log ${path} is not a file.`);
    if (st.size > LOG_MAX_BYTES) ftruncateSync(fd, 0);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return fd;
}

function logTail(path: string, lines = 12): string {
  try {
    return readFileSync(path, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

/**
 * Spawn the host for `spec` and wait for its record (call with the record lock held: the host
 * publishes while the lock keeps other front ends waiting, then they and the caller attach).
 */
export async function spawnHost(
  spec: HostSpec,
  o: { env: NodeJS.ProcessEnv; log: Logger; signal?: AbortSignal | undefined },
): Promise<ShareRecord> {
  const key = shareKey(spec.roots);
  await ensureRecordsDir(o.env);
  const logPath = hostLogPath(key, o.env);
  const fd = openLog(logPath);
  const { command, args } = selfCommand(hostArgs(spec));
  const t0 = performance.now();
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn(command, args, {
      detached: true, // its own session and process group: the front end's terminal hangup and group kill miss it
      stdio: ["ignore", "ignore", fd],
      env: hostEnv(o.env),
      cwd: spec.roots[0],
    });
  } finally {
    closeSync(fd);
  }
  child.unref();
  let exited: string | undefined;
  child.once("exit", (code, signal) => {
    exited = signal ? `signal ${signal}` : `exit code ${code}`;
  });
  child.once("error", (err) => {
    exited = err.message;
  });
  const gone = (why: string) =>
    new CcbError("RUNTIME_UNAVAILABLE", `The workbench host did not start (${why}).`, {
      hint: `Its log is ${logPath}:\n${logTail(logPath)}`,
    });
  while (performance.now() - t0 < PUBLISH_TIMEOUT_MS) {
    if (o.signal?.aborted) break;
    const record = await readRecord(key, o.env);
    if (record && record.pid === child.pid) {
      o.log.info(
        `share: started the workbench host (pid ${child.pid}) in ${Math.round(performance.now() - t0)} ms; its log: ${logPath}`,
      );
      return record;
    }
    if (exited) throw gone(exited);
    await new Promise((r) => setTimeout(r, 50));
  }
  try {
    if (child.pid) process.kill(-child.pid, "SIGTERM");
  } catch {
    // already gone
  }
  throw gone(o.signal?.aborted ? "cancelled" : `no record within ${PUBLISH_TIMEOUT_MS / 1000} s`);
}

/**
 * `ccb workbench host`: run the workbench of `spec.roots`, publish it, and stay until `graceMs`
 * after the last front end left (or a signal). Resolves with the exit code.
 */
export async function runHost(
  spec: HostSpec,
  o: {
    log: Logger;
    env?: NodeJS.ProcessEnv;
    graceMs: number;
    announce?: (line: string) => void;
    /** Stop on SIGTERM/SIGINT (the command does; a test in-process does not). */
    signals?: boolean;
  },
): Promise<number> {
  const env = o.env ?? process.env;
  const log = o.log;
  const core = createCore({ roots: spec.roots, log });
  const key = shareKey(spec.roots);
  const held = await startOwner(
    {
      core,
      editor: core.claimEditor("the workbench host"),
      log,
      owner: "host",
      startedBy: spec.startedBy,
      options: spec.options,
      env,
      graceMs: o.graceMs,
    },
    key,
    spec.previousUrl,
  );
  log.info(
    `host: pid ${process.pid} runs the workbench of ${core.workspace.roots.join(", ")} at ${held.gatewayUrl}; it stops ${o.graceMs / 1000} s after the last front end leaves`,
  );
  void held.ready.then(() => {
    const url = held.url();
    o.announce?.(
      url
        ? `ccb workbench host: running; open ${url} (a one-time link; \`ccb workbench link\` prints a fresh one)`
        : `ccb workbench host: the workbench is unavailable: ${core.bridge.status().reason}`,
    );
  });
  return new Promise<number>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    let stopping = false;
    const stop = (why: string) => {
      if (stopping) return;
      stopping = true;
      clearTimeout(timer);
      log.info(`host: stopping: ${why}`);
      void (async () => {
        await held.close().catch((err: Error) => log.warn(`host: close: ${err.message}`));
        await core.dispose().catch(() => undefined);
        resolve(0);
      })();
    };
    const arm = (ms: number, why: string) => {
      clearTimeout(timer);
      timer = setTimeout(() => stop(why), ms);
    };
    arm(Math.max(o.graceMs, FIRST_ATTACH_MS), "no front end attached");
    held.onPeersChange?.((n) => {
      if (n > 0) clearTimeout(timer);
      else arm(o.graceMs, `the last front end left ${o.graceMs / 1000} s ago`);
    });
    if (o.signals ?? true) {
      for (const sig of ["SIGTERM", "SIGINT"] as const) process.on(sig, () => stop(sig));
      // its own session has no terminal to hang up; a hangup sent anyway does not end the workbench
      process.on("SIGHUP", () => log.info("host: SIGHUP ignored (SIGTERM stops the host)"));
    }
  });
}
