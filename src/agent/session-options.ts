import { existsSync, realpathSync, statSync } from "node:fs";
import { isAbsolute } from "node:path";
import { CcbError } from "../core/errors.ts";

/**
 * Per-session options clients send with session/new (and load/resume), in the shapes acpx and the
 * Claude agent adapter use:
 *   _meta.systemPrompt: "text"            replaces ccb's system prompt
 *   _meta.systemPrompt: { append: "text" } is added after it
 *   _meta.claudeCode.options.maxTurns: N   (or _meta.maxTurns) caps model requests per prompt
 *   additionalDirectories: [abs, ...]      extra workspace roots, confined like the cwd
 */
export interface SessionOptions {
  systemPrompt?: string | { append: string };
  maxTurns?: number;
  additionalDirectories?: string[];
}

function record(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function positiveInt(v: unknown): number | undefined {
  return typeof v === "number" && Number.isInteger(v) && v > 0 ? v : undefined;
}

/** The options of one session/new|load|resume request; undefined fields were not sent. */
export function sessionOptionsFrom(meta: unknown, additionalDirectories: unknown): SessionOptions {
  const m = record(meta);
  const out: SessionOptions = {};
  const sp = m?.systemPrompt;
  if (typeof sp === "string" && sp.trim() !== "") out.systemPrompt = sp;
  else if (typeof record(sp)?.append === "string" && (record(sp)!.append as string) !== "")
    out.systemPrompt = { append: record(sp)!.append as string };
  const turns = positiveInt(record(record(m?.claudeCode)?.options)?.maxTurns) ?? positiveInt(m?.maxTurns);
  if (turns !== undefined) out.maxTurns = turns;
  if (Array.isArray(additionalDirectories) && additionalDirectories.length > 0)
    out.additionalDirectories = additionalDirectories.map(checkDirectory);
  return out;
}

function checkDirectory(p: unknown): string {
  if (typeof p !== "string" || !isAbsolute(p))
    throw new CcbError("INVALID_ARGUMENT", `additionalDirectories entries must be absolute paths: ${String(p)}`);
  if (!existsSync(p) || !statSync(p).isDirectory())
    throw new CcbError("INVALID_ARGUMENT", `additionalDirectories entry is not an existing directory: ${p}`);
  return realpathSync(p);
}

/** Later options override earlier ones field by field. */
export function mergeOptions(base: SessionOptions, next: SessionOptions): SessionOptions {
  return { ...base, ...next };
}

/** The system prompt sent to the model, after the session's replace/append option. */
export function applySystemPrompt(base: string, option: SessionOptions["systemPrompt"]): string {
  if (option === undefined) return base;
  if (typeof option === "string") return option;
  return `${base}\n\n${option.append}`;
}
