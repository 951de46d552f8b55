import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, resolve } from "node:path";
import { childEnv } from "../../core/child-env.ts";
import { CcbError } from "../errors.ts";

/** The environment policy's child environment (no secrets, ccb's containment marker), with `extra` merged on top. */
export function terminalEnv(
  base: NodeJS.ProcessEnv,
  extra: Record<string, string> | undefined,
  defaults: Record<string, string>,
): Record<string, string> {
  const env = childEnv(base);
  Object.assign(env, defaults);
  for (const [k, v] of Object.entries(extra ?? {})) {
    if (k.length === 0 || k.includes("=") || k.includes("\0")) {
      throw new CcbError("INVALID_ARGUMENT", `Invalid environment variable name: ${JSON.stringify(k)}`);
    }
    if (typeof v !== "string" || v.includes("\0")) {
      throw new CcbError("INVALID_ARGUMENT", `Environment variable ${k} must be a string without NUL bytes.`);
    }
    env[k] = v;
  }
  return env;
}

function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The user's shell: $SHELL when it is an executable, else /bin/bash, else /bin/sh. */
export function defaultShell(env: Record<string, string>): string {
  const shell = env.SHELL;
  if (shell && isAbsolute(shell) && isExecutableFile(shell)) return shell;
  if (isExecutableFile("/bin/bash")) return "/bin/bash";
  return "/bin/sh";
}

/**
 * Resolve a program name the way a shell would: a name with a slash relative to `cwd`, otherwise
 * the first executable match on PATH. Throws NOT_FOUND with a hint when there is none.
 */
export function resolveProgram(command: string, env: Record<string, string>, cwd: string): string {
  if (command.length === 0 || command.includes("\0")) {
    throw new CcbError("INVALID_ARGUMENT", "The command must be a non-empty program name without NUL bytes.");
  }
  if (command.includes("/")) {
    const p = resolve(cwd, command);
    if (isExecutableFile(p)) return p;
  } else {
    for (const dir of (env.PATH ?? "/usr/local/bin:/usr/bin:/bin").split(delimiter)) {
      if (!dir) continue;
      const p = resolve(dir, command);
      if (isExecutableFile(p)) return p;
    }
  }
  const hint = /\s/.test(command)
    ? '`command` is one program, not a shell line: pass its arguments in `args`, or run the line through a shell (command "bash", args ["-lc", "..."]).'
    : "Check the program name and PATH, or omit `command` to start the user's shell.";
  throw new CcbError("NOT_FOUND", `Command not found: ${command}`, { hint });
}
