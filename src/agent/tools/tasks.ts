import type { WorkspaceTool } from "../../tools/catalog.ts";
import { type AcpPresentation, type AcpTool, type CatalogInput, presentCatalog } from "./types.ts";

type TaskToolName = Extract<WorkspaceTool["name"], `task_${string}`>;

/**
 * The ACP presentation of the task tools (same definitions as the MCP tools of the catalog), typed
 * against each tool's input: a task tool of the catalog without a row here does not compile.
 * Running a task runs its command: "execute", which asks as a command does, per task (an "always"
 * remembers that task); waiting again for a run, listing and stopping do not start anything new.
 */
const PRESENTATION: { [N in TaskToolName]: AcpPresentation<CatalogInput<N>> } = {
  task_list: {
    kind: "read",
    title: () => "List tasks",
    locations: () => [],
    access: () => ({ category: "read", ruleKey: "task" }),
  },
  task_run: {
    kind: "execute",
    title: (i) => (i.name ? `Run task ${i.name}` : `Wait for task run ${i.execution ?? ""}`),
    locations: () => [],
    access: (i) =>
      i.name
        ? { category: "execute", ruleKey: `task_run:${i.source ?? ""}:${i.name}` }
        : { category: "read", ruleKey: "task" },
  },
  task_stop: {
    kind: "execute",
    title: (i) => `Stop task run ${i.execution}`,
    locations: () => [],
    access: () => ({ category: "other", ruleKey: "task" }),
  },
};

export const TASK_TOOLS: readonly AcpTool[] = presentCatalog(PRESENTATION);
