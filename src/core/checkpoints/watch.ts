import { type FSWatcher, watch } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { CheckpointStore } from "./store.ts";

/**
 * Told when any ccb process of the workspace records a checkpoint: a record moves a segment ref
 * (`refs/ckpt/<seg>` of a root's shadow repository, store.ts), which git writes as a new file
 * renamed into place, so a watch on that folder sees every record, whichever process made it, and
 * nothing else (a flush that found no change writes no ref). Used by the person's view to push a
 * new change set to every tab (src/workbench/checkpoints-view.ts). A pruning `gc` packs the refs
 * (a removal): told too, harmless. Resolves to the function that stops watching.
 */
export async function watchRecords(store: CheckpointStore, onRecorded: () => void): Promise<() => void> {
  await store.ready();
  const watchers: FSWatcher[] = [];
  const stop = () => {
    for (const w of watchers) w.close();
  };
  try {
    for (const repo of store.repos) {
      const dir = join(repo.gitDir, "refs", "ckpt");
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const w = watch(dir, { persistent: false }, (_event, name) => {
        if (!name || !String(name).endsWith(".lock")) onRecorded();
      });
      w.on("error", () => undefined);
      watchers.push(w);
    }
  } catch (err) {
    stop();
    throw err;
  }
  return stop;
}
