import type { PermissionOption } from "@agentclientprotocol/sdk/unstable";
import { z } from "zod";
import { textContent } from "../converters.ts";
import { defineAcpTool } from "./types.ts";

const Input = z.object({ plan: z.string().describe("The plan, in Markdown, for the user to approve.") });

const PLAN_OPTIONS: PermissionOption[] = [
  { optionId: "acceptEdits", name: "Yes, and auto-accept edits", kind: "allow_always" },
  { optionId: "default", name: "Yes, and ask before edits", kind: "allow_once" },
  { optionId: "plan", name: "No, keep planning", kind: "reject_once" },
];

/** Leaves plan mode once the user approves; its gate replaces the permission step (it switches the mode). */
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
    /** The user approves the plan (the mode switches) or keeps planning; outside plan mode it is a no-op. */
    async gate(input, ctx) {
      if (ctx.mode !== "plan")
        return {
          kind: "done",
          outcome: { text: "You are not in plan mode; go ahead.", content: [textContent("Not in plan mode.")] },
        };
      ctx.show([textContent(input.plan)]);
      const answer = await ctx.ask(PLAN_OPTIONS);
      if (answer === "cancelled") return { kind: "cancelled" };
      if (answer === "plan" || answer === undefined)
        return { kind: "reject", text: "The user wants to keep planning. Ask what to change, or refine the plan." };
      ctx.setMode(answer === "acceptEdits" ? "acceptEdits" : "default");
      return { kind: "done", outcome: { text: "The user approved the plan. Implement it now." } };
    },
  },
  async execute() {
    return { text: "The user approved the plan. Go ahead and implement it." };
  },
});
