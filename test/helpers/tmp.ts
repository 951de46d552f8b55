import { execFileSync } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A real temporary directory (optionally a git repo) removed on dispose: `await using dir = tmpdir()`. */
export function tmpdirFixture(options: { git?: boolean; prefix?: string } = {}): {
  path: string;
  [Symbol.asyncDispose](): Promise<void>;
  cleanup(): void;
} {
  const path = realpathSync(mkdtempSync(join(tmpdir(), options.prefix ?? "ccb-test-")));
  if (options.git) {
    const env = { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };
    execFileSync("git", ["init", "-q", "-b", "main", path], { env });
    execFileSync("git", ["-C", path, "config", "user.email", "test@example.com"], { env });
    execFileSync("git", ["-C", path, "config", "user.name", "ccb test"], { env });
  }
  const cleanup = () => rmSync(path, { recursive: true, force: true });
  return {
    path,
    cleanup,
    async [Symbol.asyncDispose]() {
      cleanup();
    },
  };
}
