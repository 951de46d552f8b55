import { z } from "zod";
import type { ToolAnnotations } from "../kernel.ts";

/** Shared schema pieces and annotation presets of the fs_* tools. */

export const PathInput = z
  .string()
  .min(1)
  .describe(
    'Path relative to the workspace root (e.g. "src/index.ts"; "." is the root), or absolute inside a root. With several roots, prefix the root name (as shown by workspace_status).',
  );

export const Version = z
  .string()
  .regex(
    /^[0-9a-f]{64}$/,
    "a version is the 64-character lower-case SHA-256 hex that fs_read, fs_list or fs_write returned",
  )
  .describe("SHA-256 hex of the file's bytes, as returned by fs_read, fs_list or fs_write.");

export const Globs = z
  .array(z.string().min(1))
  .max(100)
  .describe(
    "Gitignore-style globs relative to the workspace root: a glob without '/' matches a name at any depth (\"*.ts\"), one with '/' is anchored (\"src/**/*.test.ts\"), a trailing '/' matches directories only.",
  );

/** Changes files; repeating the call does the same again (or fails with a conflict). */
export const FS_WRITE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: false,
};

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
