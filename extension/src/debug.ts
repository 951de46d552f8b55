import { randomUUID } from "node:crypto";
import * as vscode from "vscode";
import type {
  DebugFrame,
  DebugSessionInfo,
  DebugState,
  DebugVariableT,
  debugMethods,
  ParamsOf,
  ResultOf,
} from "../../src/editor-wire/contract.ts";
import { CONFIG_PATH_FIELDS } from "../../src/editor-wire/contract-debug.ts";
import { BridgeError, uriPath } from "./convert.ts";

/**
 * Debugging through the workbench's own debugger (the debug block of the contract): sessions start
 * with vscode.debug.startDebugging, so the person sees them live (toolbar, call stack, console) and
 * can take them over; a tracker on every adapter ('*') follows the DAP traffic of whoever drives
 * (stopped / continued / output / terminated), and requests go to the adapter as DAP customRequests.
 */

const OUTPUT_LIMIT = 1_000_000;
const CCB_ID = "__ccbId";
/**
 * A request to a member that is not stopped (a running program, a launcher) answers within this, or
 * the call answers TIMEOUT: such an adapter may hold a request forever.
 */
const DAP_TIMEOUT_MS = 10_000;
/** A global evaluate while nothing is paused: after this, "not paused yet". */
const RUNNING_EVAL_MS = 5_000;
/** The file fields of a configuration the server checks before ccb starts it or joins a person's session. */
const PATH_FIELDS = CONFIG_PATH_FIELDS;

interface Tracked {
  session: vscode.DebugSession;
  /** The root session this one belongs to (itself for a root). */
  rootId: string;
  state: DebugState;
  reason?: string;
  description?: string;
  threadId?: number;
  stoppedAt: number;
  /** The adapter reported a thread (a `thread` or `stopped` event): it runs the program and answers requests about it. */
  threaded: boolean;
}

interface Root {
  id: string;
  byCcb: boolean;
  /** A session the person started that ccb joined. */
  joined: boolean;
  output: string;
  dropped: number;
  exitCode: number | null;
  ended: boolean;
  waiters: Set<() => void>;
}

export type DebugHandlers = {
  [M in keyof typeof debugMethods]: (p: ParamsOf<M>) => Promise<ResultOf<M>>;
};

interface DapFrame {
  id: number;
  name: string;
  line: number;
  column: number;
  source?: { path?: string; name?: string; sourceReference?: number };
}
interface DapVariable {
  name: string;
  value: string;
  type?: string;
  variablesReference: number;
}

