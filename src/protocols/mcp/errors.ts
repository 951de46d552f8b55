import type { CallToolResult } from "@modelcontextprotocol/server";
import type { HintAction, HintNames } from "../../core/errors.ts";
import { toolFailure } from "../../tools/kernel.ts";

/** The MCP tools that play each role a core hint can name (`{{list}}` → fs_list). */
const MCP_TOOL_ROLES: Record<HintAction, string> = {
  list: "fs_list",
  read: "fs_read",
  write: "fs_write",
  git: "git_run",
  gitStatus: "git_status",
  gitDiff: "git_diff",
  terminal: "terminal_create",
  terminalList: "terminal_list",
  terminalRead: "terminal_read",
};

/** Hint names for a server that offers `has` tools: a role whose tool it does not serve reads as plain words. */
export function mcpHintNames(has: (tool: string) => boolean): HintNames {
  return Object.fromEntries(Object.entries(MCP_TOOL_ROLES).filter(([, tool]) => has(tool)));
}

/**
 * The one place where a failed tool call becomes an MCP result: the kernel's CcbError (its code,
 * message and hint; an unexpected failure already sanitized by the kernel) as an isError result.
 */
export function toolErrorResult(err: unknown, toolName = "tool", names: HintNames = MCP_TOOL_ROLES): CallToolResult {
  const e = toolFailure(toolName, err);
  const hint = e.hintFor(names);
  return {
    isError: true,
    content: [{ type: "text", text: e.toUserText(names) }],
    structuredContent: {
      error: { code: e.code, message: e.message, ...(hint ? { hint } : {}) },
    },
  };
}
