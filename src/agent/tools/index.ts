import { bashTool } from "./bash.ts";
import { CHECKPOINT_TOOLS } from "./checkpoints.ts";
import { DEBUG_TOOLS } from "./debug.ts";
import { editTool } from "./edit.ts";
import { EDITOR_TOOLS } from "./editor.ts";
import { gitTool } from "./git.ts";
import { globTool } from "./glob.ts";
import { grepTool } from "./grep.ts";
import { exitPlanTool } from "./plan.ts";
import { readTool } from "./read.ts";
import { TASK_TOOLS } from "./tasks.ts";
import { todoTool } from "./todo.ts";
import type { AcpTool } from "./types.ts";
import { writeTool } from "./write.ts";

/** The agent's built-in tools, in the order offered to the model. */
export const BUILTIN_TOOLS: readonly AcpTool[] = [
  readTool,
  writeTool,
  editTool,
  globTool,
  grepTool,
  bashTool,
  gitTool,
  todoTool,
  exitPlanTool,
];

export { CHECKPOINT_TOOLS, DEBUG_TOOLS, EDITOR_TOOLS, TASK_TOOLS };

/**
 * Every tool of the agent: the built-in ones, then the editor's language tools, debug tools and task tools. Those have
 * `needsBridge: true` (the catalog's): a session offers them only while `core.bridge.status().connected`.
 */
export const AGENT_TOOLS: readonly AcpTool[] = [
  ...BUILTIN_TOOLS,
  ...EDITOR_TOOLS,
  ...DEBUG_TOOLS,
  ...TASK_TOOLS,
  ...CHECKPOINT_TOOLS,
];
