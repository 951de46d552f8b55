import { z } from "zod";
import type { Core } from "../../core/core.ts";
import type { TaskResult, TaskRunInfo } from "../../editor-wire/contract.ts";
import type { ToolContext } from "../kernel.ts";
import { displayPath, fromWireRange, rangeText } from "./editor.ts";
import { plainOutput } from "./terminal.ts";

/** Shared by the task tools: the run id they take, and how a run and its result are shown. */

export const ExecutionInput = z
  .string()
  .min(1)
  .max(100)
  .describe('The run id a task_run answer gave (e.g. "task-1"); task_list lists the runs.');

export const DEFAULT_WAIT_MS = 60_000;
export const MAX_WAIT_MS = 600_000;
export const DEFAULT_OUTPUT_CHARS = 20_000;
export const MAX_OUTPUT_CHARS = 262_144;

export function runLine(core: Core, r: TaskRunInfo): string {
  const state = r.state === "running" ? "running" : `exited with code ${r.exitCode ?? "?"}`;
  return `"${r.name}" (${r.source}) ${state} [execution ${r.execution}]; ran \`${r.command}\` in ${displayPath(core, r.cwd)}`;
}

/** Wait (bounded) for a run and show its end: exit code, problems, the tail of its output; TIMEOUT when it still runs. */
export async function waitForRun(
  ctx: ToolContext,
  execution: string,
  timeoutMs: number,
  maxOutputChars: number,
): Promise<{ text: string; structured: Record<string, unknown> }> {
  const r: TaskResult = await ctx.core.bridge.call(
    "tasks.wait",
    { execution, timeoutMs, maxOutputChars },
    { signal: ctx.signal, timeoutMs: timeoutMs + 30_000 },
  );
  const problems = r.problems.map((p) => ({
    path: displayPath(ctx.core, p.path),
    range: fromWireRange(p.diagnostic.range),
    severity: p.diagnostic.severity,
    message: p.diagnostic.message,
    ...(p.diagnostic.source ? { source: p.diagnostic.source } : {}),
    ...(p.diagnostic.code !== undefined ? { code: p.diagnostic.code } : {}),
  }));
  const output = plainOutput(r.output);
  const cut = r.outputChars > r.output.length;
  const lines: string[] = [];
  if (r.timedOut)
    lines.push(
      `TIMEOUT: the task "${r.run.name}" is still running after ${Math.round(timeoutMs / 1000)} s (execution ${r.run.execution}); ` +
        "it goes on in the workbench's terminal panel.",
      `Wait again and read its output: task_run {"execution":"${r.run.execution}"}. Stop it: task_stop {"execution":"${r.run.execution}"}.`,
    );
  lines.push(`Task ${runLine(ctx.core, r.run)}.`);
  if (!r.timedOut)
    lines.push(
      problems.length
        ? `${problems.length} problem(s) reported by its problem matchers:`
        : "No problems reported by its problem matchers.",
    );
  for (const p of problems)
    lines.push(
      `${p.path}:${rangeText(p.range)} ${p.severity}: ${p.message}${p.source ? ` [${p.source}${p.code !== undefined ? ` ${p.code}` : ""}]` : ""}`,
    );
  lines.push(
    cut
      ? `--- output (the last ${r.output.length} of ${r.outputChars} characters) ---`
      : `--- output (${r.outputChars} characters) ---`,
    output || "(no output)",
  );
  return {
    text: lines.join("\n"),
    structured: {
      ...r.run,
      cwd: displayPath(ctx.core, r.run.cwd),
      timedOut: r.timedOut,
      problems,
      output,
      outputChars: r.outputChars,
      outputTruncated: cut,
    },
  };
}
