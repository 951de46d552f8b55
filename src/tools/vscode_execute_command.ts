import { z } from "zod";
import type { Core } from "../core/core.ts";
import { CcbError } from "../core/errors.ts";
import { mapTaggedPaths } from "../editor-wire/contract.ts";
import { defineTool } from "./kernel.ts";
import { callBridge, displayPath } from "./shared/editor.ts";

/** Confine every path inside tagged arguments before the command runs (the bridge server checks again). */
async function confineArgs(core: Core, value: unknown): Promise<unknown> {
  try {
    return await mapTaggedPaths(value, async (p) => (await core.workspace.resolve(p)).abs);
  } catch (err) {
    if (err instanceof TypeError) throw new CcbError("INVALID_ARGUMENT", err.message);
    throw err;
  }
}

/** Tagged paths of a result as workspace paths ({"$type":"uri"|"location","path"}, a workspace edit's files). */
function workspacePaths(core: Core, value: unknown, depth = 0): unknown {
  if (depth > 40 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => workspacePaths(core, v, depth + 1));
  const obj = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) out[k] = workspacePaths(core, v, depth + 1);
  const tagged = obj.$type === "uri" || obj.$type === "location" || (obj.$type === undefined && "edits" in obj);
  if (tagged && typeof obj.path === "string") out.path = displayPath(core, obj.path);
  return out;
}

const DEFAULT_WAIT_S = 15;

/** ccb's own commands the model may run: they show or add shared terminals, they decide nothing. */
const CCB_COMMANDS_FOR_THE_MODEL = new Set(["ccb.terminals.list", "ccb.terminal.new"]);

/**
 * ccb's commands belong to the person (a diff review's accept and reject are their decisions), and
 * runCommands would run them in a list: refused before the workbench sees them. The extension
 * refuses the decisions by every other route too (extension/src/model-guard.ts).
 */
function refuseThePersonsCommands(command: string): void {
  const id = command.trim().toLowerCase();
  // Installing (or enabling) an extension runs its code with the person's rights: extensions_install
  // asks the person first; these commands would not.
  if (/^_?workbench\.extensions\..*(install|enable)/.test(id))
    throw new CcbError(
      "PERMISSION_DENIED",
      `${command} is not available to the model: an extension runs with the person's rights, and installing one needs their consent.`,
      { hint: "Use extensions_install, which asks the person in their workbench tab." },
    );
  const ccb = id.startsWith("ccb.") && !CCB_COMMANDS_FOR_THE_MODEL.has(command);
  if (!ccb && id !== "runcommands") return;
  throw new CcbError(
    "PERMISSION_DENIED",
    ccb
      ? `${command} is the person's: accepting or rejecting a proposed change in the review is their decision, not the model's.`
      : "runCommands is not available to the model: it could run the person's review decisions.",
    {
      hint: ccb
        ? "Wait for the person's decision in the editor; the change's result tells you what they kept."
        : "Run each command with its own vscode_execute_command call.",
    },
  );
}

export default defineTool({
  name: "vscode_execute_command",
  title: "Run an editor command",
  description:
    "Execute a command registered in the live workbench (see vscode_list_commands) and return its result as JSON. " +
    "Arguments that must be VS Code objects are given as tagged JSON, so provider commands work: " +
    '{"$type":"uri","path":"src/a.ts"}, {"$type":"position","line":0,"character":4}, ' +
    '{"$type":"range","start":{...},"end":{...}}, {"$type":"location","path":"...","range":{...}} ' +
    "(these are VS Code's own zero-based positions). Results come back tagged the same way, paths relative to the workspace; " +
    'a WorkspaceEdit as {"$type":"workspaceEdit","files":[{"path","edits"}]} (not applied: use refactor_rename or refactor_apply_code_action to change files). ' +
    "A picker or input box a command opens is closed after a few seconds (the person's review stays theirs); a command still waiting ends after waitSeconds with TIMEOUT. " +
    'Example: command "vscode.executeDefinitionProvider", args [{"$type":"uri","path":"src/a.ts"},{"$type":"position","line":3,"character":10}]. ' +
    "Commands can change anything the workbench can: prefer the dedicated tools when one exists. " +
    "ccb's review commands (ccb.diff.*) and runCommands are refused: a review's decisions are the person's; so are extension installs (use extensions_install). Needs the editor bridge.",
  input: z.object({
    command: z.string().min(1).describe('The command id, e.g. "editor.action.formatDocument".'),
    args: z
      .array(z.unknown())
      .optional()
      .describe("Positional arguments: plain JSON or tagged VS Code values ($type uri/position/range/location)."),
    waitSeconds: z
      .number()
      .min(1)
      .max(110)
      .optional()
      .describe(
        `Give up after this many seconds (default ${DEFAULT_WAIT_S}): a command still waiting then (a dialog, a slow command) fails with TIMEOUT; a picker or input box it opened is closed after a few seconds anyway.`,
      ),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  needsBridge: true,
  async execute(args, ctx) {
    refuseThePersonsCommands(args.command);
    ctx.core.bridge.require();
    const confined = (await confineArgs(ctx.core, args.args ?? [])) as unknown[];
    const r = await callBridge(ctx, "commands.execute", {
      command: args.command,
      args: confined,
      waitMs: Math.round((args.waitSeconds ?? DEFAULT_WAIT_S) * 1000),
    });
    const result = workspacePaths(ctx.core, r.result ?? null);
    const json = JSON.stringify(result, null, 2);
    const max = 100_000;
    const text = json.length > max ? `${json.slice(0, max)}\n... (result cut at ${max} characters)` : json;
    return {
      text: `Command ${args.command} returned:\n${text}`,
      structured: { command: args.command, result },
    };
  },
});
