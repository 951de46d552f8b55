import { z } from "zod";
import { defineTool } from "./kernel.ts";
import { FS_WRITE, PathInput, Version } from "./shared/fs.ts";

export default defineTool({
  name: "fs_write",
  title: "Write a file",
  description:
    "Create or overwrite a workspace file with the given content. The write is atomic (temp file + rename; the file mode is kept). " +
    "For safe edits pass expectedVersion (the version fs_read returned): if the file changed meanwhile the call fails with " +
    "VERSION_CONFLICT and the current version, and nothing is written. expectedVersion null means the file must not exist yet. " +
    "Returns the new version.",
  input: z.object({
    path: PathInput,
    content: z.string().describe('The complete new content (UTF-8 text, or base64 when encoding is "base64").'),
    encoding: z.enum(["utf8", "base64"]).optional().describe('How content is encoded (default "utf8").'),
    expectedVersion: Version.nullable()
      .optional()
      .describe(
        "Version the caller last saw (from fs_read/fs_list/fs_write); null = the file must not exist yet. Omit to write unconditionally.",
      ),
    createParents: z.boolean().optional().describe("Create missing parent directories (default false)."),
  }),
  annotations: FS_WRITE,
  async execute(args, ctx) {
    const { path, content, ...options } = args;
    const r = await ctx.core.files.write(path, content, { ...options, signal: ctx.signal });
    const what = r.created ? "Created" : "Overwrote";
    const prev = r.previousVersion ? `, previous version ${r.previousVersion}` : "";
    const { abs: _abs, ...structured } = r;
    return { text: `${what} ${r.path} (${r.size} bytes, version ${r.version}${prev}).`, structured };
  },
});
