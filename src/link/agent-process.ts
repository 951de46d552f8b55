import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { childEnv } from "../core/child-env.ts";
import type { Logger } from "../core/log.ts";

export interface AgentCommand {
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
}

/**
 * One agent process in its own process group, so closing the connection can kill the agent and
 * everything it started. stdout/stdin carry ACP (NDJSON); stderr passes through to ours.
 */
export class AgentProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #killTimer: NodeJS.Timeout | undefined;

  constructor(cmd: AgentCommand, log: Logger) {
    this.child = spawn(cmd.command, cmd.args, {
      cwd: cmd.cwd,
      // The environment policy: no secret of ccb's, except the agent's own model credentials.
      env: childEnv(process.env, { agent: true, extra: cmd.env }),
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    this.child.stderr.on("data", (d: Buffer) => process.stderr.write(d));
    this.exited = new Promise((resolve) => {
      this.child.on("exit", (code, signal) => {
        if (this.#killTimer) clearTimeout(this.#killTimer);
        resolve({ code, signal });
      });
      this.child.on("error", (err) => {
        log.error(`agent failed to start: ${cmd.command}: ${err.message}`);
        resolve({ code: 127, signal: null });
      });
    });
    // A closed pipe is the agent leaving, not our crash.
    this.child.stdin.on("error", () => {});
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** SIGTERM to the whole group, SIGKILL after a grace period. */
  kill(graceMs = 2000): void {
    const pid = this.child.pid;
    if (pid === undefined || this.child.exitCode !== null || this.child.signalCode !== null) return;
    signalGroup(pid, "SIGTERM");
    this.#killTimer = setTimeout(() => signalGroup(pid, "SIGKILL"), graceMs);
    this.#killTimer.unref();
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}
