/**
 * The output of an install's child processes (npm, node-gyp, compilers): kept out of the person's
 * terminal, in a file of its own under ccb's state folder (`<state>/ccb/logs/`, folder 0700, file
 * 0600, never through a symlink), named when the install ends and shown (its tail) when a step fails.
 * The newest KEEP logs stay; older ones are removed when a new one opens.
 */
import { closeSync, constants, mkdirSync, openSync, readdirSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { stateDir } from "../util/paths.ts";

const KEEP = 5;
const TAIL_BYTES = 64 * 1024;

/** Colour and cursor escapes, and carriage-return redraws: a tail shown to a person is plain text. */
function plainText(s: string): string {
  return s
    .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "")
    .split("\n")
    .map((l) => l.slice(l.lastIndexOf("\r") + 1))
    .join("\n");
}

export class InstallLog {
  #fd: number | undefined;
  #tail = "";

  private constructor(
    readonly path: string,
    fd: number,
  ) {
    this.#fd = fd;
  }

  /** Open a new log `<state>/ccb/logs/<name>-<time>-<pid>.log`. */
  static open(name: string, env: NodeJS.ProcessEnv = process.env): InstallLog {
    const dir = join(stateDir(env), "logs");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    const path = join(dir, `${name}-${stamp}-${process.pid}.log`);
    const fd = openSync(
      path,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_APPEND,
      0o600,
    );
    const old = readdirSync(dir)
      .filter((n) => n.startsWith(`${name}-`) && n.endsWith(".log"))
      .sort()
      .slice(0, -KEEP);
    for (const n of old) rmSync(join(dir, n), { force: true });
    return new InstallLog(path, fd);
  }

  write(chunk: Buffer | string): void {
    const text = typeof chunk === "string" ? chunk : chunk.toString("utf8");
    this.#tail = (this.#tail + text).slice(-TAIL_BYTES);
    if (this.#fd === undefined) return;
    try {
      writeSync(this.#fd, text);
    } catch {
      // a full disk must not hide the install's own error: the tail is still in memory
    }
  }

  /** A heading for the next command's output. */
  section(title: string): void {
    this.write(`\n=== ${title} (${new Date().toISOString()})\n`);
  }

  /** The last `lines` non-empty lines written, as plain text. */
  tail(lines = 25): string {
    return plainText(this.#tail)
      .split("\n")
      .filter((l) => l.trim() !== "")
      .slice(-lines)
      .join("\n");
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }
}
