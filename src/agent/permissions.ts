import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { PermissionOption, PermissionOptionKind } from "@agentclientprotocol/sdk/unstable";
import { z } from "zod";
import type { ModeId } from "./modes.ts";

/**
 * What a tool call wants to do, as far as permissions care:
 * - read: no side effects (read, glob, grep, git status/diff/log, todo) -> always runs
 * - edit: changes files in the project -> auto in acceptEdits/auto/bypass, asks in default
 * - execute: runs a program -> asks unless a rule allows it (auto runs `safe` commands)
 * - other: MCP tools and anything else -> asks
 * `ruleKey` is what an "always" answer remembers (e.g. "edit", "bash:npm test", "mcp__srv__tool").
 */
export interface ToolAccess {
  category: "read" | "edit" | "execute" | "other";
  ruleKey: string;
  /** A command known to be read-only (auto mode runs it without asking). */
  safe?: boolean;
}

export type Decision = { kind: "allow" } | { kind: "ask" } | { kind: "deny"; reason: string };

export function decide(mode: ModeId, access: ToolAccess, rules: PermissionRules): Decision {
  if (access.category === "read") return { kind: "allow" };
  if (rules.isDenied(access.ruleKey))
    return { kind: "deny", reason: `A "reject always" rule for ${access.ruleKey} refuses this. Try another approach.` };
  if (mode === "plan")
    return {
      kind: "deny",
      reason:
        "Plan mode is read-only. Finish exploring, then call exit_plan_mode with your plan; changes are possible once the user approves it.",
    };
  if (rules.isAllowed(access.ruleKey)) return { kind: "allow" };
  switch (mode) {
    case "bypassPermissions":
      return { kind: "allow" };
    case "acceptEdits":
      return access.category === "edit" ? { kind: "allow" } : { kind: "ask" };
    case "auto":
      return access.category === "edit" || access.safe ? { kind: "allow" } : { kind: "ask" };
    case "dontAsk":
      return {
        kind: "deny",
        reason: `Mode dontAsk refuses tools that no rule allows (${access.ruleKey}). Ask the user to allow it or to switch modes.`,
      };
    case "default":
      return { kind: "ask" };
    default: {
      const never: never = mode;
      return never;
    }
  }
}

export const PERMISSION_OPTIONS: PermissionOption[] = [
  { optionId: "allow_once", name: "Allow", kind: "allow_once" },
  { optionId: "allow_always", name: "Always allow", kind: "allow_always" },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" },
  { optionId: "reject_always", name: "Always reject", kind: "reject_always" },
];

export function optionKind(optionId: string): PermissionOptionKind | undefined {
  return PERMISSION_OPTIONS.find((o) => o.optionId === optionId)?.kind;
}

const RulesFile = z.object({ cwd: z.string(), allow: z.array(z.string()), deny: z.array(z.string()) });

/**
 * "Always" answers, persisted per project in the user's data folder:
 * `<dataDir>/permissions/<sha256(cwd)[0..16]>.json` (0600, written atomically), so they hold after
 * a restart and never land in the project's repository.
 */
export class PermissionRules {
  private allow = new Set<string>();
  private deny = new Set<string>();

  constructor(
    readonly file: string | undefined,
    readonly cwd: string,
  ) {
    if (file && existsSync(file)) {
      try {
        const parsed = RulesFile.parse(JSON.parse(readFileSync(file, "utf8")));
        this.allow = new Set(parsed.allow);
        this.deny = new Set(parsed.deny);
      } catch {
        // a damaged rules file grants nothing
      }
    }
  }

  static forProject(dataDir: string, cwd: string): PermissionRules {
    const key = createHash("sha256").update(cwd).digest("hex").slice(0, 16);
    return new PermissionRules(join(dataDir, "permissions", `${key}.json`), cwd);
  }

  isAllowed(key: string): boolean {
    return this.allow.has(key);
  }
  isDenied(key: string): boolean {
    return this.deny.has(key);
  }

  remember(key: string, kind: "allow" | "deny"): void {
    (kind === "allow" ? this.allow : this.deny).add(key);
    (kind === "allow" ? this.deny : this.allow).delete(key);
    this.save();
  }

  private save(): void {
    if (!this.file) return;
    mkdirSync(join(this.file, ".."), { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ cwd: this.cwd, allow: [...this.allow], deny: [...this.deny] }, null, 2), {
      mode: 0o600,
    });
    renameSync(tmp, this.file);
  }
}

const SAFE_COMMANDS = new Set([
  "ls",
  "pwd",
  "cat",
  "head",
  "tail",
  "wc",
  "echo",
  "which",
  "file",
  "stat",
  "du",
  "df",
  "grep",
  "rg",
  "find",
  "tree",
  "date",
  "whoami",
  "uname",
  "env",
]);
const SAFE_GIT = new Set(["status", "diff", "log", "show", "branch", "blame", "rev-parse", "ls-files"]);

/** A command auto mode may run without asking: one simple read-only program, no redirection or chaining. */
export function isSafeCommand(command: string): boolean {
  if (/[;&|<>`$(){}]/.test(command)) return false;
  const words = command.trim().split(/\s+/);
  const prog = words[0] ?? "";
  if (prog === "git") return SAFE_GIT.has(words[1] ?? "");
  if (prog === "find" && words.some((w) => w === "-exec" || w === "-delete")) return false;
  return SAFE_COMMANDS.has(prog);
}
