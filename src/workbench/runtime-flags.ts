import { CcbError } from "../core/errors.ts";
import type { RuntimeKind } from "./launcher/types.ts";

/**
 * The workbench runtime flags, once: every front end that may start a workbench (`ccb ide`,
 * `ccb serve`, `ccb acp`, `ccb workbench host`) takes them, and a front end that starts a child
 * which may start the workbench in its place (the detached host, the `serve --stdio` that
 * `ccb ide -- claude` hands claude) writes them back on the child's command line.
 *
 * One row per flag: its citty argument, how its value is read (the flag, then its environment
 * variable), and how it is written back. The citty arguments (`runtimeArgs`), the typed options
 * (`WorkbenchRuntimeOptions`) and the child's argv (`runtimeArgv`) are all made from this table,
 * so a new shared flag is a row here and its use where the workbench starts.
 */
export const RUNTIME_FLAGS = {
  runtime: {
    flag: "runtime",
    arg: {
      type: "string",
      description:
        "Workbench runtime: openvscode (default: from the cache, or the one that ships with ccb; `ccb runtime fetch` installs it) or code-server (detected from --runtime-root; else the one `ccb runtime fetch --runtime code-server` installed).",
      valueHint: "openvscode|code-server",
    },
    read(value: string | boolean | undefined): RuntimeKind | undefined {
      const runtime = typeof value === "string" && value !== "" ? value : undefined;
      if (runtime !== undefined && runtime !== "openvscode" && runtime !== "code-server")
        throw new CcbError("INVALID_ARGUMENT", `--runtime must be openvscode or code-server, got "${runtime}".`);
      return runtime;
    },
    argv: (v: RuntimeKind | undefined): string[] => (v ? ["--runtime", v] : []),
  },
  runtimeRoot: {
    flag: "runtime-root",
    arg: {
      type: "string",
      description:
        "An existing runtime install: an OpenVSCode Server folder, or the code-server package folder (env CCB_RUNTIME_ROOT).",
      valueHint: "dir",
    },
    read: (value: string | boolean | undefined, env: NodeJS.ProcessEnv): string | undefined =>
      (typeof value === "string" && value) || env.CCB_RUNTIME_ROOT || undefined,
    argv: (v: string | undefined): string[] => (v ? ["--runtime-root", v] : []),
  },
  runtimeNode: {
    flag: "runtime-node",
    arg: {
      type: "string",
      description:
        "Node 24 binary for code-server (env CCB_RUNTIME_NODE; default: the cached code-server's, else node from PATH, version-checked).",
      valueHint: "path",
    },
    read: (value: string | boolean | undefined, env: NodeJS.ProcessEnv): string | undefined =>
      (typeof value === "string" && value) || env.CCB_RUNTIME_NODE || undefined,
    argv: (v: string | undefined): string[] => (v ? ["--runtime-node", v] : []),
  },
  headlessClient: {
    flag: "headless-client",
    arg: {
      type: "boolean",
      default: true,
      description:
        "Open the workbench in headless Chromium so the editor bridge is live with no browser tab open (default on; --no-headless-client to rely on your own tab). As root Chromium runs as nobody (CCB_CHROMIUM_USER) with its sandbox on.",
    },
    read: (value: string | boolean | undefined): boolean => value !== false,
    argv: (v: boolean | undefined): string[] => (v === false ? ["--no-headless-client"] : []),
  },
  headlessIdle: {
    flag: "headless-idle",
    arg: {
      type: "string",
      description:
        "Close the headless client after this many seconds without an editor call, when no window holds a running task, debug session, review, unsaved file or terminal of its own; the next editor call reopens it and waits (a few seconds). 0 keeps it open (env CCB_HEADLESS_IDLE; default 600).",
      valueHint: "seconds",
    },
    read(value: string | boolean | undefined, env: NodeJS.ProcessEnv): number | undefined {
      const raw = (typeof value === "string" && value !== "" ? value : undefined) ?? env.CCB_HEADLESS_IDLE;
      if (raw === undefined || raw === "") return undefined;
      if (!/^\d{1,7}$/.test(raw))
        throw new CcbError(
          "INVALID_ARGUMENT",
          `--headless-idle must be a whole number of seconds (0 = never), got "${raw}".`,
        );
      return Number(raw);
    },
    argv: (v: number | undefined): string[] => (v !== undefined ? ["--headless-idle", String(v)] : []),
  },
  share: {
    flag: "share",
    arg: {
      type: "boolean",
      default: true,
      description:
        "Share one workbench with the other ccb front ends of the same folders (default). --no-share: a private workbench of this front end's own, started with its own runtime flags.",
    },
    read: (value: string | boolean | undefined): boolean => value !== false,
    // never on a child's command line: the host is the shared workbench, and the serve claude starts attaches to it
    argv: (_v: boolean | undefined): string[] => [],
  },
} as const;

type Flags = typeof RUNTIME_FLAGS;

/** Which runtime a workbench runs and how it is kept live, as every front end passes it down. */
export type WorkbenchRuntimeOptions = { [K in keyof Flags]?: ReturnType<Flags[K]["read"]> | undefined };

/** The options the workbench itself takes (sharing is decided before it starts). */
export type RuntimeOptions = Omit<WorkbenchRuntimeOptions, "share">;

/** The citty arguments of the runtime flags, keyed by flag name. */
export const runtimeArgs = Object.fromEntries(Object.values(RUNTIME_FLAGS).map((r) => [r.flag, r.arg])) as {
  readonly [K in keyof Flags as Flags[K]["flag"]]: Flags[K]["arg"];
};

/** The parsed citty arguments of the runtime flags (any of them may be absent). */
export type RuntimeArgValues = { [K in keyof Flags as Flags[K]["flag"]]?: string | boolean | undefined };

/** The typed options from parsed runtime flags (flags first, then their environment variables). */
export function runtimeOptionsFrom(
  args: RuntimeArgValues,
  env: NodeJS.ProcessEnv = process.env,
): { [K in keyof Flags]: ReturnType<Flags[K]["read"]> } {
  const out: Record<string, unknown> = {};
  for (const [key, row] of Object.entries(RUNTIME_FLAGS) as [keyof Flags, Flags[keyof Flags]][])
    out[key] = row.read(args[row.flag], env);
  return out as { [K in keyof Flags]: ReturnType<Flags[K]["read"]> };
}

/** The runtime flags written back for a child ccb that may start the workbench (in table order). */
export function runtimeArgv(options: WorkbenchRuntimeOptions): string[] {
  const out: string[] = [];
  for (const [key, row] of Object.entries(RUNTIME_FLAGS) as [keyof Flags, Flags[keyof Flags]][])
    out.push(...(row.argv as (v: unknown) => string[])(options[key]));
  return out;
}

/** Only the options the workbench itself takes, from a front end's (without `share`). */
export function workbenchRuntime({ share: _share, ...rest }: WorkbenchRuntimeOptions): RuntimeOptions {
  return rest;
}
