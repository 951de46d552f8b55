import type { ElicitationSchema } from "@agentclientprotocol/sdk/unstable";
import { z } from "zod";
import { CcbError } from "../../core/errors.ts";
import { textContent } from "../converters.ts";
import { defineAcpTool } from "./types.ts";

const Input = z.object({
  question: z.string().min(1).max(2000).describe("The question for the person, complete and self-contained."),
  choices: z
    .array(z.string().min(1).max(200))
    .min(2)
    .max(10)
    .optional()
    .describe("Offer these answers to pick from; leave out for a free-text answer."),
});

/** The form of one question: a pick among the choices, or one free-text field. */
export function questionSchema(choices: readonly string[] | undefined): ElicitationSchema {
  const answer = choices
    ? { type: "string" as const, title: "Answer", oneOf: choices.map((c) => ({ const: c, title: c })) }
    : { type: "string" as const, title: "Answer", minLength: 1 };
  return { type: "object", properties: { answer }, required: ["answer"] };
}

/**
 * Asks the person in the editor (ACP `elicitation/create`, form mode) and returns the answer, or
 * that they declined or dismissed the question. Offered only to clients that declared
 * `clientCapabilities.elicitation.form`; a cancelled turn withdraws the question ($/cancel_request).
 */
export const askPersonTool = defineAcpTool({
  name: "ask_person",
  description:
    "Ask the person a question in their editor and wait for the answer: give choices to pick from, or none for a free-text answer. Use it when you need a decision or a fact only they have; never ask for passwords, keys or other secrets.",
  title: "Ask the person",
  input: Input,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  acp: {
    kind: "think",
    title: (i) => `Question: ${i.question.slice(0, 120)}`,
    locations: () => [],
    // asking is itself the person's decision: no permission prompt before it
    access: () => ({ category: "read", ruleKey: "ask_person" }),
  },
  async execute(input, ctx) {
    if (!ctx.elicit)
      throw new CcbError("UNSUPPORTED", "This editor cannot ask the person questions; ask in your reply instead.");
    const r = await ctx.elicit(input.question, questionSchema(input.choices));
    if (r.action === "accept") {
      const answer = (r as { content?: Record<string, unknown> | null }).content?.answer;
      const text = Array.isArray(answer) ? answer.join(", ") : String(answer ?? "");
      return { text: `The person answered: ${text}`, content: [textContent(`Answer: ${text}`)], rawOutput: r };
    }
    if (r.action === "decline")
      return {
        text: "The person declined to answer. Go on without it, or ask in your reply.",
        content: [textContent("Declined.")],
        rawOutput: r,
      };
    return {
      text: "The person dismissed the question without answering (cancelled). Do not ask it again unprompted.",
      content: [textContent("Cancelled.")],
      rawOutput: r,
    };
  },
});
