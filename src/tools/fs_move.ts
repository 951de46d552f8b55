import { z } from "zod";
import { defineTool } from "./kernel.ts";
import { FS_WRITE, PathInput } from "./shared/fs.ts";

export default defineTool({
  name: "fs_move",
  title: "Move or rename",
  description:
    "Move or rename a workspace file or directory (a symlink is moved as a link). Both ends must lie inside the workspace. " +
    "An existing destination is only replaced with overwrite: true. Returns the new path and, for files, the version.",
  input: z.object({
    from: PathInput.describe(
      "Existing file or directory to move (relative to the workspace root, or absolute inside it).",
    ),
    to: PathInput.describe("New path (relative to the workspace root, or absolute inside it)."),
    overwrite: z
      .boolean()
      .optional()
      .describe("Replace an existing destination (default false: fail with ALREADY_EXISTS)."),
    createParents: z
      .boolean()
      .optional()
      .describe("Create missing parent directories of the destination (default false)."),
  }),
  annotations: FS_WRITE,
  async execute(args, ctx) {
    const r = await ctx.core.files.move(args.from, args.to, {
      overwrite: args.overwrite,
      createParents: args.createParents,
      signal: ctx.signal,
    });
    return { text: `Moved ${r.from} to ${r.to}${r.version ? ` (version ${r.version})` : ""}.`, structured: r };
  },
});
