/**
 * The debug block of the bridge contract (merged into `extensionMethods` of editor/contract.ts):
 * launch configurations, sessions, breakpoints and the Debug Adapter Protocol requests ccb makes
 * through the workbench's own debugger, so the person sees the session live and can take it over.
 *
 * Conventions of this block: paths are absolute (the server confines them before sending); lines
 * and columns are 1-based, as in DAP (the workbench's client asks adapters for 1-based lines) and
 * as the debug tools speak them. `session` is the id of a root debug session (the one started;
 * child sessions an adapter spawns for the real process belong to it); without it, the latest live
 * session ccb started or joined, else the workbench's active one when ccb started or joined it.
 * A session the person started is listed (debug.sessions) but served to the other calls only once
 * ccb joined it (debug.join, after the server checked its file fields as debug.start's are);
 * until then they answer PERMISSION_DENIED. Requests to the debug adapter are bounded (seconds):
 * one that does not answer, or a session that is not paused, answers DEBUG_NOT_STOPPED or TIMEOUT.
 */
import { z } from "zod";

const JsonObject = z.record(z.string(), z.unknown());

/** The fields of a launch configuration that name a file or folder: each must lie inside the workspace (checked by ccb, read by the extension). */
export const CONFIG_PATH_FIELDS = ["program", "cwd", "envFile", "runtimeExecutable"] as const;

export const DebugState = z.enum(["running", "stopped", "ended"]);
export type DebugState = z.infer<typeof DebugState>;

export const DebugFrame = z.object({
  id: z.number().int(),
  name: z.string(),
  /** Absolute file path when the frame's source is a file. */
  path: z.string().optional(),
  /** The source's name when it is not a file (e.g. node:internal/...). */
  source: z.string().optional(),
  line: z.number().int(),
  column: z.number().int(),
});
export type DebugFrame = z.infer<typeof DebugFrame>;

export const DebugSessionInfo = z.object({
  id: z.string(),
  name: z.string(),
  type: z.string(),
  state: DebugState,
  /** Started through ccb (vs by the person). */
  byCcb: z.boolean(),
  /** A session the person started that ccb joined (debug.join): the debug calls may use it. */
  joined: z.boolean(),
  /** The configuration's request: "launch" or "attach". */
  request: z.string().optional(),
});
export type DebugSessionInfo = z.infer<typeof DebugSessionInfo>;

export const BreakpointSpec = z.object({
  path: z.string(),
  line: z.number().int().min(1),
  column: z.number().int().min(1).optional(),
  condition: z.string().max(2000).optional(),
  hitCondition: z.string().max(200).optional(),
  logMessage: z.string().max(2000).optional(),
});
export const BreakpointInfo = BreakpointSpec.extend({ id: z.string(), enabled: z.boolean() });
export type BreakpointInfo = z.infer<typeof BreakpointInfo>;

export interface DebugVariableT {
  name: string;
  value: string;
  type?: string | undefined;
  /** Expand later with this reference (while the program stays stopped); 0/absent: a leaf. */
  ref?: number | undefined;
  children?: DebugVariableT[] | undefined;
  /** Children left out by the size limit. */
  more?: number | undefined;
}
export const DebugVariable: z.ZodType<DebugVariableT> = z.lazy(() =>
  z.object({
    name: z.string(),
    value: z.string(),
    type: z.string().optional(),
    ref: z.number().int().optional(),
    children: z.array(DebugVariable).optional(),
    more: z.number().int().optional(),
  }),
);

const SessionParam = { session: z.string().optional() };

export const WaitResult = z.object({
  session: DebugSessionInfo,
  state: DebugState,
  timedOut: z.boolean(),
  reason: z.string().optional(),
  description: z.string().optional(),
  threadId: z.number().int().optional(),
  frame: DebugFrame.optional(),
  /** The debuggee's exit code when the adapter reported it (js-debug reports non-zero ones only). */
  exitCode: z.number().int().nullable(),
});
export type WaitResult = z.infer<typeof WaitResult>;

