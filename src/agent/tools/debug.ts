import type { ToolCallLocation } from "@agentclientprotocol/sdk/unstable";
import type { WorkspaceTool } from "../../tools/catalog.ts";
import { type AcpPresentation, type AcpTool, absPath, type CatalogInput, presentCatalog } from "./types.ts";

/** The catalog's debug tools: every one of them is the agent's too. */
type DebugToolName = Extract<WorkspaceTool["name"], `debug_${string}`>;
type Category = ReturnType<AcpPresentation<unknown>["access"]>["category"];

/** What the shared parts read of a debug tool's input (each tool has some of these, or none). */
interface DebugInput {
  breakpoints?: readonly { path: string; line: number }[] | undefined;
  name?: string | undefined;
  expression?: string | undefined;
  session?: string | undefined;
  configuration?: unknown;
}

function breakpointLocations(i: DebugInput, cwd: string): ToolCallLocation[] {
  return (i.breakpoints ?? []).filter((b) => b.path).map((b) => ({ path: absPath(cwd, b.path), line: b.line || 1 }));
}

/**
 * Starting a session runs a program, and evaluating runs code in it: "execute", which asks as a
 * command does; joining a session the person started asks too (per session: it exposes their
 * program); driving a started session (breakpoints, steps, stop) asks once per session ("always"
 * remembers "debug"); reading its state never asks.
 */
function debug<N extends DebugToolName>(
  name: N,
  kind: AcpPresentation<unknown>["kind"],
  category: Category,
  title: (i: CatalogInput<N>) => string,
): AcpPresentation<CatalogInput<N>> {
  return {
    kind,
    title,
    locations: (i, ctx) => breakpointLocations(i as DebugInput, ctx.cwd),
    access: (input) => {
      const i = input as DebugInput;
      return {
        category,
        ruleKey:
          category === "execute"
            ? `${name}:${i.name || i.expression || i.session || JSON.stringify(i.configuration ?? {})}`
            : "debug",
      };
    },
  };
}

/**
 * The ACP presentation of the debug tools (same definitions as the MCP tools of the catalog), typed
 * against each tool's input: a debug tool of the catalog without a row here does not compile.
 */
const PRESENTATION: { [N in DebugToolName]: AcpPresentation<CatalogInput<N>> } = {
  debug_configurations: debug("debug_configurations", "read", "read", () => "List launch configurations"),
  debug_start: debug("debug_start", "execute", "execute", (i) => {
    const program = i.configuration?.program;
    return `Debug ${i.name || (typeof program === "string" && program) || "a program"}`;
  }),
  debug_set_breakpoints: debug("debug_set_breakpoints", "edit", "other", () => "Set breakpoints"),
  debug_clear_breakpoints: debug("debug_clear_breakpoints", "edit", "other", () => "Clear breakpoints"),
  debug_status: debug("debug_status", "read", "read", () => "Debug sessions and breakpoints"),
  debug_join: debug("debug_join", "other", "execute", (i) => `Join debug session ${i.session}`),
  debug_wait: debug("debug_wait", "read", "read", () => "Wait for the debugger"),
  debug_stack: debug("debug_stack", "read", "read", () => "Call stack"),
  debug_variables: debug("debug_variables", "read", "read", () => "Variables"),
  debug_evaluate: debug("debug_evaluate", "execute", "execute", (i) => `Evaluate ${i.expression}`),
  debug_control: debug("debug_control", "execute", "other", (i) => `Debugger: ${i.action}`),
  debug_output: debug("debug_output", "read", "read", () => "Debug console output"),
  debug_stop: debug("debug_stop", "execute", "other", () => "Stop debugging"),
};

export const DEBUG_TOOLS: readonly AcpTool[] = presentCatalog(PRESENTATION);
