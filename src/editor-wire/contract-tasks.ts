/**
 * The tasks block of the bridge contract (merged into `extensionMethods` of editor/contract.ts):
 * the workspace's tasks (tasks.json and the ones the editor's extensions detect, such as npm
 * scripts), run in the workbench where the person sees them, with their exit code, the end of
 * their output and the problems their problem matchers reported.
 *
 * Conventions: paths are absolute; ranges zero-based (as the rest of the contract). A run is named
 * by its `execution` id (the extension's own), valid while the workbench runs.
 */
import { z } from "zod";
import { Diagnostic } from "./contract-shapes.ts";

export const TaskInfo = z.object({
  name: z.string(),
  /** Who defines it: "Workspace" (tasks.json), "npm", "typescript", ... */
  source: z.string(),
  /** The definition's type ("shell", "process", "npm", "typescript", ...). */
  type: z.string(),
  /** The workspace folder it belongs to, when it belongs to one. */
  folder: z.string().optional(),
  group: z.string().optional(),
  detail: z.string().optional(),
  background: z.boolean(),
  problemMatchers: z.array(z.string()),
  /** tasks.json matchers given inline (objects, not names): a run by ccb does not apply them. */
  inlineMatchers: z.number().int().optional(),
  /** Why ccb cannot run it (it runs inside an extension, it has dependsOn, ...); absent when it can. */
  notRunnable: z.string().optional(),
});
export type TaskInfo = z.infer<typeof TaskInfo>;

export const TaskRunState = z.enum(["running", "ended"]);

export const TaskRunInfo = z.object({
  execution: z.string(),
  name: z.string(),
  source: z.string(),
  state: TaskRunState,
  exitCode: z.number().int().nullable(),
  /** The command line as run (variables substituted), the directory it ran in. */
  command: z.string(),
  cwd: z.string(),
  startedAt: z.number(),
});
export type TaskRunInfo = z.infer<typeof TaskRunInfo>;

export const TaskResult = z.object({
  run: TaskRunInfo,
  timedOut: z.boolean(),
  /** The end of the output (at most maxOutputChars, CRLF as LF). */
  output: z.string(),
  /** Characters of output in all; more than output's length when the head was cut. */
  outputChars: z.number().int(),
  /** The diagnostics the task's problem matchers reported (once it ended). */
  problems: z.array(z.object({ path: z.string(), diagnostic: Diagnostic })),
});
export type TaskResult = z.infer<typeof TaskResult>;

export const taskMethods = {
  "tasks.list": {
    params: z.object({}),
    result: z.object({ tasks: z.array(TaskInfo), runs: z.array(TaskRunInfo) }),
    timeoutMs: 60_000,
  },
  /** Start a task by name (and source when two share a name); answers once it runs. */
  "tasks.run": {
    params: z.object({ name: z.string().min(1).max(500), source: z.string().max(200).optional() }),
    result: z.object({ run: TaskRunInfo }),
    timeoutMs: 60_000,
  },
  /** Until the run ended (and its problems settled), at most `timeoutMs` (then timedOut, state running). */
  "tasks.wait": {
    params: z.object({
      execution: z.string().min(1).max(100),
      timeoutMs: z.number().int().min(0).max(600_000),
      maxOutputChars: z.number().int().min(0).max(1_000_000),
    }),
    result: TaskResult,
    timeoutMs: 0,
  },
  "tasks.stop": {
    params: z.object({ execution: z.string().min(1).max(100) }),
    result: z.object({ stopped: z.boolean(), run: TaskRunInfo }),
    timeoutMs: 30_000,
  },
} as const;
