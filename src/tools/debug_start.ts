import { join } from "node:path";
import { z } from "zod";
import type { Core } from "../core/core.ts";
import { confineDebugParams } from "../core/editor/debug-confine.ts";
import { CcbError } from "../core/errors.ts";
import { parseJsonc } from "../util/jsonc.ts";
import { defineTool } from "./kernel.ts";
import { DEBUG_RUN, sessionLine } from "./shared/debug.ts";
import { callBridge } from "./shared/editor.ts";

/**
 * The configuration `name` as a root's .vscode/launch.json on disk holds it (read through the
 * workspace, so a launch.json that leads outside is not read), with its root: the editor re-reads
 * the file seconds after a change, and a debug_start right after writing it must still find it.
 * A file that is missing or does not parse is skipped (the editor's own answer then stands).
 */
async function launchFromDisk(
  core: Core,
  name: string,
): Promise<{ folder: string; launch: Record<string, unknown> } | undefined> {
  for (const root of core.workspace.roots) {
    let parsed: unknown;
    try {
      const r = await core.files.read(join(root, ".vscode", "launch.json"));
      if (r.binary || r.truncated) continue;
      parsed = parseJsonc(r.content);
    } catch {
      continue;
    }
    const configs = (parsed as { configurations?: unknown } | null)?.configurations;
    if (!Array.isArray(configs)) continue;
    const found = configs.find(
      (c): c is Record<string, unknown> =>
        typeof c === "object" && c !== null && (c as { name?: unknown }).name === name,
    );
    if (found) return { folder: root, launch: found };
  }
  return undefined;
}

export default defineTool({
  name: "debug_start",
  title: "Start debugging",
  description:
    "Start a debug session in the live workbench, where the person sees it (call stack, variables, debug console) and can " +
    "take it over: a launch configuration by `name` (see debug_configurations) or an inline `configuration`, e.g. " +
    '{"type":"node","request":"launch","program":"src/app.js","args":["--x"]}. File fields (program, cwd, envFile, ' +
    "runtimeExecutable unless it is a command name) must be workspace paths, in named configurations too; ${command:…} and ${input:…} are refused. A configuration written to .vscode/launch.json a moment ago is found at once. An inline " +
    '{"type":"node","request":"attach","address":"127.0.0.1","port":9229} joins a program already running with ' +
    "`node --inspect` (a session the person started in the workbench is joined with debug_join instead). " +
    "Set breakpoints first (debug_set_breakpoints), then debug_wait until it stops. The program runs with " +
    "the user's rights (a configuration can name any program) but without ccb's secrets in its environment. Needs the editor bridge.",
  input: z.object({
    name: z.string().min(1).optional().describe("Name of a launch configuration of the workspace."),
    configuration: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        'An inline launch configuration (VS Code launch.json form): at least "type" and "request"; "name" defaults to "ccb debug".',
      ),
  }),
  annotations: DEBUG_RUN,
  needsBridge: true,
  async execute(args, ctx) {
    ctx.core.bridge.require();
    if ((args.name === undefined) === (args.configuration === undefined))
      throw new CcbError("INVALID_ARGUMENT", "Give either `name` or `configuration`.", {
        hint: "debug_configurations lists the named ones.",
      });
    if (
      args.configuration &&
      (typeof args.configuration.type !== "string" || typeof args.configuration.request !== "string")
    )
      throw new CcbError(
        "INVALID_ARGUMENT",
        'An inline configuration needs "type" (e.g. "node") and "request" ("launch" or "attach").',
      );
    // A named configuration is checked as an inline one is: its copy in launch.json (the model can
    // write it), which the extension then starts; a name not there is refused.
    const disk = args.name !== undefined ? await launchFromDisk(ctx.core, args.name) : undefined;
    const params = await confineDebugParams(
      ctx.core.workspace,
      "debug.start",
      disk ? { ...args, launch: disk.launch, folder: disk.folder } : args,
    );
    const r = await callBridge(ctx, "debug.start", params);
    return {
      text: `Started ${sessionLine(r.session)}.\nNext: debug_wait to let it run until a breakpoint or its end.`,
      structured: { session: r.session },
    };
  },
});
