import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { CcbError, toCcbError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";

/**
 * The one place where a failed tool call becomes an MCP result. Core errors keep their code,
 * message and hint; anything else becomes INTERNAL with its message only (no stack, no cause, no
 * details: those may hold paths of the server machine or secrets and are logged instead).
 */
export function toolErrorResult(err: unknown, toolName: string, log?: Logger): CallToolResult {
  const e = toCcbError(err);
  if (e.code === "INTERNAL") {
    log?.error(`tool ${toolName} failed: ${describe(err)}`);
  } else {
    log?.debug(`tool ${toolName}: ${e.code}: ${e.message}`);
  }
  const safe = e.code === "INTERNAL" ? internal(toolName, e) : e;
  return {
    isError: true,
    content: [{ type: "text", text: safe.toUserText() }],
    structuredContent: {
      error: { code: safe.code, message: safe.message, ...(safe.hint ? { hint: safe.hint } : {}) },
    },
  };
}

function internal(toolName: string, e: CcbError): CcbError {
  return new CcbError("INTERNAL", `${toolName} failed unexpectedly: ${firstLine(e.message)}`, {
    hint: "This is a bug in ccb or an unexpected environment problem; the server keeps running. Retry, or check the server log.",
  });
}

function firstLine(s: string): string {
  const line = s.split("\n", 1)[0] ?? "";
  return line.length > 500 ? `${line.slice(0, 500)}…` : line;
}

function describe(err: unknown): string {
  if (err instanceof Error) return err.stack ?? err.message;
  return String(err);
}
