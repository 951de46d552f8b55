import { open, stat } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../core/log.ts";

/**
 * Where a workbench's start goes, at info level in the log (the host's log for a shared
 * workbench): each step once per start of the runtime, as seconds since the workbench started
 * and since the step that begins the current start (a first start, or the fault it recovers from):
 *
 *   timeline: runtime up +1.9 s (since start +1.9 s)
 *   timeline: page loaded +4.1 s ...
 *
 * Steps: Chromium launched, runtime up, VS Code server loaded, page loaded, management connection,
 * extension host launched, bridge connected.
 */
export class Timeline {
  readonly #t0 = performance.now();
  #since = this.#t0;
  #what = "start";
  #seen = new Set<string>();

  constructor(private readonly log: Logger) {}

  /** A new start begins (the runtime restarts, the headless client is replaced): steps are logged again, from here. */
  restart(what: string): void {
    this.#since = performance.now();
    this.#what = what;
    this.#seen.clear();
    this.log.info(`timeline: ${what} (${this.#fmt(this.#since - this.#t0)} after start)`);
  }

  /** Log a step the first time it happens in this start. */
  mark(step: string): void {
    if (this.#seen.has(step)) return;
    this.#seen.add(step);
    const now = performance.now();
    const since = this.#what === "start" ? "" : ` since ${this.#what}`;
    this.log.info(`timeline: ${step} +${this.#fmt(now - this.#since)}${since}`);
  }

  #fmt(ms: number): string {
    return `${(ms / 1000).toFixed(2)} s`;
  }
}

/** Runtime output lines that mark a step (code-server and OpenVSCode print the same VS Code server lines). */
const RUNTIME_STEPS: [RegExp, string][] = [
  [/Extension host agent started/, "VS Code server loaded"],
  [/\[ManagementConnection\] New connection established/, "management connection"],
  [/\[ExtensionHostConnection\].*Launched Extension Host Process/, "extension host launched"],
];

/**
 * An extension host process the runtime launched or saw exit (VS Code's server logs both with the
 * host's pid: `[ExtensionHostConnection] <pid> Launched Extension Host Process.`, `... exited with code`).
 */
export function extensionHostEvent(line: string): { pid: number; event: "launched" | "exited" } | undefined {
  const m =
    /\[ExtensionHostConnection\].*?<(\d+)> (Launched Extension Host Process|Extension Host Process exited)/.exec(line);
  if (!m) return undefined;
  return { pid: Number(m[1]), event: m[2]?.startsWith("Launched") ? "launched" : "exited" };
}

/** The step a line of the runtime's output marks, if any. */
export function runtimeStep(line: string): string | undefined {
  for (const [re, step] of RUNTIME_STEPS) if (re.test(line)) return step;
  return undefined;
}

/** What a person reads for a step of the first start (`ccb ide` on stderr). */
const PERSON_STEP: Record<string, string> = {
  "Chromium launched": "the headless browser is up",
  "runtime up": "the runtime is up",
  "VS Code server loaded": "the VS Code server is loaded",
  "page loaded": "the workbench page is loaded",
  "management connection": "the workbench connected",
  "extension host launched": "the extension host is starting",
  "bridge connected": "the editor is connected: editor tools work",
};

/** The step and its seconds in a logged timeline line (text or JSON log), or undefined. */
export function timelineStep(logLine: string): { step: string; seconds: number } | undefined {
  const m = /timeline: (.+?) \+(\d+(?:\.\d+)?) s(?:\b|")/.exec(logLine);
  return m ? { step: m[1] as string, seconds: Number(m[2]) } : undefined;
}

/**
 * Follow the timeline lines appended to a workbench host's log (the first start of a shared
 * workbench happens in that process) and tell each step as a person reads it, until the editor is
 * connected, `signal` aborts, or `maxMs` passed. Reads only what is appended from now on.
 */
export async function followTimeline(
  logPath: string,
  tell: (line: string) => void,
  o: { signal?: AbortSignal; maxMs?: number; pollMs?: number } = {},
): Promise<void> {
  let offset = await stat(logPath).then(
    (s) => s.size,
    () => 0,
  );
  let rest = "";
  const until = performance.now() + (o.maxMs ?? 300_000);
  while (!o.signal?.aborted && performance.now() < until) {
    const size = await stat(logPath).then(
      (s) => s.size,
      () => 0,
    );
    if (size < offset) offset = 0; // the log was cut: read it anew
    if (size > offset) {
      const fh = await open(logPath, "r");
      try {
        const buf = Buffer.alloc(Math.min(size - offset, 1 << 20));
        const { bytesRead } = await fh.read(buf, 0, buf.length, offset);
        offset += bytesRead;
        const lines = (rest + buf.subarray(0, bytesRead).toString("utf8")).split("\n");
        rest = lines.pop() ?? "";
        for (const l of lines) {
          const s = timelineStep(l);
          const said = s && PERSON_STEP[s.step];
          if (!s || !said) continue;
          tell(`workbench: ${said} (${s.seconds.toFixed(1)} s)`);
          if (s.step === "bridge connected") return;
        }
      } finally {
        await fh.close();
      }
    }
    await sleep(o.pollMs ?? 250, undefined, { signal: o.signal }).catch(() => undefined);
  }
}
