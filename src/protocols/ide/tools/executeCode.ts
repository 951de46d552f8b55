import { z } from "zod";
import type { IdeToolResult } from "../converters.ts";
import { defineIdeTool } from "./tool.ts";

export default defineIdeTool({
  name: "executeCode",
  title: "Run code in the notebook kernel",
  description:
    "Execute python code in the Jupyter kernel for the current notebook file.\n\n" +
    "All code will be executed in the current Jupyter kernel.\n\n" +
    "Avoid declaring variables or modifying the state of the kernel unless the user explicitly asks for it.\n\n" +
    "Any code executed will persist across calls to this tool, unless the kernel has been restarted. " +
    "The user confirms each execution in the editor before it runs.",
  input: z.object({ code: z.string().describe("The code to be executed on the kernel.") }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  async execute(args, ctx): Promise<IdeToolResult> {
    const outputs = await ctx.editor.executeCode(args.code, ctx.signal);
    if (outputs.length === 0) return { content: [{ type: "text", text: "" }] };
    return {
      content: outputs.map((o) =>
        o.type === "text"
          ? { type: "text" as const, text: o.text }
          : { type: "image" as const, data: o.data, mimeType: o.mimeType },
      ),
    };
  },
});
