import { z } from "zod";
import { CcbError } from "../core/errors.ts";
import { defineTool } from "./kernel.ts";
import { callBridge, editorLine, resolveForEditor } from "./shared/editor.ts";

export default defineTool({
  name: "vscode_open",
  title: "Open the workbench",
  description:
    "Show the live VS Code workbench (Code OSS) that ccb runs beside this workspace, optionally opening a file in it. " +
    "The workbench address goes to the host application only (result metadata), never into this text. " +
    "Fails with BRIDGE_UNAVAILABLE, saying why, when no workbench runs.",
  input: z.object({
    path: z
      .string()
      .optional()
      .describe(
        "A file to open in the workbench (relative to the workspace root, or absolute inside it). Omit to only show the workbench.",
      ),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  needsBridge: true,
  async execute(args, ctx) {
    const wb = ctx.core.bridge.workbench();
    if (!wb) {
      const status = ctx.core.bridge.status();
      throw new CcbError("BRIDGE_UNAVAILABLE", `No workbench is running: ${status.reason}`, {
        hint: "File, search, terminal and git tools still work without it.",
      });
    }
    const meta: Record<string, unknown> = {
      "ccb/workbench": { url: (await ctx.core.bridge.workbenchUrl()) ?? wb.url, runtime: wb.runtime },
    };
    const status = ctx.core.bridge.status();
    if (args.path === undefined) {
      return {
        text: `The ${wb.runtime} workbench is running; the host has its address. Editor bridge: ${status.connected ? "connected" : `not connected (${status.reason})`}.`,
        structured: { runtime: wb.runtime, bridgeConnected: status.connected },
        meta,
      };
    }
    const abs = await resolveForEditor(ctx.core, args.path);
    const editor = await callBridge(ctx, "editor.open", { path: abs });
    return {
      text: `The ${wb.runtime} workbench is running (the host has its address); opened ${editorLine(ctx.core, editor)}.`,
      structured: { runtime: wb.runtime, bridgeConnected: true, opened: args.path },
      meta,
    };
  },
});
