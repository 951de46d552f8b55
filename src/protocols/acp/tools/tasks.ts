import { workspaceTools } from "../../../tools/catalog.ts";
import { type AcpPresentation, type AcpTool, fromWorkspaceTool } from "./types.ts";

type Args = Record<string, unknown>;
type Category = ReturnType<AcpPresentation<Args>["access"]>["category"];

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/**
 * The ACP presentation of the task tools (same definitions as the MCP tools of the catalog).
 * Running a task runs its command: "execute", which asks as a command does, per task (an "always"
 * remembers that task); waiting again for a run, listing and stopping do not start anything new.
 */
const PRESENTATION: Record<
  string,
  { kind: AcpPresentation<Args>["kind"]; category(i: Args): Category; title(i: Args): string }
> = {
  task_list: { kind: "read", category: () => "read", title: () => "List tasks" },
  task_run: {
    kind: "execute",
    category: (i) => (str(i.name) ? "execute" : "read"),
    title: (i) => (str(i.name) ? `Run task ${str(i.name)}` : `Wait for task run ${str(i.execution)}`),
  },
  task_stop: { kind: "execute", category: () => "other", title: (i) => `Stop task run ${str(i.execution)}` },
};

export const TASK_TOOLS: readonly AcpTool[] = workspaceTools
  .filter((t) => t.name.startsWith("task_"))
  .map((def) => {
    const p = PRESENTATION[def.name];
    if (!p) throw new Error(`No ACP presentation for ${def.name}`);
    return fromWorkspaceTool(def, {
      kind: p.kind,
      title: p.title,
      locations: () => [],
      access: (i) => {
        const category = p.category(i);
        return {
          category,
          ruleKey: category === "execute" ? `task_run:${str(i.source)}:${str(i.name)}` : "task",
        };
      },
    });
  });
