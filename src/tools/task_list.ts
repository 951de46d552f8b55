import { z } from "zod";
import { defineTool, READ_ONLY } from "./kernel.ts";
import { displayPath } from "./shared/editor.ts";
import { runLine } from "./shared/task.ts";

export default defineTool({
  name: "task_list",
  title: "List tasks",
  description:
    "The workspace's tasks as the editor knows them: .vscode/tasks.json and the ones its extensions detect (npm scripts, " +
    "tsc builds, ...), by name and source, with their group and problem matchers; and the runs ccb started (running or " +
    "ended, with their exit code). Run one with task_run {name}. Needs the editor bridge.",
  input: z.object({}),
  annotations: READ_ONLY,
  needsBridge: true,
  async execute(_args, ctx) {
    ctx.core.bridge.require();
    const r = await ctx.core.bridge.call("tasks.list", {}, { signal: ctx.signal });
    const tasks = r.tasks.map((t) => ({ ...t, ...(t.folder ? { folder: displayPath(ctx.core, t.folder) } : {}) }));
    const lines = tasks.map(
      (t) =>
        `- "${t.name}" (source ${t.source}, type ${t.type}${t.group ? `, group ${t.group}` : ""}${t.background ? ", background" : ""})` +
        `${t.problemMatchers.length ? ` matchers ${t.problemMatchers.join(" ")}` : ""}` +
        `${t.inlineMatchers ? ` (${t.inlineMatchers} inline matcher(s) a run by ccb does not apply)` : ""}${t.detail ? `: ${t.detail}` : ""}` +
        `${t.notRunnable ? ` — ccb cannot run it: ${t.notRunnable}` : ""}`,
    );
    const runs = r.runs.map((run) => `- ${runLine(ctx.core, run)}`);
    return {
      text: [
        tasks.length ? `Tasks:\n${lines.join("\n")}` : "No tasks in the workspace (no tasks.json, nothing detected).",
        ...(runs.length ? [`Runs:\n${runs.join("\n")}`] : []),
      ].join("\n"),
      structured: { tasks, runs: r.runs.map((run) => ({ ...run, cwd: displayPath(ctx.core, run.cwd) })) },
    };
  },
});
