import { type ChildProcess, spawn } from "node:child_process";
import { homedir } from "node:os";
import { basename, isAbsolute, join } from "node:path";
import * as vscode from "vscode";
import type { ParamsOf, ResultOf, TaskInfo, TaskRunInfo, taskMethods } from "../../src/editor-wire/contract.ts";
import { BridgeError, diagnostic, uriPath } from "./convert.ts";

/**
 * The workspace's tasks (the tasks block of the contract). A task runs in the workbench as a task
 * (its terminal in the panel, its problem matchers feeding the Problems panel), but ccb starts its
 * resolved command itself, in a pseudoterminal (CustomExecution), instead of handing it to the
 * terminal's process: so the output is captured here, byte for byte, whether or not a window renders
 * the terminal (shell-integration reads depend on the renderer parsing the stream and miss what
 * came before the listener), the exit code is the child's own, the working directory is checked
 * against the workspace right before the spawn, and the environment is the extension host's (which
 * the workbench runtime got without ccb's secrets) plus the task's own `env`.
 *
 * The problems of a run: the diagnostics of the files whose diagnostics changed while it ran, whose
 * message the run printed (a problem matcher's message comes from the output), so a language
 * server's own findings in the same files are left out.
 */

const OUTPUT_LIMIT = 1_000_000;
const SETTLE_QUIET_MS = 500;
const SETTLE_MAX_MS = 5_000;
/** After the child exits, how long to wait for the task system's end of the task (its matchers done). */
const END_GRACE_MS = 5_000;
const KILL_GRACE_MS = 3_000;
const FINISHED_KEPT = 50;

export type TaskHandlers = {
  [M in keyof typeof taskMethods]: (p: ParamsOf<M>) => Promise<ResultOf<M>>;
};

/** Resolves a path against ccb's workspace (real path, inside a root) or rejects. */
export type ResolvePath = (path: string) => Promise<string>;

const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;

interface Plan {
  file: string;
  args: string[];
  shell: boolean;
  display: string;
  cwd: string;
  env: Record<string, string>;
}

interface Run {
  info: TaskRunInfo;
  output: string;
  total: number;
  child?: ChildProcess;
  execution?: vscode.TaskExecution;
  /** The child exited and the task system ended the task (or its grace passed). */
  exited: boolean;
  taskEnded: boolean;
  settled: boolean;
  changed: Set<string>;
  lastChange: number;
  waiters: Set<() => void>;
}

function folderOf(t: vscode.Task): vscode.WorkspaceFolder | undefined {
  if (t.scope && typeof t.scope === "object") return t.scope;
  return vscode.workspace.workspaceFolders?.[0];
}

function groupName(g: vscode.TaskGroup | undefined): string | undefined {
  if (!g) return undefined;
  for (const [name, v] of [
    ["build", vscode.TaskGroup.Build],
    ["test", vscode.TaskGroup.Test],
    ["clean", vscode.TaskGroup.Clean],
    ["rebuild", vscode.TaskGroup.Rebuild],
  ] as const)
    if (g.id === v.id) return name;
  return g.id;
}

/** The tasks.json entry of a task (by label), for what the API does not show (dependsOn). */
function configEntry(t: vscode.Task): Record<string, unknown> | undefined {
  if (t.source !== "Workspace") return undefined;
  const folder = folderOf(t);
  const tasks = vscode.workspace.getConfiguration("tasks", folder?.uri).get<unknown[]>("tasks") ?? [];
  return tasks.find(
    (e): e is Record<string, unknown> =>
      typeof e === "object" && e !== null && ((e as { label?: unknown }).label ?? "") === t.name,
  );
}

/**
 * The problem matchers of a task by name. The API leaves them out of a tasks.json task it fetched,
 * so they come from its entry; an inline matcher (an object, not a name) cannot be given to a task
 * an extension starts, and is reported as left out.
 */
function matchersOf(t: vscode.Task): { names: string[]; inline: number } {
  if (t.problemMatchers.length > 0) return { names: t.problemMatchers, inline: 0 };
  const raw = configEntry(t)?.problemMatcher;
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  const names = list.filter((m): m is string => typeof m === "string");
  return { names, inline: list.length - names.length };
}

function notRunnable(t: vscode.Task): string | undefined {
  const x = t.execution;
  if (!(x instanceof vscode.ShellExecution) && !(x instanceof vscode.ProcessExecution))
    return "it runs inside an extension (no command line ccb can start); run it from the workbench's Terminal > Run Task";
  if (configEntry(t)?.dependsOn !== undefined)
    return "it has dependsOn: run the tasks it depends on first (task_run each), or from the workbench";
  return undefined;
}

