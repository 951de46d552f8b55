import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { createConsola, type ConsolaInstance, type LogObject } from "consola";
import { redact, type Logger } from "../src/core/log.ts";

export const LOG_LEVELS = { silent: -999, error: 0, warn: 1, info: 3, debug: 4, trace: 5 } as const;
export type LogLevelName = keyof typeof LOG_LEVELS;

export interface LoggingOptions {
  level?: string | undefined;
  file?: string | undefined;
}

function parseLevel(value: string | undefined): number {
  if (!value) return LOG_LEVELS.info;
  const key = value.toLowerCase() as LogLevelName;
  if (key in LOG_LEVELS) return LOG_LEVELS[key];
  throw new Error(`Unknown log level "${value}". Use one of: ${Object.keys(LOG_LEVELS).join(", ")}.`);
}

function formatArgs(args: unknown[]): string {
  return args
    .map((a) => (typeof a === "string" ? a : a instanceof Error ? a.message : safeJson(a)))
    .join(" ");
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}

/**
 * consola writing to stderr only (stdout belongs to the protocol in `serve --stdio` and `acp`),
 * or to a file with `--log-file`. Every line goes through `redact`.
 */
export function createLogging(options: LoggingOptions = {}): { consola: ConsolaInstance; log: Logger } {
  const level = parseLevel(options.level ?? process.env.CCB_LOG_LEVEL);
  const file = options.file ?? process.env.CCB_LOG_FILE;
  if (file) mkdirSync(dirname(file), { recursive: true });
  const reporters = file
    ? [
        {
          log(obj: LogObject) {
            const tag = obj.tag ? ` [${obj.tag}]` : "";
            const line = `${obj.date.toISOString()} ${obj.type}${tag} ${redact(formatArgs(obj.args))}\n`;
            appendFileSync(file, line, { mode: 0o600 });
          },
        },
      ]
    : [
        {
          log(obj: LogObject) {
            const tag = obj.tag ? `[${obj.tag}] ` : "";
            const prefix = obj.type === "info" || obj.type === "log" ? "" : `${obj.type}: `;
            process.stderr.write(`ccb ${tag}${prefix}${redact(formatArgs(obj.args))}\n`);
          },
        },
      ];
  const instance = createConsola({ level, reporters, stdout: process.stderr, stderr: process.stderr });
  return { consola: instance, log: wrap(instance) };
}

function wrap(c: ConsolaInstance): Logger {
  return {
    debug: (m, ...a) => c.debug(m, ...a),
    info: (m, ...a) => c.info(m, ...a),
    warn: (m, ...a) => c.warn(m, ...a),
    error: (m, ...a) => c.error(m, ...a),
    child: (tag) => wrap(c.withTag(tag)),
  };
}
