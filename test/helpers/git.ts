import { execFile, execFileSync, spawnSync } from "node:child_process";
import { createServer, type Server, type Socket } from "node:net";

/** Environment for setting up fixtures with plain git (no user or system config). */
export const plainGitEnv: NodeJS.ProcessEnv = {
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("GIT_"))),
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_TERMINAL_PROMPT: "0",
  GIT_AUTHOR_NAME: "fixture",
  GIT_AUTHOR_EMAIL: "fixture@example.com",
  GIT_COMMITTER_NAME: "fixture",
  GIT_COMMITTER_EMAIL: "fixture@example.com",
};

/** Plain git for fixture setup and for control runs that prove a planted attack is live. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, env: plainGitEnv, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** Plain git that may fail (control runs). */
export function gitMayFail(cwd: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync("git", args, {
    cwd,
    env: plainGitEnv,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Plain git that may fail, without blocking the event loop (when the peer lives in this process). */
export function gitAsync(cwd: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile("git", args, { cwd, env: plainGitEnv, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** A TCP server on 127.0.0.1 that accepts connections and never answers (a hung remote). */
export async function silentServer(): Promise<{
  port: number;
  connected: Promise<Socket>;
  closed: Promise<void>;
  close(): Promise<void>;
}> {
  const sockets: Socket[] = [];
  let onConnect!: (s: Socket) => void;
  let onClosed!: () => void;
  const connected = new Promise<Socket>((r) => (onConnect = r));
  const closed = new Promise<void>((r) => (onClosed = r));
  const server: Server = createServer((s) => {
    sockets.push(s);
    s.on("error", () => {});
    s.resume(); // read (and drop) what the client sends, so its hang-up is seen
    s.on("close", () => onClosed());
    onConnect(s);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    connected,
    closed,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
