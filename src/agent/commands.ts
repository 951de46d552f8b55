import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { AvailableCommand } from "@agentclientprotocol/sdk/unstable";

/**
 * Slash commands: built-ins plus Markdown prompt files. Later folders override earlier ones:
 *   user     ~/.claude/commands/*.md, <configDir>/commands/*.md (~/.config/ccb/commands)
 *   project  <cwd>/.claude/commands/*.md, <cwd>/.ccb/commands/*.md
 * A file may start with `---` frontmatter (`description:`, `argument-hint:`); `$ARGUMENTS` in the
 * body is replaced with what follows the command name.
 */
export interface SlashCommand {
  name: string;
  description: string;
  hint?: string;
  template: string;
  source: "builtin" | "user" | "project";
}

const BUILTINS: SlashCommand[] = [
  {
    name: "init",
    description: "Write an AGENTS.md describing this project for future sessions",
    template:
      "Explore this repository (layout, build and test commands, conventions) and write a concise AGENTS.md at the project root for future coding sessions. $ARGUMENTS",
    source: "builtin",
  },
  {
    name: "review",
    description: "Review the uncommitted changes",
    hint: "optional focus",
    template:
      "Review the uncommitted changes in this repository (use git status and git diff). Point out bugs, risks and missing tests, most important first. $ARGUMENTS",
    source: "builtin",
  },
  {
    name: "security-review",
    description: "Review the uncommitted changes for security problems",
    hint: "optional focus",
    template:
      "Do a security review of the uncommitted changes in this repository (use git status and git diff, and read the surrounding code). Look for injection, path traversal, unsafe deserialization, secrets in code, missing authentication or authorization checks, unsafe defaults and race conditions. Report only real, exploitable problems with file and line, most severe first, each with a concrete fix. $ARGUMENTS",
    source: "builtin",
  },
  {
    name: "commit",
    description: "Commit the current changes with a good message",
    template:
      "Look at git status and git diff, then stage the relevant changes and commit them with a clear, conventional commit message. $ARGUMENTS",
    source: "builtin",
  },
];

function parseFile(text: string): { description?: string; hint?: string; body: string } {
  const m = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (!m) return { body: text };
  const meta: Record<string, string> = {};
  for (const line of m[1]!.split(/\r?\n/)) {
    const kv = /^([A-Za-z-]+):\s*(.*)$/.exec(line);
    if (kv) meta[kv[1]!.toLowerCase()] = kv[2]!.replace(/^["']|["']$/g, "");
  }
  return {
    ...(meta.description ? { description: meta.description } : {}),
    ...(meta["argument-hint"] ? { hint: meta["argument-hint"] } : {}),
    body: text.slice(m[0].length),
  };
}

function fromDir(dir: string, source: "user" | "project"): SlashCommand[] {
  if (!existsSync(dir)) return [];
  const out: SlashCommand[] = [];
  for (const f of readdirSync(dir)) {
    if (!f.endsWith(".md")) continue;
    const name = f.slice(0, -3);
    if (!/^[A-Za-z0-9_:.-]+$/.test(name)) continue;
    try {
      const p = parseFile(readFileSync(join(dir, f), "utf8"));
      out.push({
        name,
        description: p.description ?? p.body.trim().split("\n")[0]?.slice(0, 100) ?? name,
        ...(p.hint ? { hint: p.hint } : {}),
        template: p.body,
        source,
      });
    } catch {
      // unreadable command file: skipped
    }
  }
  return out;
}

export function loadCommands(cwd: string, home: string | undefined, configDir: string | undefined): SlashCommand[] {
  const all = new Map<string, SlashCommand>();
  const layers = [
    BUILTINS,
    home ? fromDir(join(home, ".claude", "commands"), "user") : [],
    configDir ? fromDir(join(configDir, "commands"), "user") : [],
    fromDir(join(cwd, ".claude", "commands"), "project"),
    fromDir(join(cwd, ".ccb", "commands"), "project"),
  ];
  for (const layer of layers) for (const c of layer) all.set(c.name, c);
  return [...all.values()];
}

export function availableCommands(cmds: SlashCommand[]): AvailableCommand[] {
  return cmds.map((c) => ({
    name: c.name,
    description: c.description,
    ...(c.hint ? { input: { hint: c.hint } } : {}),
  }));
}

/** The prompt text a `/name args` prompt expands to, or undefined when it is not a known command. */
export function expandCommand(text: string, cmds: SlashCommand[]): string | undefined {
  const m = /^\/([A-Za-z0-9_:.-]+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!m) return undefined;
  const cmd = cmds.find((c) => c.name === m[1]);
  if (!cmd) return undefined;
  const args = (m[2] ?? "").trim();
  return cmd.template.includes("$ARGUMENTS")
    ? cmd.template.split("$ARGUMENTS").join(args).trim()
    : `${cmd.template.trim()}${args ? `\n\n${args}` : ""}`;
}
