import type { Tool } from "@anthropic-ai/sdk/resources/messages";
import { z } from "zod";
import type { AgentTool } from "./tools/types.ts";

/** The tool definitions offered to the model. */
export function toolsForModel(tools: readonly AgentTool[]): Tool[] {
  return tools.map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: (t.jsonSchema ?? z.toJSONSchema(t.schema, { io: "input" })) as Tool["input_schema"],
  }));
}
