import { z } from "zod";
import {
  GIT_DEFAULT_MAX_BYTES,
  GIT_DEFAULT_TIMEOUT_MS,
  GIT_MAX_TIMEOUT_MS,
  type GitRunResult,
} from "../core/git/git.ts";
import { defineTool } from "./kernel.ts";
import { RepoDir } from "./shared/git.ts";

function section(name: string, body: string): string {
  return body.length > 0 ? `\n[${name}]\n${body.endsWith("\n") ? body : `${body}\n`}` : "";
}

export function formatRun(args: readonly string[], r: GitRunResult): string {
  let text = `git ${args.join(" ")}\nexit code ${r.exitCode}`;
  text += section("stdout", r.stdout) + section("stderr", r.stderr);
  if (r.truncated)
    text += `\n[output truncated: git wrote ${r.stdoutBytes ?? "more"} bytes; raise maxBytes or narrow the command]`;
  return text;
}

export default defineTool({
  name: "git_run",
  title: "Run git",
  description:
    'Run one git subcommand with an argument array, e.g. ["commit", "-m", "Fix parser"] or ["log", "--oneline", "-n", "20"]. ' +
    "No shell: arguments are passed as they are. The result has the exit code, stdout and stderr (a non-zero exit code is a " +
    "result, not an error). Hooks never run, editors and pagers are disabled (give -m for commits), and there is no terminal " +
    "for prompts. Refused (GIT_REFUSED): config keys that run programs (core.hooksPath, core.fsmonitor, core.sshCommand, " +
    "core.pager, core.editor, alias.*, filter/diff/merge drivers, credential helpers, include.path, protocol.*.allow, ...) via " +
    "-c, --config-env or git config; subcommands that run programs or need a terminal (difftool, mergetool, filter-branch, " +
    "bisect run, rebase --exec, submodule foreach, add -p, help, ...); --upload-pack/--receive-pack/--exec; aliases and external " +
    "git-* commands. Every path argument, -C, --git-dir and --work-tree must lie inside the workspace (PATH_OUTSIDE_WORKSPACE). " +
    "Pushing to a repository on the local disk is refused by git (its hooks would run); fetch, pull and push over " +
    "https/ssh reach the network.",
  input: z.object({
    args: z
      .array(z.string())
      .min(1)
      .max(1000)
      .describe(
        'Arguments after "git": the subcommand first (global options such as -C or -c may come before it), e.g. ["status", "--short"].',
      ),
    cwd: RepoDir,
    timeoutMs: z
      .number()
      .int()
      .min(1)
      .max(GIT_MAX_TIMEOUT_MS)
      .optional()
      .describe(`Kill git (and anything it started) after this many milliseconds (default ${GIT_DEFAULT_TIMEOUT_MS}).`),
    maxBytes: z
      .number()
      .int()
      .min(1)
      .max(64 * 1024 * 1024)
      .optional()
      .describe(
        `Cap on the stdout kept, in bytes (default ${GIT_DEFAULT_MAX_BYTES}); the rest is counted and dropped.`,
      ),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  async execute(args, ctx) {
    const r = await ctx.core.git.run(args.args, {
      cwd: args.cwd,
      timeoutMs: args.timeoutMs,
      maxBytes: args.maxBytes,
      signal: ctx.signal,
    });
    return { text: formatRun(args.args, r), structured: { args: args.args, ...r } };
  },
});
