import { z } from "zod";
import type { TerminalInfo } from "../../core/terminals/types.ts";

/** Shared schema pieces and formatting of the terminal_* tools. */

export const TerminalId = z
  .string()
  .min(1)
  .max(64)
  .describe('Terminal id, as returned by terminal_create or terminal_list (e.g. "t1").');

/** CSI, OSC and other escape sequences, for model-visible text of raw output. */
// Matches terminal escapes and control characters.
const ANSI =
  /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[PX^_][^\u001b]*\u001b\\|\u001b[@-Z\\-_]|[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

/** Raw terminal output as plain text: escapes and control characters removed, CRLF as LF. */
export function plainOutput(raw: string): string {
  return raw.replace(/\r\n/g, "\n").replace(ANSI, "");
}

export function describeTerminal(t: TerminalInfo): string {
  const cmd = [t.command, ...t.args].join(" ");
  const state = t.running ? "running" : t.signal ? `killed by ${t.signal}` : `exited with code ${t.exitCode}`;
  const kind = t.isPty ? `${t.backend} PTY ${t.cols}x${t.rows}` : "pipe fallback, no TTY";
  return `${t.id} "${t.title}": ${cmd} — ${state} (pid ${t.pid ?? "?"}, ${kind}, cwd ${t.cwd}${t.startedBy ? `, started by ${t.startedBy}` : ""})`;
}

/** The structured form of a terminal's info (model-visible: no environment, no secrets). */
export function terminalStructured(t: TerminalInfo): Record<string, unknown> {
  return { ...t };
}
