import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";

/**
 * A real terminal for tests: one tmux server of its own (`-L <socket>`, no user config) running one
 * command in a pane; the test types into it and reads the screen, as a person (or an ACP client's
 * terminal) would.
 */
export class TmuxPane {
  private readonly socket = `ccb-test-${randomBytes(6).toString("hex")}`;

  /** Start `argv` (each word quoted for the pane's shell) with exactly `env` as its environment. */
  constructor(argv: string[], env: Record<string, string>) {
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const assignments = Object.entries(env).map(([k, v]) => quote(`${k}=${v}`));
    // the exit status stays on screen, and the pane stays open to be read
    const line = `env -i ${assignments.join(" ")} ${argv.map(quote).join(" ")}; echo "EXIT=$?"; sleep 600`;
    this.tmux(["-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "200", "-y", "50", line]);
  }

  private tmux(args: string[]): string {
    return execFileSync("tmux", ["-L", this.socket, ...args], { encoding: "utf8" });
  }

  /** The whole screen (joined wrapped lines). */
  screen(): string {
    return this.tmux(["capture-pane", "-p", "-J", "-t", "t"]);
  }

  /** Type text literally (no key names), then Enter when asked. */
  type(text: string, enter = true): void {
    this.tmux(["send-keys", "-t", "t", "-l", text]);
    if (enter) this.tmux(["send-keys", "-t", "t", "Enter"]);
  }

  /** The pid of the pane's shell. */
  panePid(): number {
    return Number(this.tmux(["list-panes", "-t", "t", "-F", "#{pane_pid}"]).trim());
  }

  /** Poll the screen until `re` matches (the test's own timeout bounds the wait). */
  async waitFor(re: RegExp): Promise<string> {
    for (;;) {
      const s = this.screen();
      if (re.test(s)) return s;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  close(): void {
    try {
      this.tmux(["kill-server"]);
    } catch {
      // already gone
    }
  }
}
