import { z } from "zod";
import { CcbError } from "../core/errors.ts";
import { defineTool } from "./kernel.ts";
import { DEBUG_RUN } from "./shared/debug.ts";
import {
  DEFAULT_OUTPUT_CHARS,
  DEFAULT_WAIT_MS,
  ExecutionInput,
  MAX_OUTPUT_CHARS,
  MAX_WAIT_MS,
  waitForRun,
} from "./shared/task.ts";

export default defineTool({
  name: "task_run",
  title: "Run a task",
  description:
    "Run a task of the workspace (see task_list) in the live workbench, where the person sees it in the terminal panel, " +
    "and wait for its end: its exit code, the problems its problem matchers ($tsc, $eslint-stylish, ...) reported as " +
    "diagnostics with file and 1-based line, and the end of its output. Waits at most `timeoutMs`; a task still running " +
    "then gives a TIMEOUT answer with its execution id: call task_run {execution} to wait again, task_stop to stop it. " +
    "It runs with the user's rights in a workspace folder, without ccb's secrets in its environment. Needs the editor bridge.",
  input: z.object({
    name: z
      .string()
      .min(1)
      .max(500)
      .optional()
      .describe('The task\'s name as task_list shows it (e.g. "build", or "npm: build").'),
    source: z
      .string()
      .max(200)
      .optional()
      .describe('Its source when two tasks share a name ("Workspace" for tasks.json, "npm", "typescript", ...).'),
    execution: ExecutionInput.optional().describe(
      "Instead of a name: a run that is still running (from a TIMEOUT answer): wait for it again and read its output.",
    ),
    timeoutMs: z
      .number()
      .int()
      .min(0)
      .max(MAX_WAIT_MS)
      .optional()
      .describe(`How long to wait for the end, in milliseconds (default ${DEFAULT_WAIT_MS}, at most ${MAX_WAIT_MS}).`),
    maxOutputChars: z
      .number()
      .int()
      .min(0)
      .max(MAX_OUTPUT_CHARS)
      .optional()
      .describe(`How much of the end of the output to return, in characters (default ${DEFAULT_OUTPUT_CHARS}).`),
  }),
  annotations: DEBUG_RUN,
  needsBridge: true,
  async execute(args, ctx) {
    ctx.core.bridge.require();
    if ((args.name === undefined) === (args.execution === undefined))
      throw new CcbError(
        "INVALID_ARGUMENT",
        "Give either `name` (to start a task) or `execution` (to wait for a run).",
        {
          hint: "task_list lists the tasks and the runs.",
        },
      );
    let execution = args.execution;
    if (args.name !== undefined) {
      const started = await ctx.core.bridge.call(
        "tasks.run",
        { name: args.name, ...(args.source !== undefined ? { source: args.source } : {}) },
        { signal: ctx.signal },
      );
      execution = started.run.execution;
    }
    return waitForRun(
      ctx,
      execution as string,
      args.timeoutMs ?? DEFAULT_WAIT_MS,
      args.maxOutputChars ?? DEFAULT_OUTPUT_CHARS,
    );
  },
});