export const debugMethods = {
  "debug.configurations": {
    params: z.object({}),
    result: z.object({
      configurations: z.array(
        z.object({ name: z.string(), type: z.string(), request: z.string(), folder: z.string() }),
      ),
      compounds: z.array(z.string()),
    }),
    timeoutMs: 15_000,
  },
  /** Start by launch.json name or an inline configuration; answers once the session has started. */
  "debug.start": {
    params: z.object({
      name: z.string().optional(),
      configuration: JsonObject.optional(),
      folder: z.string().optional(),
      /**
       * With `name`: that configuration as the folder's .vscode/launch.json on disk holds it (read by
       * the server through the workspace), used when the editor has not re-read the file yet.
       */
      launch: JsonObject.optional(),
    }),
    result: z.object({ session: DebugSessionInfo }),
    timeoutMs: 120_000,
  },
  "debug.sessions": {
    params: z.object({}),
    result: z.object({ sessions: z.array(DebugSessionInfo) }),
    timeoutMs: 15_000,
  },
  /** A root session and the file fields of its resolved configuration (program, cwd, envFile), for the join check. */
  "debug.describe": {
    params: z.object({ session: z.string() }),
    result: z.object({ session: DebugSessionInfo, paths: z.record(z.string(), z.string()) }),
    timeoutMs: 15_000,
  },
  /** Let the other debug calls use a session the person started (the server checked it first). */
  "debug.join": {
    params: z.object({ session: z.string() }),
    result: z.object({ session: DebugSessionInfo }),
    timeoutMs: 15_000,
  },
  "debug.setBreakpoints": {
    params: z.object({ breakpoints: z.array(BreakpointSpec).min(1).max(100) }),
    result: z.object({ breakpoints: z.array(BreakpointInfo) }),
    timeoutMs: 15_000,
  },
  /** Remove breakpoints: by id, by file (and line), or all; answers the ones left. */
  "debug.clearBreakpoints": {
    params: z.object({
      ids: z.array(z.string()).optional(),
      path: z.string().optional(),
      line: z.number().int().min(1).optional(),
      all: z.boolean().optional(),
    }),
    result: z.object({ removed: z.number().int(), breakpoints: z.array(BreakpointInfo) }),
    timeoutMs: 15_000,
  },
  "debug.breakpoints": {
    params: z.object({}),
    result: z.object({ breakpoints: z.array(BreakpointInfo) }),
    timeoutMs: 15_000,
  },
  /** Until the session is stopped or has ended, at most `timeoutMs` (then state running, timedOut). */
  "debug.wait": {
    params: z.object({ ...SessionParam, timeoutMs: z.number().int().min(0).max(600_000) }),
    result: WaitResult,
    timeoutMs: 0,
  },
  "debug.stack": {
    params: z.object({
      ...SessionParam,
      threadId: z.number().int().optional(),
      levels: z.number().int().min(1).max(200),
    }),
    result: z.object({
      threadId: z.number().int(),
      frames: z.array(DebugFrame),
      totalFrames: z.number().int().optional(),
    }),
    timeoutMs: 30_000,
  },
  /** The scopes of a frame with their variables, or one variable's children (`ref`), expanded `depth` levels. */
  "debug.variables": {
    params: z.object({
      ...SessionParam,
      frameId: z.number().int().optional(),
      ref: z.number().int().min(1).optional(),
      scope: z.string().optional(),
      depth: z.number().int().min(1).max(4),
      maxItems: z.number().int().min(1).max(500),
      maxValueChars: z.number().int().min(16).max(10_000),
    }),
    result: z.object({
      scopes: z.array(
        z.object({
          name: z.string(),
          expensive: z.boolean(),
          variables: z.array(DebugVariable),
          more: z.number().int().optional(),
        }),
      ),
    }),
    timeoutMs: 60_000,
  },
  "debug.evaluate": {
    params: z.object({
      ...SessionParam,
      expression: z.string().min(1).max(10_000),
      frameId: z.number().int().optional(),
      context: z.enum(["repl", "watch", "hover"]).optional(),
      maxValueChars: z.number().int().min(16).max(100_000),
    }),
    result: z.object({ result: z.string(), type: z.string().optional(), ref: z.number().int().optional() }),
    timeoutMs: 60_000,
  },
  "debug.control": {
    params: z.object({
      ...SessionParam,
      action: z.enum(["continue", "next", "stepIn", "stepOut", "pause"]),
      threadId: z.number().int().optional(),
    }),
    result: z.object({ session: DebugSessionInfo, threadId: z.number().int() }),
    timeoutMs: 30_000,
  },
  "debug.stop": {
    params: z.object(SessionParam),
    result: z.object({ stopped: z.boolean(), session: DebugSessionInfo.optional() }),
    timeoutMs: 30_000,
  },
  /** The debug console output since the last read of this session (bounded: the oldest is dropped first). */
  "debug.output": {
    params: z.object({ ...SessionParam, maxChars: z.number().int().min(100).max(1_000_000) }),
    result: z.object({ session: DebugSessionInfo, output: z.string(), dropped: z.number().int() }),
    timeoutMs: 15_000,
  },
} as const;
