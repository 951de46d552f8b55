import type { PermissionOption, ToolCallContent } from "@agentclientprotocol/sdk/unstable";
import { textContent } from "./converters.ts";
import type { ModeId } from "./modes.ts";
import { exitPlanTool } from "./tools/plan.ts";
import type { AgentTool, ToolOutcome } from "./tools/types.ts";

/**
 * What a turn offers the model: an agent tool plus two declarations the generic runner honours
 * without knowing any tool by name.
 */
// biome-ignore lint/suspicious/noExplicitAny: erased input type in the heterogeneous tool list
export type TurnTool<I = any> = AgentTool<I> & {
  /** Replaces the mode/rule permission step (and may end the call without running it). */
  gate?: ToolGate<I>;
  /** Needs the live editor: offered to the model only while the workbench's bridge is connected. */
  needsBridge?: boolean;
};

/** What a gate may do while the call waits: read the mode, show content, ask the user, switch the mode. */
export interface GateContext {
  mode: ModeId;
  show(content: ToolCallContent[]): void;
  /** The chosen optionId, "cancelled" when the turn was cancelled, or undefined for an unknown answer. */
  ask(options: PermissionOption[]): Promise<string | "cancelled" | undefined>;
  setMode(mode: ModeId): void;
}

export type GateResult =
  /** Go on as if permission was granted: the tool runs. */
  | { kind: "run" }
  /** The call ends here, completed, with this text for the model (and content for the client when given). */
  | { kind: "done"; outcome: ToolOutcome }
  /** The call fails with this text for the model. */
  | { kind: "reject"; text: string }
  | { kind: "cancelled" };

// biome-ignore lint/suspicious/noExplicitAny: erased input type, like TurnTool
export type ToolGate<I = any> = (input: I, ctx: GateContext) => Promise<GateResult>;

const PLAN_OPTIONS: PermissionOption[] = [
  { optionId: "acceptEdits", name: "Yes, and auto-accept edits", kind: "allow_always" },
  { optionId: "default", name: "Yes, and ask before edits", kind: "allow_once" },
  { optionId: "plan", name: "No, keep planning", kind: "reject_once" },
];

/** exit_plan_mode: the user approves the plan (the mode switches) or keeps planning; outside plan mode it is a no-op. */
export const exitPlanGate: ToolGate<{ plan: string }> = async (input, ctx) => {
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
};

/** The built-in tools with their declared gates. */
export function withGates(tools: readonly AgentTool[]): TurnTool[] {
  return tools.map((t) => (t === exitPlanTool ? { ...t, gate: exitPlanGate } : t));
}

/** The tools of one model request: bridge-needing ones only while the bridge is connected. */
export function offeredTools(tools: readonly TurnTool[], bridgeConnected: boolean): TurnTool[] {
  return tools.filter((t) => !t.needsBridge || bridgeConnected);
}