function taskInfo(t: vscode.Task): TaskInfo {
  const folder = folderOf(t);
  const group = groupName(t.group);
  const reason = notRunnable(t);
  const matchers = matchersOf(t);
  return {
    name: t.name,
    source: t.source,
    type: t.definition.type,
    ...(folder ? { folder: folder.uri.fsPath } : {}),
    ...(group ? { group } : {}),
    ...(t.detail ? { detail: t.detail } : {}),
    background: t.isBackground,
    problemMatchers: matchers.names,
    ...(matchers.inline ? { inlineMatchers: matchers.inline } : {}),
    ...(reason ? { notRunnable: reason } : {}),
  };
}

const VARIABLE = /\$\{([^}]+)\}/g;

/** The variables a task's command, args, cwd and env may use here; any other is refused (it could mean anything). */
function substitute(value: string, folder: vscode.WorkspaceFolder | undefined, env: NodeJS.ProcessEnv): string {
  return value.replace(VARIABLE, (whole, name: string) => {
    const root = folder?.uri.fsPath;
    if ((name === "workspaceFolder" || name === "workspaceRoot" || name === "cwd") && root) return root;
    if (name === "workspaceFolderBasename" && root) return basename(root);
    if (name === "pathSeparator" || name === "/") return "/";
    if (name === "userHome") return homedir();
    if (name.startsWith("env:")) return env[name.slice(4)] ?? "";
    if (name.startsWith("config:")) {
      const v = vscode.workspace.getConfiguration(undefined, folder?.uri).get(name.slice(7));
      if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") return String(v);
    }
    throw new BridgeError(
      "INVALID_ARGUMENT",
      `The task uses ${whole}, which ccb does not substitute (it knows workspaceFolder, workspaceFolderBasename, cwd, userHome, pathSeparator, env:NAME, config:NAME).`,
      "Run it from the workbench (Terminal > Run Task), or give the task a fixed value.",
    );
  });
}

