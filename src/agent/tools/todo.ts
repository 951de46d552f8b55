import { z } from "zod";
import { defineAcpTool } from "./types.ts";

const Input = z.object({
  todos: z
    .array(
      z.object({
        content: z.string().describe("What to do, in a short sentence."),
        status: z.enum(["pending", "in_progress", "completed"]).describe("Where the item stands."),
        priority: z.enum(["high", "medium", "low"]).optional().describe("How important the item is."),
      }),
    )
    .describe("The whole todo list (replaces the previous one)."),
});

export const todoTool = defineAcpTool({
  name: "todo_write",
  description:
    "Keep a visible todo list for multi-step work. Send the whole list each time; mark one item in_progress at a time.",
  title: "Update the todo list",
  input: Input,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  acp: {
    kind: "think",
    title: (i) => `Update plan (${i.todos.filter((t) => t.status === "completed").length}/${i.todos.length} done)`,
    locations: () => [],
    access: () => ({ category: "read", ruleKey: "todo" }),
  },
  async execute(i, ctx) {
    ctx.setPlan(i.todos);
    return { text: "Todo list updated.", content: [] };
  },
});
