import { z } from "zod";
import type { Checkpoint, CheckpointFilter } from "../core/checkpoints/index.ts";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { checkpointsFor, checkpointView } from "./shared/checkpoints.ts";

export default defineTool({
  name: "checkpoint_list",
  title: "List checkpoints",
  description:
    "The workspace's recorded changes, newest first, from every agent attached to ccb (MCP hosts, the Claude Code IDE, ACP " +
    "agents) and from the person: each checkpoint is one tool call's change (or a command's effects, or changes made outside " +
    "ccb) with who made it (frontEnd, client, session), the tool, the time and the files. Filter by agent, session, call, " +
    "path or time. Use an id with checkpoint_diff to see the change, checkpoint_restore to take it back.",
  input: z.object({
    agent: z
      .string()
      .max(200)
      .optional()
      .describe('Only this client\'s changes: its name ("claude-code") or front end and name ("mcp:cursor").'),
    session: z.string().max(200).optional().describe("Only changes of this session."),
    call: z
      .string()
      .max(100)
      .optional()
      .describe("Only the records of this tool call (the call field of a checkpoint)."),
    path: z.string().optional().describe("Only changes to this file or to files below this folder."),
    since: z.iso.datetime({ offset: true }).optional().describe("Only changes at or after this time (ISO 8601)."),
    until: z.iso.datetime({ offset: true }).optional().describe("Only changes at or before this time (ISO 8601)."),
    limit: z.number().int().min(1).max(500).default(50).describe("At most this many (default 50)."),
  }),
  annotations: READ_ONLY,
  async execute(args, ctx) {
    const cps = checkpointsFor(ctx.core);
    const f: CheckpointFilter = { limit: args.limit };
    if (args.agent) f.agent = args.agent;
    if (args.session) f.session = args.session;
    if (args.call) f.call = args.call;
    if (args.since) f.since = new Date(args.since);
    if (args.until) f.until = new Date(args.until);
    if (args.path !== undefined) {
      const p = await ctx.core.workspace.resolve(args.path);
      f.path = { root: p.root, rel: p.rel };
    }
    const list = await cps.list(f);
    const items = list.map((c) => checkpointView(ctx.core, c));
    const text =
      items.length === 0
        ? "No recorded changes match."
        : list.map((c: Checkpoint, i) => line(c, items[i]?.files ?? [])).join("\n");
    return { text, structured: { checkpoints: items } };
  },
});

function line(c: Checkpoint, files: readonly string[]): string {
  const who = `${c.frontEnd}:${c.client}${c.session ? ` (session ${c.session})` : ""}${c.identity ? ` as ${c.identity}` : ""}`;
  const shown = files.length > 5 ? `${files.slice(0, 5).join(", ")} and ${files.length - 5} more` : files.join(", ");
  return `${c.id.slice(0, 12)} ${c.time} ${c.phase} ${c.tool || "-"} by ${who}: ${shown}`;
}
