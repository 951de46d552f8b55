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

/** The step a line of the runtime's output marks, if any. */
export function runtimeStep(line: string): string | undefined {
  for (const [re, step] of RUNTIME_STEPS) if (re.test(line)) return step;
  return undefined;
}
