import { z } from "zod";
import { defineAgentTool } from "./types.ts";

const Input = z.object({
  todos: z
    .array(
      z.object({
        content: z.string(),
        status: z.enum(["pending", "in_progress", "completed"]),
        priority: z.enum(["high", "medium", "low"]).optional(),
      }),
    )
    .describe("The whole todo list (replaces the previous one)."),
});

export const todoTool = defineAgentTool<z.infer<typeof Input>>({
  name: "todo_write",
  description: "Keep a visible todo list for multi-step work. Send the whole list each time; mark one item in_progress at a time.",
  schema: Input,
  kind: "think",
  title: (i) => `Update plan (${i.todos.filter((t) => t.status === "completed").length}/${i.todos.length} done)`,
  locations: () => [],
  access: () => ({ category: "read", ruleKey: "todo" }),
  async run(i, ctx) {
    ctx.setPlan(i.todos);
    return { text: "Todo list updated.", content: [] };
  },
});