/** The file path of a DAP source path: a plain path, or a file:/vscode-remote: URI of this machine. */
function sourceFile(path: string | undefined): string | undefined {
  if (!path) return undefined;
  if (path.startsWith("/")) return path;
  if (/^(file|vscode-remote):/.test(path)) {
    try {
      const p = vscode.Uri.parse(path).path;
      return p.startsWith("/") ? p : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function frameOf(f: DapFrame): DebugFrame {
  const file = sourceFile(f.source?.path);
  const other = f.source?.path ?? f.source?.name;
  return {
    id: f.id,
    name: f.name,
    ...(file ? { path: file } : other ? { source: other } : {}),
    line: f.line,
    column: f.column,
  };
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);

/**
 * The debug log (the "ccb bridge" output channel, kept with a failed test's artifacts): every
 * session's start, and every stop, continue, step, pause and breakpoint the adapter was asked for
 * or reported, by whoever drove it (the person's UI or ccb), so a stop can be traced to its cause.
 */
let debugLog: (line: string) => void = () => undefined;
export function setDebugLog(log: (line: string) => void): void {
  debugLog = log;
}
const logDebug = (line: string) => debugLog(`${new Date().toISOString()} debug: ${line}`);
const CONTROL_REQUESTS = [
  "continue",
  "next",
  "stepIn",
  "stepOut",
  "stepBack",
  "reverseContinue",
  "restartFrame",
  "goto",
];

export class DebugBridge implements vscode.Disposable {
  readonly #sessions = new Map<string, Tracked>();
  readonly #roots = new Map<string, Root>();
  /** Root ids ccb started or joined, latest last. */
  readonly #started: string[] = [];
  readonly #disposables: vscode.Disposable[] = [];

  constructor() {
    this.#disposables.push(
      vscode.debug.registerDebugAdapterTrackerFactory("*", {
        createDebugAdapterTracker: (session) => this.#tracker(session),
      }),
      vscode.debug.onDidStartDebugSession((s) => this.#track(s)),
      vscode.debug.onDidTerminateDebugSession((s) => this.#ended(s)),
    );
  }

  /** Debug sessions that have not ended (any starter: ccb, the person, another extension). */
  get live(): number {
    return [...this.#sessions.values()].filter((t) => t.state !== "ended").length;
  }

  #rootOf(s: vscode.DebugSession): vscode.DebugSession {
    let r = s;
    while (r.parentSession) r = r.parentSession;
    return r;
  }

  #track(s: vscode.DebugSession): Tracked {
    const known = this.#sessions.get(s.id);
    if (known) return known;
    const root = this.#rootOf(s);
    const t: Tracked = { session: s, rootId: root.id, state: "running", stoppedAt: 0, threaded: false };
    this.#sessions.set(s.id, t);
    logDebug(
      `session ${s.id} "${s.name}" (${s.type}) tracked, root ${root.id}${s.parentSession ? `, parent ${s.parentSession.id}` : ""}`,
    );
    if (!this.#roots.has(root.id)) {
      const byCcb = typeof root.configuration[CCB_ID] === "string";
      this.#roots.set(root.id, {
        id: root.id,
        byCcb,
        joined: false,
        output: "",
        dropped: 0,
        exitCode: null,
        ended: false,
        waiters: new Set(),
      });
      if (byCcb) this.#started.push(root.id);
    }
    return t;
  }

  #tracker(session: vscode.DebugSession): vscode.DebugAdapterTracker {
    const t = this.#track(session);
    const notify = () => {
      const root = this.#roots.get(t.rootId);
      if (root) for (const w of [...root.waiters]) w();
    };
    const who = `session ${session.id} "${session.name}"`;
    return {
      onWillReceiveMessage: (m: { type?: string; command?: string; arguments?: Record<string, unknown> }) => {
        if (m.type !== "request") return;
        const command = m.command ?? "";
        if (command === "pause" || command === "setBreakpoints" || CONTROL_REQUESTS.includes(command))
          logDebug(`${who} asked ${command} ${JSON.stringify(m.arguments ?? {})}`);
        if (CONTROL_REQUESTS.includes(command)) {
          t.state = "running";
          notify();
        }
      },
      onDidSendMessage: (m: {
        type?: string;
        event?: string;
        command?: string;
        success?: boolean;
        body?: Record<string, unknown>;
      }) => {
        if (m.type === "response" && m.command === "setBreakpoints")
          logDebug(`${who} answered setBreakpoints ${m.success ? JSON.stringify(m.body ?? {}) : "(failed)"}`);
        if (m.type !== "event") return;
        const body = m.body ?? {};
        if (["stopped", "continued", "breakpoint", "terminated", "exited"].includes(m.event ?? ""))
          logDebug(`${who} event ${m.event} ${JSON.stringify(body)}`);
        switch (m.event) {
          case "thread":
            if (body.reason === "started") t.threaded = true;
            break;
          case "stopped":
            t.threaded = true;
            t.state = "stopped";
            t.reason = typeof body.reason === "string" ? body.reason : "unknown";
            t.description = typeof body.description === "string" ? body.description : undefined;
            t.threadId = typeof body.threadId === "number" ? body.threadId : t.threadId;
            t.stoppedAt = Date.now();
            break;
          case "continued":
            t.state = "running";
            break;
          case "output": {
            const cat = body.category;
            if (cat === "telemetry" || typeof body.output !== "string") return;
            this.#append(t.rootId, body.output);
            break;
          }
          case "exited":
            if (typeof body.exitCode === "number") this.#setExit(t.rootId, body.exitCode);
            break;
          case "terminated":
            t.state = "ended";
            break;
          default:
            return;
        }
        notify();
      },
      onExit: () => {
        t.state = "ended";
        notify();
      },
    };
  }

  #append(rootId: string, text: string): void {
    const root = this.#roots.get(rootId);
    if (!root) return;
    // js-debug reports a non-zero exit only as console text.
    const m = /Process exited with code (-?\d+)/.exec(text);
    if (m) this.#setExit(rootId, Number(m[1]));
    root.output += text;
    if (root.output.length > OUTPUT_LIMIT) {
      const cut = root.output.length - OUTPUT_LIMIT;
      root.output = root.output.slice(cut);
      root.dropped += cut;
    }
  }

  #setExit(rootId: string, code: number): void {
    const root = this.#roots.get(rootId);
    if (root) root.exitCode = code;
  }

  #ended(s: vscode.DebugSession): void {
    const t = this.#sessions.get(s.id);
    if (t) t.state = "ended";
    const root = this.#roots.get(this.#rootOf(s).id);
    if (root && s.id === root.id) root.ended = true;
    if (root) for (const w of [...root.waiters]) w();
  }

  /** The members of a root session's tree. */
  #members(rootId: string): Tracked[] {
    return [...this.#sessions.values()].filter((t) => t.rootId === rootId);
  }

  #rootState(rootId: string): DebugState {
    const root = this.#roots.get(rootId);
    const members = this.#members(rootId);
    if (members.some((m) => m.state === "stopped")) return "stopped";
    if (root?.ended || members.every((m) => m.state === "ended")) return "ended";
    return "running";
  }

  #info(rootId: string): DebugSessionInfo {
    const t = this.#sessions.get(rootId);
    const root = this.#roots.get(rootId);
    const request = t?.session.configuration.request;
    return {
      id: rootId,
      name: t?.session.name ?? "?",
      type: t?.session.type ?? "?",
      state: this.#rootState(rootId),
      byCcb: root?.byCcb ?? false,
      joined: root?.joined ?? false,
      ...(typeof request === "string" ? { request } : {}),
    };
  }

  /** A root the debug calls may use: ccb started it, or joined it. */
  #usable(r: Root): boolean {
    return r.byCcb || r.joined;
  }

  /** A root session by id, usable or not (listing, describe, join). */
  #known(id: string): Root {
    const r = this.#roots.get(id);
    if (!r)
      throw new BridgeError("NOT_FOUND", `No debug session ${id}.`, "debug_status lists the workbench's sessions.");
    return r;
  }

  /**
   * The root session a call is about: one ccb started or joined. A session the person started is
   * refused until ccb joins it (debug_join checks its program is in the workspace first).
   */
  #root(id: string | undefined): Root {
    if (id !== undefined) {
      const r = this.#known(id);
      if (!this.#usable(r))
        throw new BridgeError(
          "PERMISSION_DENIED",
          `Debug session ${id} ("${this.#info(id).name}") was started by the person in the workbench, and ccb has not joined it.`,
          "debug_join joins it (when its program is in the workspace); the person sees every step.",
        );
      return r;
    }
    for (let i = this.#started.length - 1; i >= 0; i--) {
      const r = this.#roots.get(this.#started[i] as string);
      if (r && !r.ended) return r;
    }
    const active = vscode.debug.activeDebugSession;
    if (active) {
      const r = this.#roots.get(this.#track(active).rootId);
      if (r && this.#usable(r)) return r;
    }
    const last = this.#started.at(-1);
    const r = last ? this.#roots.get(last) : undefined;
    if (r) return r;
    const theirs = [...this.#roots.values()].filter((x) => !x.ended && !this.#usable(x));
    if (theirs.length)
      throw new BridgeError(
        "NOT_FOUND",
        `No debug session ccb started or joined. The person's: ${theirs.map((x) => `"${this.#info(x.id).name}" (session ${x.id})`).join(", ")}.`,
        "debug_join {session} joins one of them; debug_start starts one.",
      );
    throw new BridgeError("NOT_FOUND", "No debug session.", "Start one with debug_start.");
  }

  /** Members that stand for the program: the sessions no live member descends from (js-debug's launcher is not one). */
  #leaves(members: Tracked[]): Tracked[] {
    const parents = new Set(members.map((m) => m.session.parentSession?.id).filter((x) => x !== undefined));
    return members.filter((m) => !parents.has(m.session.id));
  }

  /** The session of a tree that requests go to: the last one stopped, else the latest live one that runs the program. */
  #target(root: Root, needStopped: boolean): Tracked {
    const members = this.#members(root.id).filter((m) => m.state !== "ended");
    const stopped = members.filter((m) => m.state === "stopped").sort((a, b) => b.stoppedAt - a.stoppedAt)[0];
    if (stopped) return stopped;
    const state = this.#rootState(root.id);
    if (needStopped)
      throw new BridgeError(
        "DEBUG_NOT_STOPPED",
        state === "ended"
          ? "The debug session has ended."
          : "The program is running: it is not paused yet (no breakpoint hit, no pause).",
        state === "ended"
          ? "Start a new one with debug_start."
          : "Wait for a breakpoint with debug_wait, or pause it with debug_control.",
      );
    const leaves = this.#leaves(members);
    const live = leaves.filter((m) => m.threaded).at(-1) ?? leaves.at(-1);
    if (!live)
      throw new BridgeError("DEBUG_NOT_STOPPED", "The debug session has ended.", "Start a new one with debug_start.");
    return live;
  }

  /** The latest live member of a tree that has a thread. */
  #threaded(root: Root): Tracked | undefined {
    return this.#members(root.id)
      .filter((m) => m.state !== "ended" && m.threaded)
      .at(-1);
  }

  /** Resolve when `cond` holds (checked on every event of the tree) or after `ms`. */
  #until(root: Root, cond: () => boolean, ms: number): Promise<void> {
    if (cond()) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        if (!cond()) return;
        clearTimeout(timer);
        root.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(() => {
        root.waiters.delete(done);
        resolve();
      }, ms);
      root.waiters.add(done);
    });
  }

  /**
   * One DAP request. To a member that is not stopped it is bounded (`bound`, default 10 s): an adapter that does
   * not answer gives TIMEOUT, not a hung call (js-debug's launcher never answers an evaluate). A
   * member stopped on a thread answers what is asked about it (stack, scopes, variables, an evaluate
   * in a frame, a step), however long a busy extension host takes to carry it: that request is bounded
   * only by the server's bound for the whole call (contract-debug.ts), not by a guess here that a
   * starved window (the person's, opening the stopped file) outlasts.
   */
  async #dap<T>(t: Tracked, command: string, args: Record<string, unknown>, bound?: number): Promise<T> {
    const timeoutMs = bound ?? (t.state === "stopped" ? undefined : DAP_TIMEOUT_MS);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      if (timeoutMs === undefined) return;
      timer = setTimeout(
        () =>
          reject(
            new BridgeError(
              "TIMEOUT",
              `The debugger did not answer ${command} within ${Math.round(timeoutMs / 1000)} s (the program is ${this.#rootState(t.rootId)}).`,
              "debug_status shows the session's state; debug_wait waits until it stops.",
            ),
          ),
        timeoutMs,
      );
    });
    try {
      return (await Promise.race([Promise.resolve(t.session.customRequest(command, args)), late])) as T;
    } catch (err) {
      logDebug(`session ${t.session.id}: ${command} failed: ${(err as Error).message}`);
      if (err instanceof BridgeError) throw err;
      throw new BridgeError("BRIDGE_ERROR", `The debugger refused ${command}: ${(err as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  }

  async #threadId(t: Tracked, given: number | undefined): Promise<number> {
    if (given !== undefined) return given;
    if (t.threadId !== undefined) return t.threadId;
    const r = await this.#dap<{ threads: { id: number }[] }>(t, "threads", {});
    const first = r.threads[0];
    if (!first) throw new BridgeError("DEBUG_NOT_STOPPED", "The debuggee has no threads.");
    t.threadId = first.id;
    return first.id;
  }

  /** The top frame of the member's stopped thread; a failed request throws (its reason is the answer). */
  async #topFrame(t: Tracked): Promise<DebugFrame | undefined> {
    if (t.threadId === undefined) return undefined;
    const r = await this.#dap<{ stackFrames: DapFrame[] }>(t, "stackTrace", {
      threadId: t.threadId,
      startFrame: 0,
      levels: 1,
    });
    const f = r.stackFrames[0];
    return f ? frameOf(f) : undefined;
  }

  async #variables(
    t: Tracked,
    ref: number,
    depth: number,
    maxItems: number,
    maxValue: number,
  ): Promise<{ vars: DebugVariableT[]; more?: number }> {
    const r = await this.#dap<{ variables: DapVariable[] }>(t, "variables", { variablesReference: ref });
    const all = r.variables.filter((v) => !(v.name === "this" && v.value === "undefined"));
    const vars: DebugVariableT[] = [];
    for (const v of all.slice(0, maxItems)) {
      const node: DebugVariableT = {
        name: v.name,
        value: clip(v.value, maxValue),
        ...(v.type ? { type: v.type } : {}),
      };
      if (v.variablesReference > 0) {
        node.ref = v.variablesReference;
        if (depth > 1 && !v.name.startsWith("[[")) {
          const sub = await this.#variables(t, v.variablesReference, depth - 1, maxItems, maxValue);
          node.children = sub.vars;
          if (sub.more) node.more = sub.more;
        }
      }
      vars.push(node);
    }
    return all.length > maxItems ? { vars, more: all.length - maxItems } : { vars };
  }

  handlers(): DebugHandlers {
    return {
      "debug.configurations": async () => {
        const configurations: ResultOf<"debug.configurations">["configurations"] = [];
        const compounds: string[] = [];
        for (const f of vscode.workspace.workspaceFolders ?? []) {
          const launch = vscode.workspace.getConfiguration("launch", f.uri);
          for (const c of launch.get<Record<string, unknown>[]>("configurations") ?? [])
            configurations.push({
              name: String(c.name ?? ""),
              type: String(c.type ?? ""),
              request: String(c.request ?? ""),
              folder: uriPath(f.uri),
            });
          for (const c of launch.get<Record<string, unknown>[]>("compounds") ?? [])
            compounds.push(String(c.name ?? ""));
        }
        return { configurations, compounds };
      },
      "debug.start": async (p) => {
        const folders = vscode.workspace.workspaceFolders ?? [];
        const folder = p.folder ? folders.find((f) => uriPath(f.uri) === p.folder) : folders[0];
        let config: Record<string, unknown>;
        if (p.configuration) config = { name: "ccb debug", ...p.configuration };
        else if (p.name) {
          const found = folders
            .flatMap((f) =>
              (
                vscode.workspace.getConfiguration("launch", f.uri).get<Record<string, unknown>[]>("configurations") ??
                []
              ).map((c) => ({ f, c })),
            )
            .find((x) => x.c.name === p.name);
          // The server's copy from disk, checked there (the editor re-reads launch.json seconds after
          // it changed, and the server refuses a name it could not check).
          if (p.launch && p.launch.name === p.name) config = { ...p.launch };
          else if (found) config = { ...found.c };
          else
            throw new BridgeError(
              "NOT_FOUND",
              `No launch configuration named "${p.name}".`,
              "debug_configurations lists them.",
            );
        } else throw new BridgeError("INVALID_ARGUMENT", "Give a configuration name or an inline configuration.");
        const id = randomUUID();
        config[CCB_ID] = id;
        const started = new Promise<vscode.DebugSession>((resolve, reject) => {
          const timer = setTimeout(() => {
            sub.dispose();
            reject(new BridgeError("TIMEOUT", "The debug session did not start within 60 s."));
          }, 60_000);
          const sub = vscode.debug.onDidStartDebugSession((s) => {
            if (s.configuration[CCB_ID] === id && !s.parentSession) {
              clearTimeout(timer);
              sub.dispose();
              resolve(s);
            }
          });
        });
        const ok = await vscode.debug.startDebugging(folder, config as vscode.DebugConfiguration);
        if (!ok) {
          started.catch(() => undefined);
          throw new BridgeError(
            "BRIDGE_ERROR",
            `The workbench could not start "${String(config.name)}" (see its debug console or notifications).`,
          );
        }
        const s = await started;
        this.#track(s);
        return { session: this.#info(s.id) };
      },
      "debug.sessions": async () => ({ sessions: [...this.#roots.keys()].map((id) => this.#info(id)) }),
      "debug.describe": async (p) => {
        const root = this.#known(p.session);
        const config: Record<string, unknown> = this.#sessions.get(root.id)?.session.configuration ?? {};
        const paths: Record<string, string> = {};
        for (const f of PATH_FIELDS) {
          const v = config[f];
          if (typeof v === "string" && v !== "") paths[f] = v;
        }
        return { session: this.#info(root.id), paths };
      },
      "debug.join": async (p) => {
        const root = this.#known(p.session);
        if (!this.#usable(root)) {
          root.joined = true;
          this.#started.push(root.id);
        }
        return { session: this.#info(root.id) };
      },
      "debug.setBreakpoints": async (p) => {
        const bps = p.breakpoints.map(
          (b) =>
            new vscode.SourceBreakpoint(
              new vscode.Location(vscode.Uri.file(b.path), new vscode.Position(b.line - 1, (b.column ?? 1) - 1)),
              true,
              b.condition,
              b.hitCondition,
              b.logMessage,
            ),
        );
        vscode.debug.addBreakpoints(bps);
        return { breakpoints: bps.map(bpInfo) };
      },
      "debug.clearBreakpoints": async (p) => {
        const doomed = vscode.debug.breakpoints.filter((b): b is vscode.SourceBreakpoint => {
          if (!(b instanceof vscode.SourceBreakpoint)) return p.all === true;
          if (p.all) return true;
          if (p.ids?.includes(b.id)) return true;
          if (p.path !== undefined && uriPath(b.location.uri) === p.path)
            return p.line === undefined || b.location.range.start.line === p.line - 1;
          return false;
        });
        vscode.debug.removeBreakpoints(doomed);
        return { removed: doomed.length, breakpoints: sourceBreakpoints() };
      },
      "debug.breakpoints": async () => ({ breakpoints: sourceBreakpoints() }),
      "debug.wait": async (p) => {
        const root = this.#root(p.session);
        if (p.timeoutMs > 0) await this.#until(root, () => this.#rootState(root.id) !== "running", p.timeoutMs);
        // The adapter may still be sending the last output of a process that just ended.
        const state = this.#rootState(root.id);
        const out: ResultOf<"debug.wait"> = {
          session: this.#info(root.id),
          state,
          timedOut: state === "running",
          exitCode: root.exitCode,
        };
        if (state === "stopped") {
          const t = this.#target(root, true);
          if (t.reason) out.reason = t.reason;
          if (t.description) out.description = t.description;
          if (t.threadId !== undefined) out.threadId = t.threadId;
          // Where it stopped, best effort: the person may have continued it since (its reason is logged).
          const frame = await this.#topFrame(t).catch(() => undefined);
          if (frame) out.frame = frame;
          logDebug(
            `wait on ${root.id}: stopped (${t.reason}) in session ${t.session.id}, thread ${t.threadId}, at ${frame ? `${frame.path ?? frame.source}:${frame.line}:${frame.column}` : "(no frame)"}`,
          );
        } else logDebug(`wait on ${root.id}: ${state}`);
        return out;
      },
      "debug.stack": async (p) => {
        const t = this.#target(this.#root(p.session), true);
        const threadId = await this.#threadId(t, p.threadId);
        const r = await this.#dap<{ stackFrames: DapFrame[]; totalFrames?: number }>(t, "stackTrace", {
          threadId,
          startFrame: 0,
          levels: p.levels,
        });
        return {
          threadId,
          frames: r.stackFrames.map(frameOf),
          ...(r.totalFrames !== undefined ? { totalFrames: r.totalFrames } : {}),
        };
      },
      "debug.variables": async (p) => {
        const t = this.#target(this.#root(p.session), true);
        if (p.ref !== undefined) {
          const r = await this.#variables(t, p.ref, p.depth, p.maxItems, p.maxValueChars);
          return {
            scopes: [{ name: "(variable)", expensive: false, variables: r.vars, ...(r.more ? { more: r.more } : {}) }],
          };
        }
        const frameId = p.frameId ?? (await this.#topFrame(t))?.id;
        if (frameId === undefined) throw new BridgeError("DEBUG_NOT_STOPPED", "No frame to read variables of.");
        const r = await this.#dap<{ scopes: { name: string; variablesReference: number; expensive: boolean }[] }>(
          t,
          "scopes",
          { frameId },
        );
        const wanted = p.scope
          ? r.scopes.filter((s) => s.name.toLowerCase().startsWith(p.scope?.toLowerCase() ?? ""))
          : r.scopes.filter((s) => !s.expensive && !/^global$/i.test(s.name));
        const scopes: ResultOf<"debug.variables">["scopes"] = [];
        for (const s of wanted) {
          const v = await this.#variables(t, s.variablesReference, p.depth, p.maxItems, p.maxValueChars);
          scopes.push({ name: s.name, expensive: s.expensive, variables: v.vars, ...(v.more ? { more: v.more } : {}) });
        }
        return { scopes };
      },
      "debug.evaluate": async (p) => {
        const root = this.#root(p.session);
        // Right after a start the program may have no thread yet (js-debug's launcher session, the
        // only member then, never answers an evaluate) or be about to stop at a breakpoint: wait a
        // little for either, bounded, instead of sending the request where nothing answers it.
        if (p.frameId === undefined && this.#rootState(root.id) === "running" && !this.#threaded(root))
          await this.#until(
            root,
            () => this.#rootState(root.id) !== "running" || !!this.#threaded(root),
            RUNNING_EVAL_MS,
          );
        const t = this.#target(root, p.frameId !== undefined);
        type Evaluated = { result: string; type?: string; variablesReference?: number };
        const request = (frameId: number | undefined, timeoutMs?: number) =>
          this.#dap<Evaluated>(
            t,
            "evaluate",
            { expression: p.expression, context: p.context ?? "repl", ...(frameId !== undefined ? { frameId } : {}) },
            timeoutMs,
          );
        let r: Evaluated;
        if (t.state === "stopped") r = await request(p.frameId ?? (await this.#topFrame(t))?.id);
        else {
          const state = this.#rootState(root.id);
          if (state === "ended")
            throw new BridgeError(
              "DEBUG_NOT_STOPPED",
              "The debug session has ended.",
              "Start a new one with debug_start.",
            );
          // A global evaluate in the running program (as the debug console does), bounded.
          try {
            r = await request(undefined, RUNNING_EVAL_MS);
          } catch (err) {
            if (!(err instanceof BridgeError) || err.code !== "TIMEOUT") throw err;
            throw new BridgeError(
              "DEBUG_NOT_STOPPED",
              t.threaded
                ? `The program is running and not paused yet: the debugger did not evaluate it globally within ${RUNNING_EVAL_MS / 1000} s.`
                : "The debug session is still starting (no thread yet): nothing is paused, and the debugger did not evaluate it globally.",
              "Wait for a breakpoint with debug_wait (or pause with debug_control), then evaluate in its frame.",
            );
          }
        }
        return {
          result: clip(r.result, p.maxValueChars),
          ...(r.type ? { type: r.type } : {}),
          ...(r.variablesReference ? { ref: r.variablesReference } : {}),
        };
      },
      "debug.control": async (p) => {
        const root = this.#root(p.session);
        // A pause right after a start: the launcher alone has no thread to pause (see debug.evaluate).
        if (p.action === "pause" && this.#rootState(root.id) === "running" && !this.#threaded(root))
          await this.#until(
            root,
            () => this.#rootState(root.id) !== "running" || !!this.#threaded(root),
            RUNNING_EVAL_MS,
          );
        const t = this.#target(root, p.action !== "pause");
        const threadId = await this.#threadId(t, p.threadId);
        // The tracker marks it running as the request goes out (a stopped event may follow before the answer).
        await this.#dap(t, p.action, { threadId });
        return { session: this.#info(root.id), threadId };
      },
      "debug.stop": async (p) => {
        const root = this.#root(p.session);
        const s = this.#sessions.get(root.id)?.session;
        if (!s || this.#rootState(root.id) === "ended") return { stopped: false, session: this.#info(root.id) };
        const ended = this.#until(root, () => this.#rootState(root.id) === "ended", 20_000);
        await Promise.race([Promise.resolve(vscode.debug.stopDebugging(s)), ended]);
        await ended;
        return { stopped: true, session: this.#info(root.id) };
      },
      "debug.output": async (p) => {
        const root = this.#root(p.session);
        const all = root.output;
        root.output = "";
        const dropped = root.dropped + Math.max(0, all.length - p.maxChars);
        root.dropped = 0;
        return {
          session: this.#info(root.id),
          output: all.length > p.maxChars ? all.slice(all.length - p.maxChars) : all,
          dropped,
        };
      },
    };
  }

  dispose(): void {
    for (const d of this.#disposables) d.dispose();
  }
}

function bpInfo(b: vscode.SourceBreakpoint) {
  return {
    id: b.id,
    path: uriPath(b.location.uri),
    line: b.location.range.start.line + 1,
    ...(b.location.range.start.character > 0 ? { column: b.location.range.start.character + 1 } : {}),
    enabled: b.enabled,
    ...(b.condition ? { condition: b.condition } : {}),
    ...(b.hitCondition ? { hitCondition: b.hitCondition } : {}),
    ...(b.logMessage ? { logMessage: b.logMessage } : {}),
  };
}

function sourceBreakpoints() {
  return vscode.debug.breakpoints
    .filter((b): b is vscode.SourceBreakpoint => b instanceof vscode.SourceBreakpoint)
    .map(bpInfo);
}
