import { z } from "zod";
import type { ReadResult } from "../core/files/files.ts";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { PathInput } from "./shared/fs.ts";

function header(r: ReadResult): string {
  const parts = [`version ${r.version}`, `${r.size} bytes`];
  if (r.range?.startLine !== undefined)
    parts.push(`lines ${r.range.startLine}-${r.range.endLine} of ${r.totalLines ?? "?"}`);
  else if (r.range?.byteOffset !== undefined)
    parts.push(`bytes ${r.range.byteOffset}-${r.range.byteOffset + (r.range.byteLength ?? 0)}`);
  else if (r.totalLines !== undefined) parts.push(`${r.totalLines} lines`);
  if (r.encoding !== "utf8") parts.push(`encoding ${r.encoding}`);
  if (r.binary) parts.push("binary");
  return `${r.path} (${parts.join(", ")})`;
}

function footer(r: ReadResult): string {
  if (!r.truncated || !r.next) return "";
  const how =
    r.next.startLine !== undefined
      ? `startLine=${r.next.startLine} or byteOffset=${r.next.byteOffset}`
      : `byteOffset=${r.next.byteOffset}`;
  return `\n[truncated at maxBytes: continue with ${how}]`;
}

export default defineTool({
  name: "fs_read",
  title: "Read a file",
  description:
    "Read a workspace file: the whole file, a 1-based inclusive line range, or a byte range. The first line of the text is a " +
    "header with the path and the file's version (SHA-256 of all its bytes: pass it to fs_write as expectedVersion); the content " +
    "follows. Content beyond maxBytes (default 256 KiB) is cut and the footer says where to continue. Binary files are refused " +
    'unless encoding "base64" is asked for. Hard-linked files and symlinks leading outside the workspace are refused.',
  input: z.object({
    path: PathInput,
    startLine: z.number().int().min(1).optional().describe("First line to return (1-based, inclusive)."),
    endLine: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Last line to return (1-based, inclusive); default the end of the file."),
    byteOffset: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("First byte to return (0-based); not together with a line range."),
    byteLength: z.number().int().min(0).optional().describe("Number of bytes to return from byteOffset."),
    maxBytes: z
      .number()
      .int()
      .min(1)
      .max(16 * 1024 * 1024)
      .optional()
      .describe("Cap on the returned content in bytes (default 262144)."),
    encoding: z
      .enum(["utf8", "base64", "latin1", "utf16le"])
      .optional()
      .describe(
        'How to decode the bytes. Default: UTF-8 text, refusing binary files; "base64" returns any file\'s raw bytes.',
      ),
  }),
  annotations: READ_ONLY,
  async execute(args, ctx) {
    const { path, ...options } = args;
    const r = await ctx.core.files.read(path, { ...options, signal: ctx.signal });
    const { abs: _abs, ...structured } = r;
    return { text: `${header(r)}\n${r.content}${footer(r)}`, structured };
  },
});
