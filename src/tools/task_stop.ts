import { z } from "zod";
import { defineTool } from "./kernel.ts";
import { DEBUG_RUN } from "./shared/debug.ts";
import { displayPath } from "./shared/editor.ts";
import { ExecutionInput, runLine } from "./shared/task.ts";

export default defineTool({
  name: "task_stop",
  title: "Stop a task",
  description:
    "Stop a task run that is still running (its execution id from task_run or task_list): the task ends in the " +
    "workbench and its process group gets SIGTERM, then SIGKILL. Needs the editor bridge.",
  input: z.object({ execution: ExecutionInput }),
  annotations: { ...DEBUG_RUN, openWorldHint: false },
  needsBridge: true,
  async execute(args, ctx) {
    ctx.core.bridge.require();
    const r = await ctx.core.bridge.call("tasks.stop", { execution: args.execution }, { signal: ctx.signal });
    return {
      text: r.stopped
        ? `Stopping task ${runLine(ctx.core, r.run)}. task_run {"execution":"${args.execution}"} reads how it ended.`
        : `Task ${runLine(ctx.core, r.run)}: it was not running.`,
      structured: { stopped: r.stopped, ...r.run, cwd: displayPath(ctx.core, r.run.cwd) },
    };
  },
});
