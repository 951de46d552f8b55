import { z } from "zod";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { callBridge, displayPath } from "./shared/editor.ts";

export default defineTool({
  name: "debug_configurations",
  title: "List launch configurations",
  description:
    "The workspace's debug launch configurations (.vscode/launch.json and the workspace settings' `launch`), by name, type " +
    "and request, and its compounds. Start one with debug_start {name}, or give debug_start an inline configuration. Needs the editor bridge.",
  input: z.object({}),
  annotations: READ_ONLY,
  needsBridge: true,
  async execute(_args, ctx) {
    ctx.core.bridge.require();
    const r = await callBridge(ctx, "debug.configurations", {});
    const configurations = r.configurations.map((c) => ({ ...c, folder: displayPath(ctx.core, c.folder) }));
    const lines = configurations.map((c) => `- "${c.name}" (${c.type}, ${c.request}) in ${c.folder}`);
    const compounds = r.compounds.length ? `\nCompounds: ${r.compounds.map((c) => `"${c}"`).join(", ")}` : "";
    return {
      text: configurations.length
        ? `Launch configurations:\n${lines.join("\n")}${compounds}`
        : `No launch configurations in the workspace.${compounds} Give debug_start an inline configuration, e.g. {"type":"node","request":"launch","program":"app.js"}.`,
      structured: { configurations, compounds: r.compounds },
    };
  },
});
