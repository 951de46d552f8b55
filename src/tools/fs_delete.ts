import { z } from "zod";
import { defineTool } from "./kernel.ts";
import { FS_WRITE, PathInput, Version } from "./shared/fs.ts";

export default defineTool({
  name: "fs_delete",
  title: "Delete a file or directory",
  description:
    "Delete a workspace file, symlink (the link itself, never its target) or, with recursive: true, a directory and everything in it. " +
    "A workspace root cannot be deleted. Pass expectedVersion to delete a file only if it is still the version you saw.",
  input: z.object({
    path: PathInput,
    recursive: z
      .boolean()
      .optional()
      .describe("Required to delete a directory (with all its contents). Default false."),
    expectedVersion: Version.optional().describe(
      "Delete the file only if its current version is this one (VERSION_CONFLICT otherwise).",
    ),
  }),
  annotations: { ...FS_WRITE, idempotentHint: true },
  async execute(args, ctx) {
    const { path, ...options } = args;
    const r = await ctx.core.files.delete(path, { ...options, signal: ctx.signal });
    return { text: `Deleted ${r.deleted} ${r.path}.`, structured: r };
  },
});
