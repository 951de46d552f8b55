import { z } from "zod";
import type { Core } from "../core/core.ts";
import { mapTaggedPaths } from "../core/editor-contract.ts";
import { CcbError } from "../core/errors.ts";
import { callBridge } from "./editor_common.ts";
import { defineTool } from "./kernel.ts";

/** Confine every path inside tagged arguments before the command runs (the bridge server checks again). */
async function confineArgs(core: Core, value: unknown): Promise<unknown> {
  try {
    return await mapTaggedPaths(value, async (p) => (await core.workspace.resolve(p)).abs);
  } catch (err) {
    if (err instanceof TypeError) throw new CcbError("INVALID_ARGUMENT", err.message);
    throw err;
  }
}

export default defineTool({
  name: "vscode_execute_command",
  title: "Run an editor command",
  description:
    "Execute a command registered in the live workbench (see vscode_list_commands) and return its result as JSON. " +
    "Arguments that must be VS Code objects are given as tagged JSON, so provider commands work: " +
    '{"$type":"uri","path":"src/a.ts"}, {"$type":"position","line":0,"character":4}, ' +
    '{"$type":"range","start":{...},"end":{...}}, {"$type":"location","path":"...","range":{...}} ' +
    "(these are VS Code's own zero-based positions). Results come back tagged the same way. " +
    'Example: command "vscode.executeDefinitionProvider", args [{"$type":"uri","path":"src/a.ts"},{"$type":"position","line":3,"character":10}]. ' +
    "Commands can change anything the workbench can: prefer the dedicated tools when one exists. Needs the editor bridge.",
  input: z.object({
    command: z.string().min(1).describe('The command id, e.g. "editor.action.formatDocument".'),
    args: z
      .array(z.unknown())
      .optional()
      .describe("Positional arguments: plain JSON or tagged VS Code values ($type uri/position/range/location)."),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  needsBridge: true,
  async execute(args, ctx) {
    ctx.core.bridge.require();
    const confined = (await confineArgs(ctx.core, args.args ?? [])) as unknown[];
    const r = await callBridge(ctx, "commands.execute", { command: args.command, args: confined });
    const json = JSON.stringify(r.result ?? null, null, 2);
    const max = 100_000;
    const text = json.length > max ? `${json.slice(0, max)}\n... (result cut at ${max} characters)` : json;
    return {
      text: `Command ${args.command} returned:\n${text}`,
      structured: { command: args.command, result: r.result ?? null },
    };
  },
});
