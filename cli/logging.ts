import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { type ConsolaInstance, createConsola, type LogObject } from "consola";
import { type Logger, redact } from "../src/core/log.ts";

export const LOG_LEVELS = { silent: -999, error: 0, warn: 1, info: 3, debug: 4, trace: 5 } as const;
export type LogLevelName = keyof typeof LOG_LEVELS;

export const LOG_FORMATS = ["text", "json"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LoggingOptions {
  level?: string | undefined;
  file?: string | undefined;
  /** text (default) or json: one JSON object per line ({time, level, tag?, msg}). */
  format?: string | undefined;
}

let activeFormat: LogFormat = "text";

function parseFormat(value: string | undefined): LogFormat {
  if (!value) return "text";
  const f = value.toLowerCase();
  if ((LOG_FORMATS as readonly string[]).includes(f)) return f as LogFormat;
  throw new Error(`Unknown log format "${value}". Use one of: ${LOG_FORMATS.join(", ")}.`);
}

/** One log record as a JSON line (already redacted). */
export function jsonLine(level: string, msg: string, tag?: string, date = new Date()): string {
  return `${JSON.stringify({ time: date.toISOString(), level, ...(tag ? { tag } : {}), msg })}\n`;
}

/**
 * A line for the person who started ccb (URLs, "listening on ..."), on stderr: as it is, or as a
 * JSON record under --log-format json. Shown at every log level.
 */
export function announceLine(line: string, tag?: string): void {
  process.stderr.write(activeFormat === "json" ? jsonLine("info", line, tag) : `${line}\n`);
}

/** A fatal error for stderr, as text or as a JSON record. */
export function fatalLines(message: string, hint?: string): string {
  if (activeFormat === "json") return jsonLine("fatal", redact(hint ? `${message} ${hint}` : message));
  return `ccb: ${message}\n${hint ? `${hint}\n` : ""}`;
}

function parseLevel(value: string | undefined): number {
  if (!value) return LOG_LEVELS.info;
  const key = value.toLowerCase() as LogLevelName;
  if (key in LOG_LEVELS) return LOG_LEVELS[key];
  throw new Error(`Unknown log level "${value}". Use one of: ${Object.keys(LOG_LEVELS).join(", ")}.`);
}

function formatArgs(args: unknown[]): string {
  return args.map((a) => (typeof a === "string" ? a : a instanceof Error ? a.message : safeJson(a))).join(" ");
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
 * or to a file with `--log-file`; as text or JSON lines (`--log-format json`). Every line goes through `redact`.
 */
export function createLogging(options: LoggingOptions = {}): { consola: ConsolaInstance; log: Logger } {
  const level = parseLevel(options.level ?? process.env.CCB_LOG_LEVEL);
  const file = options.file ?? process.env.CCB_LOG_FILE;
  const format = parseFormat(options.format ?? process.env.CCB_LOG_FORMAT);
  activeFormat = format;
  // Runtime warnings (deprecations of libraries, ...) would otherwise be printed as plain text.
  if (format === "json") {
    process.emitWarning = ((warning: string | Error) => {
      const msg = typeof warning === "string" ? warning : `${warning.name}: ${warning.message}`;
      process.stderr.write(jsonLine("warn", redact(msg), "runtime"));
    }) as typeof process.emitWarning;
  }
  if (file) mkdirSync(dirname(file), { recursive: true });
  const reporters = file
    ? [
        {
          log(obj: LogObject) {
            const tag = obj.tag ? ` [${obj.tag}]` : "";
            const msg = redact(formatArgs(obj.args));
            const line =
              format === "json"
                ? jsonLine(obj.type, msg, obj.tag, obj.date)
                : `${obj.date.toISOString()} ${obj.type}${tag} ${msg}\n`;
            appendFileSync(file, line, { mode: 0o600 });
          },
        },
      ]
    : [
        {
          log(obj: LogObject) {
            if (format === "json") {
              process.stderr.write(jsonLine(obj.type, redact(formatArgs(obj.args)), obj.tag, obj.date));
              return;
            }
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
