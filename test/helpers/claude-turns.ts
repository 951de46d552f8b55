import type { DiffRegistry } from "../../src/protocols/ide/diffs.ts";
import type { IdeServer } from "../../src/protocols/ide/ide.ts";
import { bounded } from "./bounded.ts";
import { type ClaudeOptions, type PtyProcess, startClaude, stopClaude } from "./claude-session.ts";
import { isSideRequest, type Reply, type Script } from "./fake-anthropic.ts";

/**
 * A real claude CLI's turns against a scripted fake model: the model's main (tool-carrying)
 * requests recorded in order, what they carry back, and the person typing into claude's prompt box.
 */

type OpenedDiff = Parameters<Parameters<DiffRegistry["onOpen"]>[0]>[0];

export interface MainRequests {
  /** The model request number `n` (0-based), within 3 minutes. */
  wait(n: number): Promise<any>;
  /** A script: side requests get "Fake title"; main request number `n` is recorded and gets `reply(n)`. */
  answer(reply: (n: number) => Reply): Script;
}

export function mainRequests(): MainRequests {
  const list: any[] = [];
  const waiters: { n: number; resolve: (b: any) => void }[] = [];
  const push = (body: any) => {
    list.push(body);
    for (const w of [...waiters]) {
      if (!list[w.n]) continue;
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(list[w.n]);
    }
  };
  return {
    wait(n) {
      if (list[n]) return Promise.resolve(list[n]);
      return bounded(
        new Promise((resolve) => waiters.push({ n, resolve })),
        180_000,
        () => `model request #${n} (${list.length} arrived)`,
      );
    },
    answer:
      (reply) =>
      ({ body }) => {
        if (isSideRequest(body)) return { text: "Fake title" };
        const n = list.length;
        push(body);
        return reply(n);
      },
  };
}

/** The first tool_result of a request's last message (what a tool answered the model), if any. */
export function lastToolResult(body: any): any {
  const last = body.messages.at(-1);
  return Array.isArray(last?.content) ? last.content.find((c: any) => c.type === "tool_result") : undefined;
}

/** A tool_result's text. */
export function resultText(r: any): string {
  return typeof r.content === "string" ? r.content : r.content.map((c: any) => c.text ?? "").join("");
}

/** The text of the first tool_result of a request's last message ("" when there is none). */
export const toolResultText = (body: any): string => {
  const r = lastToolResult(body);
  return r ? resultText(r) : "";
};

/** Start claude on `ide`'s port and wait (2 minutes) until it has connected; `pid` is the one it announced. */
export async function startClaudeOnIde(
  ide: IdeServer,
  o: Omit<ClaudeOptions, "idePort">,
): Promise<{ claude: PtyProcess; pid: number }> {
  const connected = new Promise<number>((resolve) =>
    ide.onClient((e) => e.type === "connected" && e.pid && resolve(e.pid)),
  );
  const claude = startClaude({ ...o, idePort: ide.port });
  try {
    return { claude, pid: await bounded(connected, 120_000, "claude connecting to the IDE server") };
  } catch (err) {
    await stopClaude(claude, undefined);
    throw err;
  }
}

/** The diffs claude opens through `ide`, and what each openDiff answered claude (the IDE tool's result text). */
export interface ClaudeDiffs {
  /** The next diff opened, in order, waiting for it up to 3 minutes (a wait that times out shows claude's screen). */
  (): Promise<OpenedDiff>;
  /** The answers so far, in order. */
  readonly answers: readonly string[];
}

export function claudeDiffs(ide: IdeServer, claude: () => PtyProcess | undefined): ClaudeDiffs {
  const opened: OpenedDiff[] = [];
  const waiters: ((d: OpenedDiff) => void)[] = [];
  const answers: string[] = [];
  ide.diffs.onOpen((d) => {
    const w = waiters.shift();
    if (w) w(d);
    else opened.push(d);
  });
  const open = ide.diffs.open.bind(ide.diffs);
  ide.diffs.open = async (args, signal) => {
    const r = await open(args, signal);
    answers.push(r.content.map((c) => ("text" in c ? c.text : "")).join("\n"));
    return r;
  };
  const next = () => {
    if (opened.length > 0) return Promise.resolve(opened.shift()!);
    return bounded(
      new Promise<OpenedDiff>((resolve) => waiters.push(resolve)),
      180_000,
      () => `an openDiff from claude (its screen: ${JSON.stringify(claude()?.output.slice(-1200) ?? "")})`,
    );
  };
  return Object.assign(next, { answers });
}

/**
 * The person types `text` into claude's prompt box and presses Enter once claude shows it; answers
 * where claude's screen stood before the typing (to wait for what follows from there).
 */
export async function submitPrompt(claude: PtyProcess, text: string): Promise<number> {
  const from = claude.output.length;
  claude.type(text);
  const shown = text
    .split(/\s+/)
    .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("\\s*");
  await claude.waitFor(new RegExp(shown), from);
  claude.type("\r");
  return from;
}
