import { z } from "zod";
import { defineTool } from "./kernel.ts";
import { callBridge } from "./shared/editor.ts";

export default defineTool({
  name: "extensions_uninstall",
  title: "Uninstall an editor extension",
  description:
    "Uninstall an extension from the live workbench by id (see extensions_list). Built-in extensions cannot be removed. Needs the editor bridge.",
  input: z.object({
    id: z.string().min(3).describe('Extension id, publisher.name, e.g. "esbenp.prettier-vscode".'),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  needsBridge: true,
  async execute(args, ctx) {
    const r = await callBridge(ctx, "extensions.uninstall", { id: args.id });
    return {
      text: r.uninstalled ? `Uninstalled ${args.id}.` : `${args.id} was not installed.`,
      structured: { id: args.id, uninstalled: r.uninstalled },
    };
  },
});
