import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { toolFailure } from "../../tools/kernel.ts";

/**
 * The one place where a failed tool call becomes an MCP result: the kernel's CcbError (its code,
 * message and hint; an unexpected failure already sanitized by the kernel) as an isError result.
 */
export function toolErrorResult(err: unknown, toolName = "tool"): CallToolResult {
  const e = toolFailure(toolName, err);
  return {
    isError: true,
    content: [{ type: "text", text: e.toUserText() }],
    structuredContent: {
      error: { code: e.code, message: e.message, ...(e.hint ? { hint: e.hint } : {}) },
    },
  };
}
