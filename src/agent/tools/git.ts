import { z } from "zod";
import { defineAcpTool, truncateForModel } from "./types.ts";

const Input = z.object({
  args: z
    .array(z.string())
    .min(1)
    .describe('git arguments, e.g. ["status"], ["diff", "--stat"], ["commit", "-m", "msg"].'),
});

const READ_ONLY = new Set([
  "status",
  "diff",
  "log",
  "show",
  "branch",
  "blame",
  "rev-parse",
  "ls-files",
  "describe",
  "shortlog",
  "grep",
]);

export const gitTool = defineAcpTool({
  name: "git",
  description:
    "Run git in the project (status, diff, log, show, add, commit, ...). Read-only subcommands run without asking.",
  title: "Run git",
  input: Input,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  acp: {
    kind: "execute",
    title: (i) => `git ${i.args.join(" ")}`,
    locations: () => [],
    access: (i) =>
      READ_ONLY.has(i.args[0] ?? "") && i.args.length < 40
        ? { category: "read", ruleKey: `git:${i.args[0]}` }
        : { category: "execute", ruleKey: `git:${i.args[0]}` },
  },
  async execute(i, ctx) {
    const r = await ctx.core.git.run(i.args, { cwd: ctx.cwd, signal: ctx.signal, timeoutMs: 120_000 });
    const text =
      `${r.stdout}${r.stderr ? `\n${r.stderr}` : ""}`.trimEnd() +
      `\n[git ${i.args[0]}: exit code ${r.exitCode}${r.truncated ? ", output truncated" : ""}]`;
    return { text: truncateForModel(text), isError: r.exitCode !== 0, rawOutput: { exitCode: r.exitCode } };
  },
});
