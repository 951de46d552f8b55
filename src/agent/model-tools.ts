import type { Tool } from "@anthropic-ai/sdk/resources/messages";
import { inputSchema } from "../tools/kernel.ts";
import type { AcpTool } from "./tools/types.ts";

/** The tool definitions offered to the model (input schemas from the kernel, or a remote MCP tool's own). */
export function toolsForModel(tools: readonly AcpTool[]): Tool[] {
  return tools.map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: (t.acp.jsonSchema ?? inputSchema(t.input)) as Tool["input_schema"],
  }));
}
