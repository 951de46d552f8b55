import type { Reply, Script, ToolUseReply } from "./fake-anthropic.ts";
import { isSideRequest } from "./fake-anthropic.ts";

/** The last user message of a request carries tool results (the model is being told what its tools did). */
export function lastToolResults(body: any): { tool_use_id: string; is_error?: boolean; content: unknown }[] {
  const last = body?.messages?.at(-1);
  if (last?.role !== "user" || !Array.isArray(last.content)) return [];
  return last.content.filter((b: any) => b.type === "tool_result");
}

/** The text of the last text block of the last message (the newest prompt). */
export function lastUserText(body: any): string {
  const last = body?.messages?.at(-1);
  if (!last || typeof last.content === "string") return last?.content ?? "";
  return last.content.filter((b: any) => b.type === "text").at(-1)?.text ?? "";
}

/**
 * A model scripted by the newest prompt's text: `onPrompt(prompt)` answers it, and once tools have
 * answered, `onResults(results)` does (side requests get "Title").
 */
export function byPrompt(
  onResults: (results: ReturnType<typeof lastToolResults>) => Reply,
  onPrompt: (prompt: string) => Reply,
): Script {
  return ({ body }): Reply => {
    if (isSideRequest(body)) return { text: "Title" };
    const results = lastToolResults(body);
    if (results.length > 0) return onResults(results);
    return onPrompt(lastUserText(body));
  };
}

/**
 * A model that answers a prompt with the tool calls `plan(promptText)` returns (if any), and once
 * its tools have answered, with `final` text.
 */
export function toolThenText(
  plan: (prompt: string) => ToolUseReply[] | undefined,
  final: (results: ReturnType<typeof lastToolResults>) => string = () => "Done.",
): Script {
  return byPrompt(
    (results) => ({ text: final(results) }),
    (prompt) => {
      const uses = plan(prompt);
      return uses && uses.length > 0 ? { toolUses: uses } : { text: "No tools needed." };
    },
  );
}
