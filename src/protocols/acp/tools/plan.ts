import { z } from "zod";
import { defineAgentTool } from "./types.ts";

const Input = z.object({ plan: z.string().describe("The plan, in Markdown, for the user to approve.") });

/** Leaves plan mode once the user approves; the permission step is handled by the loop (it switches the mode). */
export const exitPlanTool = defineAgentTool<z.infer<typeof Input>>({
  name: "exit_plan_mode",
  description: "In plan mode: present your plan for approval. When the user approves, the mode switches and you can make changes.",
  schema: Input,
  kind: "switch_mode",
  title: () => "Ready to code?",
  locations: () => [],
  access: () => ({ category: "other", ruleKey: "exit_plan_mode" }),
  async run() {
    return { text: "The user approved the plan. Go ahead and implement it." };
  },
});
