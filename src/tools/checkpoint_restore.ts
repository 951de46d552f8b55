import { z } from "zod";
import { CcbError } from "../core/errors.ts";
import { defineTool } from "./kernel.ts";
import { CheckpointId, checkpointsFor, checkpointView } from "./shared/checkpoints.ts";

export default defineTool({
  name: "checkpoint_restore",
  title: "Undo or restore checkpoints",
  description:
    "Take back recorded changes while keeping everyone else's: mode `undo` reverse-applies the changes of one checkpoint (id), " +
    "one tool call (call), one session (session) or one agent (agent) with a 3-way merge; if someone changed the same lines " +
    "since, nothing is written and the conflicting files and lines are named. Mode `restore` sets every recorded file back to " +
    "its state at checkpoint id. Either way the result is itself a checkpoint, which checkpoint_restore can undo.",
  input: z.object({
    mode: z
      .enum(["undo", "restore"])
      .default("undo")
      .describe("undo: take back the selected changes only; restore: the whole workspace back to checkpoint id."),
    id: CheckpointId.optional(),
    call: z.string().max(100).optional().describe("undo: every record of this tool call."),
    session: z.string().max(200).optional().describe("undo: every change of this session."),
    agent: z
      .string()
      .max(200)
      .optional()
      .describe('undo: every change of this client ("claude-code", or "mcp:cursor").'),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async execute(args, ctx) {
    const cps = checkpointsFor(ctx.core);
    const display = (w: { root: string; path: string }) => ctx.core.workspace.displayRel(w.root, w.path);
    if (args.mode === "restore") {
      if (!args.id) throw new CcbError("INVALID_ARGUMENT", "mode restore needs id: the checkpoint to go back to.");
      const r = await cps.restore(args.id, ctx.caller, ctx.signal);
      const files = r.written.map(display);
      const rec = r.recorded.map((c) => c.id);
      return {
        text:
          files.length === 0
            ? `Nothing to restore: the recorded files already match checkpoint ${args.id.slice(0, 12)}.`
            : `Restored ${files.length} file(s) to checkpoint ${args.id.slice(0, 12)}: ${files.join(", ")}. Undo with id ${rec[0]?.slice(0, 12)}.`,
        structured: { mode: "restore", files, recorded: r.recorded.map((c) => checkpointView(ctx.core, c)) },
      };
    }
    const select: { id?: string; call?: string; session?: string; agent?: string } = {};
    if (args.id) select.id = args.id;
    if (args.call) select.call = args.call;
    if (args.session) select.session = args.session;
    if (args.agent) select.agent = args.agent;
    const r = await cps.undo(select, ctx.caller, ctx.signal);
    const files = r.written.map(display);
    return {
      text:
        files.length === 0
          ? `Nothing to undo: ${r.undone.length} change set(s) already taken back.`
          : `Took back ${r.undone.length} change set(s) in ${files.length} file(s): ${files.join(", ")}. Undo this with id ${r.recorded[0]?.id.slice(0, 12)}.`,
      structured: {
        mode: "undo",
        undone: r.undone.map((c) => c.id),
        files,
        recorded: r.recorded.map((c) => checkpointView(ctx.core, c)),
      },
    };
  },
});
