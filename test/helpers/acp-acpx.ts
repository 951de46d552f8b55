import { type ChildProcess, spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ccbCommand } from "./cli.ts";
import { node24, peersDir } from "./peers.ts";

/** acpx's CLI script (installed by scripts/setup-peers.sh; it needs Node >= 22.13, so it runs on the peers' Node 24). */
export function acpxScript(): string {
  const p = join(peersDir, "acpx/node_modules/acpx/dist/cli.js");
  if (!existsSync(p))
    throw new Error(`acpx is not installed at ${p}. Run scripts/setup-peers.sh (CI does this in .ci/run).`);
  return p;
}

export interface AcpxRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** JSON-RPC frames of `--format json` output. */
  frames: any[];
  /** stopReason of every prompt response in the output. */
  stopReasons: string[];
}

/**
 * acpx, the headless ACP client, driving `ccb acp` as agent "ccb" (from a throwaway HOME's
 * ~/.acpx/config.json). Persistent sessions keep a queue-owner process (and the agent) alive
 * between calls; `cleanup` closes them and removes HOME.
 */
export class Acpx {
  readonly home: string;
  readonly cwd: string;
  readonly dataDir: string;
  private readonly owners = new Set<number>();
  /** One line per acpx run: arguments, exit code, stop reasons (printed by the tests as the transcript). */
  readonly transcript: string[] = [];

  constructor(readonly env: Record<string, string>) {
    this.home = realpathSync(mkdtempSync(join(tmpdir(), "ccb-acpx-home-")));
    this.cwd = join(this.home, "project");
    this.dataDir = join(this.home, "ccb-data");
    mkdirSync(this.cwd, { recursive: true });
    mkdirSync(join(this.home, ".acpx"), { recursive: true });
    const agent = ccbCommand(["acp"]);
    writeFileSync(
      join(this.home, ".acpx", "config.json"),
      JSON.stringify({ agents: { ccb: { argv: [agent.command, ...agent.args] } } }),
    );
  }

  private fullEnv(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: this.home,
      XDG_CONFIG_HOME: join(this.home, ".config"),
      CCB_DATA_DIR: this.dataDir,
      CCB_LOG_LEVEL: "warn",
      CCB_RETRY_BASE_MS: "20",
      ...this.env,
    };
    for (const [k, v] of Object.entries(extra)) {
      if (v === undefined) delete env[k];
      else env[k] = v;
    }
    return env;
  }

  spawn(args: string[], extraEnv: Record<string, string | undefined> = {}): ChildProcess {
    return spawn(node24(), [acpxScript(), ...args], {
      cwd: this.cwd,
      env: this.fullEnv(extraEnv),
      stdio: ["ignore", "pipe", "pipe"],
    });
  }

  /** Run acpx to completion (killed after `timeoutMs`). */
  async run(args: string[], extraEnv: Record<string, string | undefined> = {}, timeoutMs = 180_000): Promise<AcpxRun> {
    return this.note(args, await Acpx.collect(this.spawn(args, extraEnv), timeoutMs));
  }

  note(args: string[], r: AcpxRun): AcpxRun {
    const err = r.frames.find((f) => f?.error)?.error;
    this.transcript.push(
      `acpx ${args.join(" ")} -> exit ${r.code}${r.stopReasons.length ? `, stopReason ${r.stopReasons.join(",")}` : ""}${err ? `, error ${err.code}` : ""}`,
    );
    return r;
  }

  static collect(child: ChildProcess, timeoutMs = 180_000): Promise<AcpxRun> {
    return new Promise((resolve, reject) => {
      let stdout = "";
      let stderr = "";
      child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
      child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      child.on("error", reject);
      child.on("close", (code) => {
        clearTimeout(timer);
        const frames: any[] = [];
        for (const line of stdout.split("\n")) {
          if (!line.startsWith("{")) continue;
          try {
            frames.push(JSON.parse(line));
          } catch {
            // not a frame
          }
        }
        const stopReasons = frames
          .filter((f) => typeof f?.result?.stopReason === "string")
          .map((f) => f.result.stopReason as string);
        resolve({ code, stdout, stderr, frames, stopReasons });
      });
    });
  }

  /** The queue owner of the cwd's session (from `acpx ccb status`), remembered for cleanup. */
  async ownerPid(): Promise<number> {
    const r = await this.run(["ccb", "status"]);
    const pid = Number(/^pid: (\d+)$/m.exec(r.stdout)?.[1]);
    if (!Number.isInteger(pid)) throw new Error(`no queue owner in acpx status: ${r.stdout}${r.stderr}`);
    this.owners.add(pid);
    return pid;
  }

  async cleanup(): Promise<void> {
    await this.run(["ccb", "sessions", "close"]).catch(() => undefined);
    for (const pid of this.owners) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    rmSync(this.home, { recursive: true, force: true });
  }
}

/** Direct children of a process (from /proc). */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) out.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}
