import { z } from "zod";
import { type Checkpoint, type Checkpoints, checkpointsOf, describeCheckpoint } from "../../core/checkpoints/index.ts";
import type { Core } from "../../core/core.ts";
import { CcbError } from "../../core/errors.ts";

/** What the checkpoint tools share: the store of the core, the id field, a checkpoint as a caller sees it. */

export const CheckpointId = z
  .string()
  .regex(/^[0-9a-f]{7,40}$/, "a checkpoint id: 7 to 40 hex digits")
  .describe("A checkpoint id from checkpoint_list (at least its first 7 characters).");

export function checkpointsFor(core: Core): Checkpoints {
  const c = checkpointsOf(core);
  if (!c)
    throw new CcbError("UNSUPPORTED", "Checkpoints are off in this ccb (CCB_CHECKPOINTS=off).", {
      hint: "Start ccb without CCB_CHECKPOINTS=off to record changes.",
    });
  return c;
}

/** A checkpoint with workspace-relative paths (no absolute path of this machine). */
export function checkpointView(core: Core, c: Checkpoint) {
  return {
    ...describeCheckpoint(c),
    files: c.files.map((f) => core.workspace.displayRel(c.root, f)),
  };
}
