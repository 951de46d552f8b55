import type { WorkspaceTool } from "../../tools/catalog.ts";
import { type AcpPresentation, type AcpTool, type CatalogInput, presentCatalog } from "./types.ts";

type CheckpointToolName = Extract<WorkspaceTool["name"], `checkpoint_${string}`>;

/**
 * The ACP presentation of the checkpoint tools (the catalog's): listing and diffing read; an undo
 * or restore rewrites files, so it asks as an edit does outside the edit-accepting modes.
 */
const PRESENTATION: { [N in CheckpointToolName]: AcpPresentation<CatalogInput<N>> } = {
  checkpoint_list: {
    kind: "read",
    title: (i) => (i.agent ? `List changes of ${i.agent}` : "List recorded changes"),
    locations: () => [],
    access: () => ({ category: "read", ruleKey: "checkpoint" }),
  },
  checkpoint_diff: {
    kind: "read",
    title: (i) => `Diff of checkpoint ${i.id.slice(0, 12)}`,
    locations: () => [],
    access: () => ({ category: "read", ruleKey: "checkpoint" }),
  },
  checkpoint_restore: {
    kind: "edit",
    title: (i) =>
      i.mode === "restore"
        ? `Restore the workspace to checkpoint ${i.id?.slice(0, 12) ?? ""}`
        : `Undo ${i.id ? `checkpoint ${i.id.slice(0, 12)}` : i.call ? `call ${i.call}` : i.session ? `session ${i.session}` : `changes of ${i.agent ?? ""}`}`,
    locations: () => [],
    access: () => ({ category: "edit", ruleKey: "checkpoint_restore" }),
  },
};

export const CHECKPOINT_TOOLS: readonly AcpTool[] = presentCatalog(PRESENTATION);
