import { spawn } from "node:child_process";
import { z } from "zod";
import { childEnv } from "../../core/child-env.ts";
import { CcbError, isCcbError } from "../../core/errors.ts";
import { shortTitle, textContent } from "../converters.ts";
import type { ClientTerminals } from "../peer.ts";
import { isSafeCommand } from "../permissions.ts";
import { type AgentToolContext, defineAcpTool, type ToolOutcome, truncateForModel } from "./types.ts";

const Input = z.object({
  command: z.string().min(1).describe("Shell command (run with /bin/sh -c in the project directory)."),
  timeout_ms: z
    .number()
    .int()
    .positive()
    .max(600_000)
    .optional()
    .describe("Kill the command after this long (default 120000)."),
});
type BashInput = z.infer<typeof Input>;

// Strip ANSI escape sequences (PTY output) before the model sees it.
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][A-Za-z0-9]|\r(?=\n)/g;
export const stripAnsi = (s: string) => s.replace(ANSI, "");

function deadline(signal: AbortSignal, ms: number): { signal: AbortSignal; timedOut: () => boolean } {
  const t = AbortSignal.timeout(ms);
  return { signal: AbortSignal.any([signal, t]), timedOut: () => t.aborted };
}

function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(new CcbError("ABORTED", "aborted"));
    const onAbort = () => reject(new CcbError("ABORTED", "aborted"));
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

function outcome(
  command: string,
  output: string,
  exitCode: number | null,
  signal: string | null,
  timedOut: boolean,
  cancelled: boolean,
): ToolOutcome {
  const clean = stripAnsi(output);
  const status = cancelled
    ? "cancelled"
    : timedOut
      ? "timed out and was killed"
      : signal
        ? `killed by ${signal}`
        : `exit code ${exitCode}`;
  const text = `${clean.trimEnd()}\n[${command}: ${status}]`;
  return {
    text: truncateForModel(text),
    isError: cancelled || timedOut || exitCode !== 0,
    rawOutput: { exitCode, signal, timedOut },
  };
}

/** Through the client's terminal/*: the editor shows the live output. */
async function inClientTerminal(
  terminals: ClientTerminals,
  i: BashInput,
  ctx: AgentToolContext,
  ms: number,
): Promise<ToolOutcome> {
  const term = await terminals.create(
    ctx.sessionId,
    { command: "/bin/sh", args: ["-c", i.command], cwd: ctx.cwd, outputByteLimit: 1_000_000 },
    ctx.signal,
  );
  const content = [{ type: "terminal" as const, terminalId: term.id }];
  ctx.progress?.({ content });
  const d = deadline(ctx.signal, ms);
  try {
    let exit: { exitCode?: number | null; signal?: string | null } | undefined;
    try {
      exit = await abortable(term.waitForExit(), d.signal);
    } catch (err) {
      if (!isCcbError(err, "ABORTED")) throw err;
      await term.kill().catch(() => undefined);
    }
    const out = await term.currentOutput();
    const r = outcome(
      i.command,
      out.output,
      exit?.exitCode ?? out.exitStatus?.exitCode ?? null,
      exit?.signal ?? out.exitStatus?.signal ?? null,
      d.timedOut(),
      ctx.signal.aborted,
    );
    return { ...r, content };
  } finally {
    await term.release().catch(() => undefined);
  }
}

/** The core's PTY (TerminalManager): output never touches our stdout. */
async function inCoreTerminal(i: BashInput, ctx: AgentToolContext, ms: number): Promise<ToolOutcome> {
  // this process's own terminals, also when attached to a shared workbench: the agent's commands are its own
  const terminals = ctx.core.terminals.local;
  const info = await terminals.create({
    command: "/bin/sh",
    args: ["-c", i.command],
    cwd: ctx.cwd,
    title: shortTitle(i.command),
    origin: "tool",
  });
  const d = deadline(ctx.signal, ms);
  let exit = info;
  try {
    exit = await terminals.waitForExit(info.id, d.signal);
  } catch (err) {
    if (!isCcbError(err, "ABORTED") && !d.signal.aborted) throw err;
    exit = await terminals.kill(info.id).catch(() => info);
  }
  try {
    const out = await terminals.read(info.id, { offset: 0 });
    return outcome(i.command, out.output, exit.exitCode, exit.signal, d.timedOut(), ctx.signal.aborted);
  } finally {
    await terminals.remove(info.id).catch(() => undefined); // a finished tool command leaves no terminal behind
  }
}

/** Plain pipes (used when the core has no terminal backend): stdio piped, process group killed on cancel. */
function inPipes(i: BashInput, ctx: AgentToolContext, ms: number): Promise<ToolOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", i.command], {
      cwd: ctx.cwd,
      env: childEnv(),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let out = "";
    const add = (b: Buffer) => {
      if (out.length < 2_000_000) out += b.toString("utf8");
    };
    child.stdout.on("data", add);
    child.stderr.on("data", add);
    const d = deadline(ctx.signal, ms);
    const kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    };
    d.signal.addEventListener("abort", kill, { once: true });
    child.on("error", (e) => reject(e));
    child.on("close", (code, sig) => {
      d.signal.removeEventListener("abort", kill);
      resolve(outcome(i.command, out, code, sig, d.timedOut(), ctx.signal.aborted));
    });
  });
}

export const bashTool = defineAcpTool({
  name: "bash",
  description:
    "Run a shell command in the project directory and return its output and exit code. Do not use it to read or edit files (use read/edit/write).",
  title: "Run a shell command",
  input: Input,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  acp: {
    kind: "execute",
    title: (i) => shortTitle(i.command),
    locations: () => [],
    access: (i) => ({ category: "execute", ruleKey: `bash:${i.command.trim()}`, safe: isSafeCommand(i.command) }),
    async preview(i) {
      return [textContent(`$ ${i.command}`)];
    },
  },
  async execute(i, ctx) {
    const ms = i.timeout_ms ?? 120_000;
    if (ctx.io.terminals) return inClientTerminal(ctx.io.terminals, i, ctx, ms);
    try {
      return await inCoreTerminal(i, ctx, ms);
    } catch (err) {
      if (isCcbError(err, "UNSUPPORTED")) return inPipes(i, ctx, ms);
      throw err;
    }
  },
});
