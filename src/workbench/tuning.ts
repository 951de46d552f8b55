/**
 * The levers that make a workbench start sooner and weigh less (issue 35; measured in
 * bench/workbench-cost.bench.ts). The ones that paid are on by default; two are off until they do.
 * CCB_WORKBENCH_TUNING changes them for a same-run comparison: `off` (all), or a comma list of lever
 * names, each prefixed with `-` (off) or `+` (on): `-early-browser,+quick-heal`. It changes no
 * behaviour a tool relies on, only timing and memory.
 */
export const LEVERS = {
  /** Chromium starts beside the runtime (about:blank) and navigates once the runtime answers. */
  "early-browser": true,
  /** ccb asks the runtime for the workbench page as soon as it answers (code-server loads VS Code's server on that first request) while Chromium is still starting. */
  "warm-server": true,
  /** VS Code settings that skip network lookups and duplicate servers (LEAN_SETTINGS). */
  "lean-settings": true,
  /**
   * Clients on this machine get the runtime's files uncompressed (code-server Brotli-compresses each
   * response as it sends it). Off: a person on an SSH tunnel also reaches the gateway from loopback,
   * and would then pull the 19 MB workbench.js uncompressed over the tunnel.
   */
  "plain-loopback": false,
  /**
   * After the runtime restarted, the headless client is replaced as soon as the runtime answers (not
   * after the no-answer grace). Off: both measured rounds with it recovered slower (47-55 s vs 18-22 s
   * after a runtime kill, on a loaded machine), not faster.
   */
  "quick-heal": false,
} as const;

export type Lever = keyof typeof LEVERS;
export type Tuning = Record<Lever, boolean>;

export function workbenchTuning(env: NodeJS.ProcessEnv = process.env): Tuning {
  const t: Tuning = { ...LEVERS };
  const v = (env.CCB_WORKBENCH_TUNING ?? "").trim();
  if (v === "off") for (const k of Object.keys(t) as Lever[]) t[k] = false;
  else
    for (const part of v.split(",")) {
      const p = part.trim();
      const name = p.replace(/^[-+]/, "") as Lever;
      if (name in t && (p.startsWith("-") || p.startsWith("+"))) t[name] = p.startsWith("+");
    }
  return t;
}
