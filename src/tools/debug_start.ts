import { z } from "zod";
import { confineDebugParams } from "../core/editor/debug-confine.ts";
import { CcbError } from "../core/errors.ts";
import { defineTool } from "./kernel.ts";
import { DEBUG_RUN, sessionLine } from "./shared/debug.ts";
import { callBridge } from "./shared/editor.ts";

export default defineTool({
  name: "debug_start",
  title: "Start debugging",
  description:
    "Start a debug session in the live workbench, where the person sees it (call stack, variables, debug console) and can " +
    "take it over: a launch configuration by `name` (see debug_configurations) or an inline `configuration`, e.g. " +
    '{"type":"node","request":"launch","program":"src/app.js","args":["--x"]}. File fields (program, cwd, envFile) are ' +
    "workspace paths. Set breakpoints first (debug_set_breakpoints), then debug_wait until it stops. The program runs with " +
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
    const params = (await confineDebugParams(ctx.core.workspace, "debug.start", args)) as typeof args;
    const r = await callBridge(ctx, "debug.start", params);
    return {
      text: `Started ${sessionLine(r.session)}.\nNext: debug_wait to let it run until a breakpoint or its end.`,
      structured: { session: r.session },
    };
  },
});
