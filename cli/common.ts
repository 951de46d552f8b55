import { CcbError } from "../src/core/errors.ts";
import { registerSecret, secretValue } from "../src/core/secret-vault.ts";
import { repeatedFlag } from "./argv.ts";
import { createLogging, fatalLines } from "./logging.ts";

/** Options every subcommand accepts. */
export const commonArgs = {
  "log-level": {
    type: "string",
    description:
      "Log level: silent, error, warn, info, debug, trace (env CCB_LOG_LEVEL; default info). Logs go to stderr.",
    valueHint: "level",
  },
  "log-file": {
    type: "string",
    description: "Write logs to this file instead of stderr (env CCB_LOG_FILE).",
    valueHint: "path",
  },
  "log-format": {
    type: "string",
    description:
      "Log format: text (default) or json, one JSON object per line with time, level, tag and msg (env CCB_LOG_FORMAT).",
    valueHint: "text|json",
  },
} as const;

/** The --workspace flag of every command that takes roots (read by `workspaceRoots`, repeatable). */
export const workspaceArg = {
  type: "string",
  alias: "w",
  description:
    "Workspace folder; repeat for several (env CCB_WORKSPACE, ':'-separated). Default: the current directory. Every tool path is confined to these folders.",
  valueHint: "dir",
} as const;

/** Workspace roots from repeated --workspace flags, else CCB_WORKSPACE (path-list separated), else the cwd. */
export function workspaceRoots(
  rawArgs: string[],
  envValue = process.env.CCB_WORKSPACE,
): { roots: string[]; source: "flag" | "env" | "cwd" } {
  const roots = repeatedFlag(rawArgs, "workspace", "--workspace needs a directory.", "w");
  if (roots.length > 0) return { roots, source: "flag" };
  if (envValue)
    return { roots: envValue.split(process.platform === "win32" ? ";" : ":").filter(Boolean), source: "env" };
  return { roots: [process.cwd()], source: "cwd" };
}

export function setupLogging(args: {
  "log-level"?: string | undefined;
  "log-file"?: string | undefined;
  "log-format"?: string | undefined;
}) {
  return createLogging({ level: args["log-level"], file: args["log-file"], format: args["log-format"] });
}

/** Print an error for a person (no stack trace for expected errors) and set the exit code. */
export function reportFatal(err: unknown): never {
  if (err instanceof CcbError) {
    process.stderr.write(fatalLines(err.message, err.hintFor()));
    process.exit(1);
  }
  const e = err as Error;
  process.stderr.write(fatalLines(e?.message ?? String(err)));
  if (process.env.CCB_LOG_LEVEL === "debug" && e?.stack) process.stderr.write(`${e.stack}\n`);
  process.exit(1);
}

/**
 * Keep a started server running until SIGINT/SIGTERM/SIGHUP (or `until` resolves), then close it
 * once and exit 0.
 */
export function closeOnSignals(handle: { close(): Promise<void> }, until?: Promise<unknown>): () => void {
  let closing = false;
  const shutdown = () => {
    if (closing) return;
    closing = true;
    void handle.close().then(
      () => process.exit(0),
      (err: unknown) => reportFatal(err),
    );
  };
  for (const s of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(s, shutdown);
  if (until) void until.then(shutdown);
  return shutdown;
}

/**
 * A secret that may come from a flag, its environment variable, or `<ENV>_FILE`. A flag value is
 * visible to every local user in `ps`, so it gets a warning, and ccb's command line is rewritten
 * (process.title) to hide it from then on.
 */
export function secretArg(flagValue: string | undefined, flag: string, envName: string): string | undefined {
  if (flagValue) {
    process.stderr.write(
      `ccb: warning: ${flag} puts the token on the command line, where ps shows it to every local user; ` +
        `use ${envName}_FILE=<file> (or ${envName}) instead.\n`,
    );
    registerSecret(flagValue);
    hideFromPs(flagValue);
    return flagValue;
  }
  return secretValue(envName);
}

function hideFromPs(value: string): void {
  try {
    process.title = process.argv.map((a) => (a.includes(value) ? a.split(value).join("***") : a)).join(" ");
  } catch {
    // not supported by this runtime
  }
}
