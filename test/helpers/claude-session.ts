import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bounded } from "./bounded.ts";
import { claudeBin } from "./peers.ts";

/**
 * The real Claude Code CLI in interactive mode under a pseudo-terminal (util-linux `script`), as
 * testing-with-real-peers.md describes: throwaway HOME, onboarding/trust/API-key dialogs
 * pre-answered, pointed at an IDE port and a fake Messages API.
 */

export interface ClaudeOptions {
  cwd: string;
  home: string;
  tmp: string;
  idePort: number;
  apiUrl: string;
  allowedTools?: string[];
  permissionMode?: string;
  env?: NodeJS.ProcessEnv;
}

export const FAKE_API_KEY = "sk-ant-api03-ccbtestkey-0123456789abcdefghijklmnopqrstuvwxyz";

function shq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** ~/.claude.json that skips the first-run, trust and API-key dialogs. */
export function writeClaudeHome(home: string, workspace: string): void {
  mkdirSync(join(home, ".claude"), { recursive: true });
  writeFileSync(
    join(home, ".claude.json"),
    JSON.stringify({
      hasCompletedOnboarding: true,
      customApiKeyResponses: { approved: [FAKE_API_KEY.slice(-20)], rejected: [] },
      hasIdeAutoConnectDialogBeenShown: true,
      projects: { [workspace]: { hasTrustDialogAccepted: true } },
    }),
  );
}

/** A claude test's directories under `root`: the workspace (proj), claude's HOME and its TMPDIR. */
export interface ClaudeDirs {
  ws: string;
  home: string;
  ctmp: string;
  /** Where claude looks for IDE lock files (~/.claude/ide). */
  ideLocks: string;
}

export function claudeDirs(root: string): ClaudeDirs {
  const home = join(root, "home");
  return { ws: join(root, "proj"), home, ctmp: join(root, "tmp"), ideLocks: join(home, ".claude", "ide") };
}

/** Create them, claude's HOME set up for the workspace (its first-run dialogs answered). */
export function makeClaudeDirs({ ws, home, ctmp }: ClaudeDirs): void {
  for (const d of [ws, home, ctmp]) mkdirSync(d);
  writeClaudeHome(home, ws);
}

/** The environment claude runs with in tests (no proxies, no network side traffic). */
export function claudeEnv(o: { home: string; tmp: string; apiUrl: string; idePort?: number }): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: o.home,
    TERM: "xterm-256color",
    LANG: "C.UTF-8",
    ENABLE_IDE_INTEGRATION: "true",
    ANTHROPIC_BASE_URL: o.apiUrl,
    ANTHROPIC_API_KEY: FAKE_API_KEY,
    ENABLE_TOOL_SEARCH: "false",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL: "1",
    CLAUDE_CODE_TMPDIR: o.tmp,
    TMPDIR: o.tmp,
    NO_PROXY: "127.0.0.1,localhost,::1",
    no_proxy: "127.0.0.1,localhost,::1",
  };
  if (o.idePort !== undefined) env.CLAUDE_CODE_SSE_PORT = String(o.idePort);
  return env;
}

export class PtyProcess {
  readonly child: ChildProcess;
  output = "";
  readonly #waiters: { re: RegExp; from: number; resolve: (m: string) => void }[] = [];
  readonly exited: Promise<number | null>;

  constructor(command: string, cwd: string, env: NodeJS.ProcessEnv) {
    this.child = spawn("script", ["-qfec", command, "/dev/null"], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    const onData = (d: Buffer) => {
      this.output += d.toString("utf8");
      for (const w of [...this.#waiters]) {
        const m = stripAnsi(this.output.slice(w.from)).match(w.re);
        if (m) {
          this.#waiters.splice(this.#waiters.indexOf(w), 1);
          w.resolve(m[0]);
        }
      }
    };
    this.child.stdout?.on("data", onData);
    this.child.stderr?.on("data", onData);
    this.exited = new Promise((resolve) => this.child.on("close", (code) => resolve(code)));
  }

  /**
   * Resolves when the screen output (ANSI stripped), from `from` on, matches; rejects after `ms`
   * (default 3 minutes) with the end of the screen, so a stuck turn names itself.
   */
  waitFor(re: RegExp, from = 0, ms = 180_000): Promise<string> {
    const m = stripAnsi(this.output.slice(from)).match(re);
    if (m) return Promise.resolve(m[0]);
    const waiter = { re, from, resolve: (_: string) => {} };
    const found = new Promise<string>((resolve) => {
      waiter.resolve = resolve;
      this.#waiters.push(waiter);
    });
    return bounded(found, ms, () => {
      const i = this.#waiters.indexOf(waiter);
      if (i >= 0) this.#waiters.splice(i, 1);
      return `claude's screen never showed ${re} (its last screen: ${JSON.stringify(stripAnsi(this.output.slice(from)).slice(-1500))})`;
    });
  }

  type(text: string): void {
    this.child.stdin?.write(text);
  }
}

export function stripAnsi(s: string): string {
  return s.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*(\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]/g, "");
}

/** Start claude under a pty. */
export function startClaude(o: ClaudeOptions): PtyProcess {
  const flags = ["--permission-mode", o.permissionMode ?? "default"];
  if (o.allowedTools && o.allowedTools.length > 0) flags.push("--allowedTools", ...o.allowedTools);
  const cmd = `stty cols 160 rows 50; exec ${shq(claudeBin())} ${flags.map(shq).join(" ")}`;
  return new PtyProcess(cmd, o.cwd, { ...claudeEnv(o), ...o.env });
}

/** Stop claude (by the pid it announced), wait for it, then the `script` wrapper. */
export async function stopClaude(p: PtyProcess, claudePid: number | undefined): Promise<void> {
  if (claudePid) {
    try {
      process.kill(claudePid, "SIGTERM");
    } catch {
      // already gone
    }
  }
  const t = setTimeout(() => {
    if (claudePid) {
      try {
        process.kill(claudePid, "SIGKILL");
      } catch {
        // gone
      }
    }
    p.child.kill("SIGKILL");
  }, 10_000);
  await p.exited;
  clearTimeout(t);
}
