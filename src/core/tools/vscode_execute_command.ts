import { z } from "zod";
import type { Core } from "../core.ts";
import { CcbError } from "../errors.ts";
import { defineTool } from "../tool.ts";
import { callBridge } from "./editor_common.ts";

/**
 * Confine every path inside tagged arguments ({"$type":"uri"|"location", "path": ...}) before the
 * command runs: a command must not be pointed at a file outside the workspace.
 */
async function confineArgs(core: Core, value: unknown, depth = 0): Promise<unknown> {
  if (depth > 32) throw new CcbError("INVALID_ARGUMENT", "Command arguments are nested too deeply.");
  if (Array.isArray(value)) return Promise.all(value.map((v) => confineArgs(core, v, depth + 1)));
  if (value === null || typeof value !== "object") return value;
  const obj = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) out[k] = await confineArgs(core, v, depth + 1);
  if (obj.$type === "uri" || obj.$type === "location") {
    if (typeof obj.path === "string") {
      out.path = (await core.workspace.resolve(obj.path)).abs;
    } else if (obj.$type === "location" || typeof obj.uri !== "string") {
      throw new CcbError("INVALID_ARGUMENT", `A {"$type":"${obj.$type}"} argument needs a "path".`);
    } else if (/^file:/i.test(obj.uri)) {
      throw new CcbError("INVALID_ARGUMENT", 'Give file URIs as {"$type":"uri","path":"..."} so the path can be checked against the workspace.');
    }
  }
  return out;
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
    command: z.string().min(1).describe("The command id, e.g. \"editor.action.formatDocument\"."),
    args: z.array(z.unknown()).optional().describe("Positional arguments: plain JSON or tagged VS Code values ($type uri/position/range/location)."),
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
    return { text: `Command ${args.command} returned:\n${text}`, structured: { command: args.command, result: r.result ?? null } };
  },
});
