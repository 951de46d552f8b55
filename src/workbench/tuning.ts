/**
 * The levers that make a workbench start sooner and weigh less (issue 35; measured in
 * bench/workbench-cost.bench.ts). The ones that paid are on by default; the others say why they are off.
 * CCB_WORKBENCH_TUNING changes them for a same-run comparison: a comma list of lever names, each
 * prefixed with `-` (off) or `+` (on), `-early-browser,+quick-heal`, where `off` turns all off
 * (`off,+young-gen`: that lever alone). It changes no
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
   * ccb's own headless client (a loopback request whose User-Agent says HeadlessChrome) gets the
   * runtime's files uncompressed: the server no longer Brotli-compresses the 19 MB workbench.js for
   * bytes that never leave the machine. A person's browser (an SSH tunnel too) keeps compression.
   */
  "plain-headless": true,
  /**
   * No TypeScript typings installer (`typescript.disableAutomaticTypeAcquisition`): it fetches
   * @types packages from npm for JavaScript projects, a lookup that cannot succeed offline, and is
   * a 56 MiB process per workspace. Off by default: online, it gives a JavaScript project's hovers
   * and completions the types of its untyped packages. A workspace without network access (a pod
   * with no egress) turns it on with CCB_WORKBENCH_TUNING=+no-typings.
   */
  "no-typings": false,
  /**
   * code-server without its restart wrapper: one Node process instead of two (code-server.ts
   * ONE_PROCESS_SCRIPT), 24-32 MiB. The script gives the server what the wrapper gives the server it
   * forks (CODE_SERVER_PARENT_PID, NODE_EXEC_PATH): without the first, VS Code's server-main.js also
   * started its own standalone server on TCP localhost:8000 (found by workbench-owner's attack test;
   * launcher.test.ts checks both ways that the runtime listens on its Unix socket only).
   */
  "one-process": true,
  /**
   * A small V8 young generation (--max-semi-space-size=2, MiB) for the VS Code server's Node (its
   * extension host and file watcher inherit the server's Node flags) and the headless page.
   */
  "young-gen": true,
  /**
   * Node's on-disk compile cache (NODE_COMPILE_CACHE) for the runtime's Node processes: the VS Code
   * server, the extension host it forks and tsserver keep V8's code cache of every module they load
   * in a folder of the user's own (compile-cache.ts: ~/.cache/ccb/node-compile-cache, 0700), so a later
   * start compiles none of them again. Node checks an entry only against a CRC32 of the source, so a
   * folder another user could write is refused; refused or off, the runtime gets
   * NODE_DISABLE_COMPILE_CACHE=1 (tsserver would otherwise use the shared /tmp/node-compile-cache). Node caches each module's top-level code only
   * (what VS Code's bundles compile lazily is not in it): about 0.2 s of CPU less per start (the server
   * to its page 0.87 -> 0.77 s, the extension host's modules 0.21 -> 0.15 s), below the bench's noise.
   */
  "compile-cache": true,
  /** V8's size mode (--optimize-for-size) for the same processes: the heap kept tight, fewer optimizations. */
  "size-mode": false,
  /**
   * Chromium in one process (--single-process): the renderer runs in the browser process, with no
   * sandbox of its own. Off: measured for issue 35 only; the person's webviews would lose their
   * process isolation in ccb's client.
   */
  "single-process": false,
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
  for (const part of (env.CCB_WORKBENCH_TUNING ?? "").split(",")) {
    const p = part.trim();
    if (p === "off") for (const k of Object.keys(t) as Lever[]) t[k] = false;
    const name = p.replace(/^[-+]/, "") as Lever;
    if (name in t && (p.startsWith("-") || p.startsWith("+"))) t[name] = p.startsWith("+");
  }
  return t;
}

/** The V8 flags the `young-gen` and `size-mode` levers add. */
function v8Flags(t: Tuning): string[] {
  return [...(t["young-gen"] ? ["--max-semi-space-size=2"] : []), ...(t["size-mode"] ? ["--optimize-for-size"] : [])];
}

/** The VS Code server's Node flags under `t` (code-server; its extension host inherits them; OpenVSCode starts its own Node). */
export function serverNodeFlags(t: Tuning): string[] {
  return v8Flags(t);
}

/** Extra Chromium flags of ccb's headless client under `t`. */
export function headlessChromiumFlags(t: Tuning): string[] {
  const flags: string[] = [];
  const v8 = v8Flags(t);
  if (v8.length > 0) flags.push(`--js-flags=${v8.join(" ")}`);
  if (t["single-process"]) flags.push("--single-process");
  return flags;
}

/** The setting `no-typings` adds to the workbench's user settings. */
export const NO_TYPINGS_SETTINGS: Record<string, unknown> = { "typescript.disableAutomaticTypeAcquisition": true };
