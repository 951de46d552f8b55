import { z } from "zod";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { CheckpointId, checkpointsFor, checkpointView } from "./shared/checkpoints.ts";

export default defineTool({
  name: "checkpoint_diff",
  title: "Checkpoint diff",
  description:
    "The unified diff one checkpoint records (what that tool call, command or outside change did to the files), with who " +
    "made it. Output beyond maxBytes is cut and the result says so.",
  input: z.object({
    id: CheckpointId,
    maxBytes: z
      .number()
      .int()
      .min(1)
      .max(16 * 1024 * 1024)
      .default(256 * 1024)
      .describe("Cap on the diff in bytes (default 262144)."),
  }),
  annotations: READ_ONLY,
  async execute(args, ctx) {
    const cps = checkpointsFor(ctx.core);
    await cps.flush();
    const d = await cps.store.diff(args.id, args.maxBytes);
    const view = checkpointView(ctx.core, d.checkpoint);
    const head = `${view.id.slice(0, 12)} ${view.phase} ${view.tool || "-"} by ${view.frontEnd}:${view.client} at ${view.time}`;
    const text = `${head}\n${d.diff || "(no textual change)"}${d.truncated ? "\n[diff truncated at maxBytes]" : ""}`;
    return { text, structured: { checkpoint: view, diff: d.diff, truncated: d.truncated } };
  },
});
