import type { ToolCallLocation } from "@agentclientprotocol/sdk/unstable";
import { z } from "zod";
import { READ_ONLY } from "../../tools/kernel.ts";
import { absPath, defineAcpTool, truncateForModel } from "./types.ts";

const Input = z.object({
  pattern: z.string().describe("Regular expression to search for."),
  path: z.string().optional().describe("File or folder to search (default: the project directory)."),
  include: z.array(z.string()).optional().describe('Only files matching these globs, e.g. ["*.ts"].'),
  case_sensitive: z.boolean().optional().describe("Match case exactly (default true)."),
  max_results: z.number().int().positive().max(2000).optional().describe("Default 200."),
});

/** Hits reported to the client as tool call locations (the model sees all of them as text). */
const MAX_HIT_LOCATIONS = 100;

export const grepTool = defineAcpTool({
  name: "grep",
  description: "Search file contents with a regular expression (respects .gitignore). Returns path:line:text lines.",
  title: "Search file contents",
  input: Input,
  annotations: READ_ONLY,
  acp: {
    kind: "search",
    title: (i) => `Search "${i.pattern}"${i.path ? ` in ${i.path}` : ""}`,
    locations: (i, ctx) => [{ path: absPath(ctx.cwd, i.path ?? ".") }],
    access: () => ({ category: "read", ruleKey: "grep" }),
  },
  async execute(i, ctx) {
    const path = await ctx.io.resolve(i.path ?? ".");
    const r = await ctx.core.search.search({
      query: i.pattern,
      regex: true,
      path,
      ...(i.include ? { include: i.include } : {}),
      caseSensitive: i.case_sensitive ?? true,
      maxResults: i.max_results ?? 200,
      respectGitignore: true,
      signal: ctx.signal,
    });
    if (r.matches.length === 0) return { text: `No matches for ${i.pattern}.` };
    const lines = r.matches.map((m) => `${m.path}:${m.line}:${m.text}`);
    // a hit's path is a workspace display path: its absolute form is lexical
    const locations: ToolCallLocation[] = r.matches
      .slice(0, MAX_HIT_LOCATIONS)
      .map((m) => ({ path: ctx.core.workspace.lexical(m.path), line: m.line }));
    return {
      locations,
      text: truncateForModel(
        lines.join("\n") + (r.truncated ? `\n[truncated at ${r.matches.length} matches; narrow the search]` : ""),
      ),
      rawOutput: { count: r.matches.length, truncated: r.truncated },
    };
  },
});
