import { z } from "zod";
import { CcbError } from "../core/errors.ts";
import { defineTool } from "./kernel.ts";
import { callBridge, resolveForEditor } from "./shared/editor.ts";

export default defineTool({
  name: "extensions_install",
  title: "Install an editor extension",
  description:
    "Install an extension into the live workbench, either from the workbench's marketplace by id (publisher.name; needs network access) " +
    "or from a local .vsix file inside the workspace. Extension code runs with the person's rights: install only what they asked for. " +
    "Needs the editor bridge.",
  input: z.object({
    id: z
      .string()
      .regex(/^[\w-]+\.[\w.-]+(@[\w.-]+)?$/)
      .optional()
      .describe('Marketplace id, e.g. "esbenp.prettier-vscode" (optionally @version).'),
    vsixPath: z.string().optional().describe("A .vsix file, relative to the workspace root or absolute inside it."),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  needsBridge: true,
  async execute(args, ctx) {
    if ((args.id === undefined) === (args.vsixPath === undefined)) {
      throw new CcbError("INVALID_ARGUMENT", "Give exactly one of id or vsixPath.");
    }
    ctx.core.bridge.require();
    const params =
      args.vsixPath !== undefined
        ? { vsixPath: await resolveForEditor(ctx.core, args.vsixPath) }
        : { id: args.id as string };
    if (params.vsixPath !== undefined && !params.vsixPath.toLowerCase().endsWith(".vsix")) {
      throw new CcbError("INVALID_ARGUMENT", `Not a .vsix file: ${args.vsixPath}`);
    }
    const r = await callBridge(ctx, "extensions.install", params);
    const what = r.id ?? args.id ?? args.vsixPath;
    return {
      text: r.installed ? `Installed ${what}.` : `The workbench did not install ${what}.`,
      structured: { installed: r.installed, id: r.id ?? args.id ?? null },
    };
  },
});
