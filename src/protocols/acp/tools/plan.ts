import { z } from "zod";
import { defineAcpTool } from "./types.ts";

const Input = z.object({ plan: z.string().describe("The plan, in Markdown, for the user to approve.") });

/** Leaves plan mode once the user approves; the permission step is handled by the loop (it switches the mode). */
export const exitPlanTool = defineAcpTool({
  name: "exit_plan_mode",
  description:
    "In plan mode: present your plan for approval. When the user approves, the mode switches and you can make changes.",
  title: "Leave plan mode",
  input: Input,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  acp: {
    kind: "switch_mode",
    title: () => "Ready to code?",
    locations: () => [],
    access: () => ({ category: "other", ruleKey: "exit_plan_mode" }),
  },
  async execute() {
    return { text: "The user approved the plan. Go ahead and implement it." };
  },
});
