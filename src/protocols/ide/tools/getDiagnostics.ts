import { existsSync } from "node:fs";
import { z } from "zod";
import { READ_ONLY } from "../../../tools/kernel.ts";
import { diagnosticsPayload, json, pathsFromUri } from "../converters.ts";
import { defineIdeTool } from "./tool.ts";

export default defineIdeTool({
  name: "getDiagnostics",
  title: "Diagnostics",
  description:
    "Get language diagnostics (errors, warnings) from the editor. Pass a file URI for one file; without it, diagnostics of all files are returned.",
  input: z.object({
    uri: z
      .string()
      .optional()
      .describe(
        "Optional file URI (file:///abs/path) to get diagnostics for. If not provided, gets diagnostics for all files.",
      ),
  }),
  annotations: READ_ONLY,
  async execute(args, ctx) {
    const candidates = args.uri ? pathsFromUri(args.uri) : undefined;
    const path = candidates ? (candidates.find((p) => existsSync(p)) ?? candidates[0]) : undefined;
    return json(diagnosticsPayload(await ctx.editor.diagnostics(path, ctx.signal)));
  },
});
