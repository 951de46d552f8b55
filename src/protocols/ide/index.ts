import { type ChildProcess, spawn } from "node:child_process";
import { childEnv as policyEnv } from "../../core/child-env.ts";
import { createCore } from "../../core/core.ts";
import { CcbError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import { LOOPBACK_NAMES } from "../../net/loopback.ts";
import type { WorkbenchRuntimeOptions } from "../../workbench/runtime-flags.ts";
import { lockDir, runningServers } from "./discovery-file.ts";
import { CLAUDE_HINT_NAMES } from "./hint-names.ts";
import { type IdeServer, startIde } from "./ide.ts";
import { isClaude, writeMcpConfig } from "./mcp-tools.ts";
import { openBrowser } from "./open-link.ts";
import type { IdeWorkbench } from "./workbench.ts";

/**
 * `ccb ide`: the workbench (unless --no-workbench) + the IDE server + the lock file; optionally a
 * command (e.g. `claude`) run in the same terminal with CLAUDE_CODE_SSE_PORT set; everything shut
 * down when it exits (its exit code becomes ours) or on SIGINT/SIGTERM/SIGHUP.
 */

export interface RunIdeOptions {
  roots: string[];
  rootsSource: "flag" | "env" | "cwd";
  open: boolean;
  workbench: boolean;
  /** Runtime flags for the workbench (as `ccb serve` takes them). */
  workbenchOptions?: WorkbenchRuntimeOptions;
  /** The command after `--`, if any. */
  command: string[];
  /** Register ccb's editor tools with a `claude` command (its --mcp-config); default true. */
  mcpTools?: boolean;
  log: Logger;
  /** Lines for the person (the workbench URL, the port). */
  announce(line: string): void;
  /** Where the first start of the workbench is, for the person (stderr); none while a command owns the terminal. */
  progress?: ((line: string) => void) | undefined;
}

/**
 * Tell the person where the first start of the shared workbench is: its host logs the start's
 * timeline (src/workbench/timeline.ts) to its own log, which this follows until the editor connects.
 */
async function followFirstStart(roots: readonly string[], tell: (line: string) => void, signal: AbortSignal) {
  const [{ followTimeline }, { hostLogPath }, { shareKey }] = await Promise.all([
    import("../../workbench/timeline.ts"),
    import("../../workbench/share/host-process.ts"),
    import("../../workbench/share/record.ts"),
  ]);
  await followTimeline(hostLogPath(shareKey([...roots])), tell, { signal }).catch(() => undefined);
}

/** A running workbench as `ccb ide` needs it. */
/** NO_PROXY with the loopback names added (keeping what is there). */
export function withLoopbackNoProxy(value: string | undefined): string {
  const parts = (value ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  for (const l of LOOPBACK_NAMES) if (!parts.includes(l)) parts.push(l);
  return parts.join(",");
}

/** The environment for the command run by `ccb ide -- <command>`. */
export function ideCommandEnv(base: NodeJS.ProcessEnv, port: number): NodeJS.ProcessEnv {
  const noProxy = withLoopbackNoProxy(base.NO_PROXY ?? base.no_proxy);
  // The child policy (src/core/child-env.ts): no ccb secret, but the agent's own model credentials.
  return policyEnv(base, {
    agent: true,
    extra: { CLAUDE_CODE_SSE_PORT: String(port), ENABLE_IDE_INTEGRATION: "true", NO_PROXY: noProxy, no_proxy: noProxy },
  });
}

/** `ccb ide --status`: ccb's running IDE servers, one line each (never the token); the shared workbenches follow. */
export function statusLines(env: NodeJS.ProcessEnv = process.env): string[] {
  const servers = runningServers(lockDir(env));
  if (servers.length === 0) return ["No ccb IDE servers are running."];
  return servers.map(
    (s) => `port ${s.port}  pid ${s.body.pid}  ${s.body.ideName}  ${s.body.workspaceFolders.join(", ")}`,
  );
}

/** What to tell a person whose `-- <command>` could not start. */
function spawnFailure(cmd: string, err: NodeJS.ErrnoException): string {
  if (err.code !== "ENOENT") return `could not run ${cmd}: ${err.message}`;
  const claude = /(^|\/)claude$/.test(cmd);
  return `could not run ${cmd}: it is not on PATH.${claude ? " Install the Claude Code CLI with `npm i -g @anthropic-ai/claude-code` (or see https://docs.anthropic.com/en/docs/claude-code), then run ccb ide -- claude again." : ""}`;
}

const SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/** Catch SIGINT/SIGTERM/SIGHUP from now on; `next` resolves with the first one. */
function catchSignals(): { next: Promise<NodeJS.Signals>; release(): void } {
  let resolveNext!: (s: NodeJS.Signals) => void;
  const next = new Promise<NodeJS.Signals>((r) => (resolveNext = r));
  const handler = (s: NodeJS.Signals) => resolveNext(s);
  for (const s of SIGNALS) process.on(s, handler);
  return {
    next,
    release: () => {
      for (const s of SIGNALS) process.off(s, handler);
    },
  };
}

/** Runs until the command exits or a signal arrives; returns the process exit code. */
export async function runIde(options: RunIdeOptions): Promise<number> {
  const log = options.log;
  const signals = catchSignals();
  if (options.rootsSource === "cwd")
    log.info(`workspace: ${options.roots[0]} (the current directory; use --workspace to choose)`);
  const core = createCore({ roots: options.roots, log });
  let workbench: IdeWorkbench | undefined;
  let ide: IdeServer | undefined;
  let removeOpened = (): void => undefined;
  const following = new AbortController();
  const shutdown = async () => {
    following.abort();
    removeOpened();
    await ide?.close().catch((err: Error) => log.warn(`closing the IDE server: ${err.message}`));
    await workbench?.close().catch((err: Error) => log.warn(`closing the workbench: ${err.message}`));
    await core.dispose();
  };
  try {
    if (!options.workbench)
      core.claimEditor("ccb ide --no-workbench").clear("ccb ide was started with --no-workbench.");
    const label = options.command.length > 0 ? `ccb ide -- ${(options.command[0] ?? "").split("/").pop()}` : "ccb ide";
    ide = await startIde({ core, log: log.child("ide"), frontEndLabel: label });
  } catch (err) {
    signals.release();
    await shutdown();
    throw err;
  }
  options.announce(
    options.command.length > 0
      ? `Claude Code IDE server: 127.0.0.1:${ide.port} (${ide.ideName}); starting ${(options.command[0] ?? "").split("/").pop()} connected to it`
      : `Claude Code IDE server: 127.0.0.1:${ide.port} (${ide.ideName}); run \`claude\` in ${ide.workspaceFolders[0]} or set CLAUDE_CODE_SSE_PORT=${ide.port}`,
  );

  if (options.workbench) {
    options.announce("Starting the workbench...");
    if (options.progress && options.command.length === 0)
      void followFirstStart(core.workspace.roots, options.progress, following.signal);
    const starting = import("./workbench.ts").then((m) =>
      m.acquireIdeWorkbench(core, log.child("workbench"), options.workbenchOptions ?? {}),
    );
    const first = await Promise.race([
      starting.then(
        (w) => ({ w }),
        (err: unknown) => ({ err }),
      ),
      signals.next.then((sig) => ({ sig })),
    ]);
    if ("sig" in first || "err" in first) following.abort();
    if ("sig" in first) {
      log.info(`${first.sig}: shutting down`);
      signals.release();
      workbench = await starting.catch(() => undefined);
      await shutdown();
      return 0;
    }
    if ("err" in first) {
      const e =
        first.err instanceof CcbError
          ? first.err
          : new CcbError("RUNTIME_UNAVAILABLE", (first.err as Error).message, { cause: first.err });
      core.claimEditor("ccb ide").clear(`the workbench could not start: ${e.message}`);
      const hint = e.hintFor(CLAUDE_HINT_NAMES);
      options.announce(
        `Workbench unavailable: ${e.message.replace(/\.$/, "")}${hint ? ` (${hint})` : ""}. The IDE server runs without it; editor tools will say so.`,
      );
    } else {
      workbench = first.w;
      const by = first.w.runBy();
      const shared =
        by.kind === "host"
          ? by.startedHere
            ? ` (in the workbench host, pid ${by.pid}: it outlives this session; \`ccb workbench status\`)`
            : ` (shared: the workbench host, pid ${by.pid}, runs it for this workspace)`
          : by.startedHere
            ? ""
            : ` (shared: ccb ${by.kind}, pid ${by.pid}, runs it for this workspace)`;
      options.announce(`Workbench (one-time link)${shared}: ${workbench.url}`);
      if (options.open) {
        // the opener gets a link of its own: the printed one stays the person's to use
        const link = await workbench.link();
        if (link) removeOpened = openBrowser(link, options.announce);
        else
          options.announce("--open: no second one-time link came; open the workbench URL above in a browser yourself.");
      }
    }
  }

  if (options.command.length === 0) {
    const sig = await signals.next;

    signals.release();
    log.info(`${sig}: shutting down`);
    await shutdown();
    return 0;
  }

  signals.release();
  const [cmd, ...cmdArgs] = options.command as [string, ...string[]];
  const mcp =
    options.workbench && options.mcpTools !== false && isClaude(cmd)
      ? writeMcpConfig({ roots: options.roots, ...(options.workbenchOptions ?? {}) })
      : undefined;
  if (mcp) log.info('claude gets ccb\'s editor tools as the MCP server "ccb" (--no-mcp-tools to leave them out)');
  const args = mcp ? ["--mcp-config", mcp.path, ...cmdArgs] : cmdArgs;
  let child: ChildProcess;
  try {
    child = spawn(cmd, args, { stdio: "inherit", env: ideCommandEnv(process.env, ide.port) });
  } catch (err) {
    mcp?.remove();
    await shutdown();
    throw new CcbError("NOT_FOUND", `Could not run ${cmd}: ${(err as Error).message}`);
  }
  // Ctrl-C reaches the command through the terminal; ccb stays up until the command exits.
  const ignoreInt = () => log.debug("SIGINT: left to the command");
  const forward = (sig: NodeJS.Signals) => {
    log.info(`${sig}: stopping ${cmd}`);
    child.kill(sig);
  };
  process.on("SIGINT", ignoreInt);
  process.on("SIGTERM", forward);
  process.on("SIGHUP", forward);
  const code = await new Promise<number>((resolve) => {
    child.once("error", (err) => {
      log.error(spawnFailure(cmd, err as NodeJS.ErrnoException));
      resolve(127);
    });
    child.once("exit", (c, s) => resolve(c ?? (s ? 128 + signalNumber(s) : 1)));
  });
  process.off("SIGINT", ignoreInt);
  process.off("SIGTERM", forward);
  process.off("SIGHUP", forward);
  mcp?.remove();
  await shutdown();
  return code;
}

function signalNumber(s: NodeJS.Signals): number {
  return ({ SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 } as Record<string, number>)[s] ?? 0;
}
