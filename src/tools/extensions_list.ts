import { z } from "zod";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { callBridge } from "./shared/editor.ts";

export default defineTool({
  name: "extensions_list",
  title: "List editor extensions",
  description:
    "List the extensions installed in the live workbench (id, version, active or not). Needs the editor bridge.",
  input: z.object({
    includeBuiltin: z
      .boolean()
      .optional()
      .describe("Also list the built-in extensions shipped with the workbench (default false)."),
  }),
  annotations: READ_ONLY,
  needsBridge: true,
  async execute(args, ctx) {
    const r = await callBridge(ctx, "extensions.list", { includeBuiltin: args.includeBuiltin ?? false });
    const list = r.extensions.map(({ path: _path, ...rest }) => rest).sort((a, b) => a.id.localeCompare(b.id));
    const lines = list.map(
      (e) => `${e.id}@${e.version}${e.builtin ? " (built-in)" : ""}${e.isActive ? " active" : ""}`,
    );
    return { text: `${list.length} extension(s):\n${lines.join("\n")}`, structured: { extensions: list } };
  },
});
