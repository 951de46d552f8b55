import { z } from "zod";
import type { FileEntry } from "../core/files/files.ts";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { Globs, PathInput, plural } from "./shared/fs.ts";

function line(e: FileEntry): string {
  if (e.type === "directory") return `${e.path}/`;
  if (e.type === "symlink") return `${e.path} -> (symlink, not followed)`;
  if (e.type === "other") return `${e.path} (special file)`;
  return `${e.path}  ${e.size} B${e.hardlinked ? "  (hard-linked: not readable)" : ""}`;
}

export default defineTool({
  name: "fs_list",
  title: "List files",
  description:
    "List a directory of the workspace (direct children by default; recursive with a depth limit), honouring .gitignore " +
    "(nested files too) and glob filters. Returns each entry's path, type and size; files up to 1 MiB also get their version " +
    "(SHA-256, usable as fs_write's expectedVersion) in the structured result. Symlinks are shown, never followed. " +
    "Says when the listing was cut at `limit`.",
  input: z.object({
    path: PathInput.optional().describe('Directory (or file) to list; default "." (the primary root).'),
    recursive: z.boolean().optional().describe("Descend into subdirectories (default false: direct children only)."),
    depth: z
      .number()
      .int()
      .min(1)
      .max(64)
      .optional()
      .describe("Levels to descend (1 = direct children); setting it implies recursive."),
    include: Globs.optional().describe(
      "Only list entries matching one of these globs (directories are still descended).",
    ),
    exclude: Globs.optional().describe("Skip entries matching these globs; an excluded directory is not descended."),
    respectGitignore: z
      .boolean()
      .optional()
      .describe("Skip what .gitignore files ignore, and the .git directory (default true)."),
    includeHidden: z.boolean().optional().describe("Include entries whose name starts with '.' (default true)."),
    limit: z
      .number()
      .int()
      .min(1)
      .max(10_000)
      .optional()
      .describe("Maximum entries to return (default 1000); the result says when it was cut."),
    withVersions: z
      .boolean()
      .optional()
      .describe("Compute versions of files up to 1 MiB (default true; false is faster for big trees)."),
  }),
  annotations: READ_ONLY,
  async execute(args, ctx) {
    const r = await ctx.core.files.list({ ...args, signal: ctx.signal });
    const head = `${r.dir}: ${plural(r.entries.length, "entry", "entries")}${r.truncated ? ` (truncated at limit ${args.limit ?? 1000}: narrow path/include or raise limit)` : ""}`;
    const text = [head, ...r.entries.map(line)].join("\n");
    return { text, structured: { dir: r.dir, entries: r.entries, truncated: r.truncated } };
  },
});