const SHELL_SPECIAL = /[\s'"`$\\|&;<>()*?!#~{}[\]]/;

/** One argument of a shell command as VS Code quotes it for a POSIX shell. */
function quote(a: string | vscode.ShellQuotedString): string {
  const value = typeof a === "string" ? a : a.value;
  const quoting =
    typeof a === "string" ? (SHELL_SPECIAL.test(value) ? vscode.ShellQuoting.Strong : undefined) : a.quoting;
  switch (quoting) {
    case vscode.ShellQuoting.Strong:
      return `'${value.replace(/'/g, `'\\''`)}'`;
    case vscode.ShellQuoting.Weak:
      return `"${value.replace(/(["\\`])/g, "\\$1")}"`;
    case vscode.ShellQuoting.Escape:
      return value.replace(/([\s'"`$\\|&;<>()*?!#~{}[\]])/g, "\\$1");
    default:
      return value;
  }
}

async function plan(t: vscode.Task, resolve: ResolvePath): Promise<Plan> {
  const reason = notRunnable(t);
  if (reason) throw new BridgeError("UNSUPPORTED", `ccb cannot run the task "${t.name}": ${reason}.`);
  const folder = folderOf(t);
  const x = t.execution as vscode.ShellExecution | vscode.ProcessExecution;
  const sub = (s: string) => substitute(s, folder, process.env);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  for (const [k, v] of Object.entries(x.options?.env ?? {})) env[k] = sub(v);
  const root = folder?.uri.fsPath;
  const wanted = x.options?.cwd ? sub(x.options.cwd) : root;
  if (!wanted) throw new BridgeError("INVALID_ARGUMENT", `The task "${t.name}" has no folder to run in.`);
  const cwd = await resolve(isAbsolute(wanted) || !root ? wanted : join(root, wanted));
  if (x instanceof vscode.ProcessExecution) {
    const file = sub(x.process);
    const args = x.args.map(sub);
    return { file, args, shell: false, display: [file, ...args].join(" "), cwd, env };
  }
  const command =
    x.commandLine !== undefined
      ? sub(x.commandLine)
      : [x.command, ...(x.args ?? [])]
          .filter((a): a is string | vscode.ShellQuotedString => a !== undefined)
          .map((a) => quote(typeof a === "string" ? sub(a) : { value: sub(a.value), quoting: a.quoting }))
          .join(" ");
  const shellOptions = x.options as vscode.ShellExecutionOptions | undefined;
  const file = shellOptions?.executable ?? (vscode.env.shell || "/bin/sh");
  const args = [...(shellOptions?.shellArgs ?? ["-c"]), command];
  return { file, args, shell: true, display: command, cwd, env };
}

/** The task's terminal: the child's output, as the panel shows it and as the task system's matchers read it. */
class RunPty implements vscode.Pseudoterminal {
  readonly #write = new vscode.EventEmitter<string>();
  readonly #close = new vscode.EventEmitter<number | undefined>();
  readonly onDidWrite = this.#write.event;
  readonly onDidClose = this.#close.event;

  constructor(
    private readonly run: Run,
    private readonly p: Plan,
    private readonly onOutput: (data: string) => void,
    private readonly onExit: (code: number) => void,
  ) {}

  open(): void {
    let child: ChildProcess;
    try {
      child = spawn(this.p.file, this.p.args, {
        cwd: this.p.cwd,
        env: this.p.env,
        detached: true, // its own process group: stopping it stops what the shell started
        stdio: ["pipe", "pipe", "pipe"],
      });
    } catch (err) {
      this.#fail(err);
      return;
    }
    this.run.child = child;
    const out = (d: Buffer) => {
      const s = d.toString("utf8");
      this.onOutput(s);
      this.#write.fire(s.replace(/\r?\n/g, "\r\n"));
    };
    child.stdout?.on("data", out);
    child.stderr?.on("data", out);
    child.on("error", (err) => this.#fail(err));
    child.on("close", (code, signal) => {
      const exit = code ?? (signal ? 128 + (signalNumbers[signal] ?? 1) : 1);
      this.onExit(exit);
      this.#close.fire(exit);
    });
  }

  #fail(err: unknown): void {
    const msg = `ccb could not start ${this.p.file}: ${err instanceof Error ? err.message : String(err)}\n`;
    this.onOutput(msg);
    this.#write.fire(msg.replace(/\n/g, "\r\n"));
    this.onExit(127);
    this.#close.fire(127);
  }

  handleInput(data: string): void {
    this.run.child?.stdin?.write(data.replace(/\r/g, "\n"));
  }

  /** The person closed the terminal or terminated the task. */
  close(): void {
    stopChild(this.run.child);
  }
}

const signalNumbers: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

function stopChild(child: ChildProcess | undefined): void {
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
  const group = -child.pid;
  try {
    process.kill(group, "SIGTERM");
  } catch {
    child.kill("SIGTERM");
  }
  setTimeout(() => {
    try {
      process.kill(group, "SIGKILL");
    } catch {
      // already gone
    }
  }, KILL_GRACE_MS).unref();
}

export class TaskBridge implements vscode.Disposable {
  readonly #runs = new Map<string, Run>();
  readonly #disposables: vscode.Disposable[] = [];
  #next = 1;

  constructor(private readonly resolve: ResolvePath) {
    this.#disposables.push(
      vscode.languages.onDidChangeDiagnostics((e) => {
        const now = Date.now();
        for (const run of this.#runs.values()) {
          if (run.settled) continue;
          for (const u of e.uris) run.changed.add(u.toString());
          run.lastChange = now;
        }
      }),
      vscode.tasks.onDidEndTask((e) => {
        for (const run of this.#runs.values())
          if (run.execution === e.execution) {
            run.taskEnded = true;
            this.#notify(run);
          }
      }),
    );
  }

  handlers(): TaskHandlers {
    return {
      "tasks.list": async () => {
        const tasks = await vscode.tasks.fetchTasks();
        return { tasks: tasks.map(taskInfo), runs: [...this.#runs.values()].map((r) => r.info) };
      },
      "tasks.run": async (p) => ({ run: await this.#start(p.name, p.source) }),
      "tasks.wait": (p) => this.#wait(p.execution, p.timeoutMs, p.maxOutputChars),
      "tasks.stop": async (p) => {
        const run = this.#run(p.execution);
        const running = run.info.state === "running";
        if (running) {
          run.execution?.terminate();
          stopChild(run.child);
        }
        return { stopped: running, run: run.info };
      },
    };
  }

  #run(id: string): Run {
    const run = this.#runs.get(id);
    if (!run)
      throw new BridgeError("NOT_FOUND", `No task run ${id}.`, "task_list shows the runs this workbench knows.");
    return run;
  }

  async #find(name: string, source: string | undefined): Promise<vscode.Task> {
    const all = await vscode.tasks.fetchTasks();
    const matches = all.filter(
      (t) => (t.name === name || `${t.source}: ${t.name}` === name) && (source === undefined || t.source === source),
    );
    if (matches.length === 0)
      throw new BridgeError(
        "NOT_FOUND",
        `No task "${name}"${source ? ` from ${source}` : ""}.`,
        "task_list shows the tasks of the workspace.",
      );
    if (matches.length > 1)
      throw new BridgeError(
        "INVALID_ARGUMENT",
        `${matches.length} tasks are named "${name}" (sources: ${matches.map((t) => t.source).join(", ")}).`,
        "Give `source` too.",
      );
    return matches[0] as vscode.Task;
  }

  async #start(name: string, source: string | undefined): Promise<TaskRunInfo> {
    const original = await this.#find(name, source);
    const p = await plan(original, this.resolve);
    const id = `task-${this.#next++}`;
    const run: Run = {
      info: {
        execution: id,
        name: original.name,
        source: original.source,
        state: "running",
        exitCode: null,
        command: p.display,
        cwd: p.cwd,
        startedAt: Date.now(),
      },
      output: "",
      total: 0,
      exited: false,
      taskEnded: false,
      settled: false,
      changed: new Set(),
      lastChange: Date.now(),
      waiters: new Set(),
    };
    const pty = new RunPty(
      run,
      p,
      (data) => {
        run.total += data.length;
        run.output += data;
        if (run.output.length > OUTPUT_LIMIT) run.output = run.output.slice(-OUTPUT_LIMIT);
      },
      (code) => this.#exited(run, code),
    );
    const task = new vscode.Task(
      { type: "ccb", task: original.name, run: id },
      original.scope ?? vscode.TaskScope.Workspace,
      original.name,
      original.source,
      new vscode.CustomExecution(async () => pty),
      matchersOf(original).names,
    );
    task.isBackground = original.isBackground;
    task.presentationOptions = original.presentationOptions;
    if (original.group) task.group = original.group;
    this.#runs.set(id, run);
    this.#prune();
    try {
      run.execution = await vscode.tasks.executeTask(task);
    } catch (err) {
      this.#runs.delete(id);
      throw new BridgeError("BRIDGE_ERROR", `The workbench did not start the task: ${(err as Error).message}`);
    }
    return run.info;
  }

  #exited(run: Run, code: number): void {
    if (run.exited) return;
    run.exited = true;
    run.info.exitCode = code;
    this.#notify(run);
    // the task system ends the task (its problem matchers done) right after the terminal closes
    setTimeout(() => {
      run.taskEnded = true;
      this.#notify(run);
    }, END_GRACE_MS).unref();
  }

  #notify(run: Run): void {
    if (run.exited && run.taskEnded && run.info.state === "running") {
      run.info.state = "ended";
      run.lastChange = Math.max(run.lastChange, Date.now());
      void this.#settle(run);
    }
    for (const w of [...run.waiters]) w();
  }

  /** Let the problem matchers' diagnostics arrive: until no change for a moment (bounded). */
  async #settle(run: Run): Promise<void> {
    const until = Date.now() + SETTLE_MAX_MS;
    while (Date.now() < until && Date.now() - run.lastChange < SETTLE_QUIET_MS)
      await new Promise((r) => setTimeout(r, 100));
    run.settled = true;
    for (const w of [...run.waiters]) w();
  }

  #prune(): void {
    const done = [...this.#runs.values()].filter((r) => r.settled);
    for (const r of done.slice(0, Math.max(0, done.length - FINISHED_KEPT))) this.#runs.delete(r.info.execution);
  }

  async #wait(id: string, timeoutMs: number, maxOutputChars: number): Promise<ResultOf<"tasks.wait">> {
    const run = this.#run(id);
    if (!run.settled)
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          run.waiters.delete(check);
          resolve();
        };
        const check = () => {
          if (run.settled) done();
        };
        const timer = setTimeout(done, timeoutMs);
        run.waiters.add(check);
      });
    const output = run.output.replace(/\r\n/g, "\n");
    return {
      run: run.info,
      timedOut: !run.settled,
      output: maxOutputChars === 0 ? "" : output.slice(-maxOutputChars),
      outputChars: run.total,
      problems: run.settled ? this.#problems(run) : [],
    };
  }

  #problems(run: Run): ResultOf<"tasks.wait">["problems"] {
    const printed = run.output.replace(ANSI, "").replace(/\s+/g, " ");
    const seen = new Set<string>();
    const out: ResultOf<"tasks.wait">["problems"] = [];
    for (const key of run.changed) {
      const uri = vscode.Uri.parse(key);
      for (const d of vscode.languages.getDiagnostics(uri)) {
        const first = (d.message.split("\n", 1)[0] ?? "").replace(/\s+/g, " ").trim();
        if (!first || !printed.includes(first)) continue;
        const item = { path: uriPath(uri), diagnostic: diagnostic(d) };
        const id = JSON.stringify([item.path, item.diagnostic.range, item.diagnostic.message]);
        if (seen.has(id)) continue;
        seen.add(id);
        out.push(item);
      }
    }
    return out;
  }

  dispose(): void {
    for (const run of this.#runs.values()) stopChild(run.child);
    for (const d of this.#disposables) d.dispose();
  }
}
