import type { ToolCallLocation } from "@agentclientprotocol/sdk/unstable";
import { workspaceTools } from "../../../tools/catalog.ts";
import { type AcpPresentation, type AcpTool, absPath, fromWorkspaceTool } from "./types.ts";

type Args = Record<string, unknown>;
type Category = ReturnType<AcpPresentation<Args>["access"]>["category"];

const str = (v: unknown): string => (typeof v === "string" ? v : "");

function breakpointLocations(i: Args, cwd: string): ToolCallLocation[] {
  const bps = Array.isArray(i.breakpoints) ? (i.breakpoints as Args[]) : [];
  return bps.filter((b) => str(b.path)).map((b) => ({ path: absPath(cwd, str(b.path)), line: Number(b.line) || 1 }));
}

/**
 * The ACP presentation of the debug tools (same definitions as the MCP tools of the catalog).
 * Starting a session runs a program, and evaluating runs code in it: "execute", which asks as a
 * command does; joining a session the person started asks too (per session: it exposes their
 * program); driving a started session (breakpoints, steps, stop) asks once per session ("always"
 * remembers "debug"); reading its state never asks.
 */
const PRESENTATION: Record<
  string,
  { kind: AcpPresentation<Args>["kind"]; category: Category; title(i: Args): string }
> = {
  debug_configurations: { kind: "read", category: "read", title: () => "List launch configurations" },
  debug_start: {
    kind: "execute",
    category: "execute",
    title: (i) => `Debug ${str(i.name) || str((i.configuration as Args | undefined)?.program) || "a program"}`,
  },
  debug_set_breakpoints: { kind: "edit", category: "other", title: () => "Set breakpoints" },
  debug_clear_breakpoints: { kind: "edit", category: "other", title: () => "Clear breakpoints" },
  debug_status: { kind: "read", category: "read", title: () => "Debug sessions and breakpoints" },
  debug_join: { kind: "other", category: "execute", title: (i) => `Join debug session ${str(i.session)}` },
  debug_wait: { kind: "read", category: "read", title: () => "Wait for the debugger" },
  debug_stack: { kind: "read", category: "read", title: () => "Call stack" },
  debug_variables: { kind: "read", category: "read", title: () => "Variables" },
  debug_evaluate: { kind: "execute", category: "execute", title: (i) => `Evaluate ${str(i.expression)}` },
  debug_control: { kind: "execute", category: "other", title: (i) => `Debugger: ${str(i.action)}` },
  debug_output: { kind: "read", category: "read", title: () => "Debug console output" },
  debug_stop: { kind: "execute", category: "other", title: () => "Stop debugging" },
};

export const DEBUG_TOOLS: readonly AcpTool[] = workspaceTools
  .filter((t) => t.name.startsWith("debug_"))
  .map((def) => {
    const p = PRESENTATION[def.name];
    if (!p) throw new Error(`No ACP presentation for ${def.name}`);
    return fromWorkspaceTool(def, {
      kind: p.kind,
      title: p.title,
      locations: (i, ctx) => breakpointLocations(i, ctx.cwd),
      access: (i) => ({
        category: p.category,
        ruleKey:
          p.category === "execute"
            ? `${def.name}:${str(i.name) || str(i.expression) || str(i.session) || JSON.stringify(i.configuration ?? {})}`
            : "debug",
      }),
    });
  });
