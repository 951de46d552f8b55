import type { ToolCallLocation } from "@agentclientprotocol/sdk/unstable";
import { workspaceTools } from "../../../tools/catalog.ts";
import type { AnyToolDef } from "../../../tools/kernel.ts";
import { type AcpPresentation, type AcpTool, absPath, fromWorkspaceTool } from "./types.ts";

type Args = Record<string, unknown>;

function catalogTool(name: string): AnyToolDef {
  const def = workspaceTools.find((t) => t.name === name);
  if (!def) throw new Error(`The tool catalog has no ${name}`);
  return def;
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** "path:line:column" of a `{path, position}` input (1-based, as the tools take them). */
function at(i: Args): string {
  const p = i.position as { line?: number; column?: number } | undefined;
  return p ? `${str(i.path)}:${p.line}:${p.column}` : str(i.path);
}

function fileLocation(i: Args, cwd: string): ToolCallLocation[] {
  if (!str(i.path)) return [];
  const line = (i.position as { line?: number } | undefined)?.line;
  return [{ path: absPath(cwd, str(i.path)), ...(line ? { line } : {}) }];
}

const reads = (kind: AcpPresentation<Args>["kind"], title: (i: Args) => string): AcpPresentation<Args> => ({
  kind,
  title,
  locations: (i, ctx) => fileLocation(i, ctx.cwd),
  access: () => ({ category: "read", ruleKey: "language" }),
});

/** A refactor tool: it changes files through the workbench (an edit, asked for as edits are). */
const refactors = (title: (i: Args) => string): AcpPresentation<Args> => ({
  kind: "edit",
  title,
  locations: (i, ctx) => fileLocation(i, ctx.cwd),
  // a rename preview (no `apply`) changes nothing
  access: (i) => ({ category: "newName" in i && !i.apply ? "read" : "edit", ruleKey: "refactor" }),
});

/**
 * The editor's language tools for the agent, the same definitions as the MCP tools of the catalog.
 * Each is marked `needsBridge`: offer it to the model only while the editor bridge is connected.
 */
export const EDITOR_TOOLS: readonly AcpTool[] = [
  fromWorkspaceTool(
    catalogTool("language_definition"),
    reads("search", (i) => `Go to definition at ${at(i)}`),
  ),
  fromWorkspaceTool(
    catalogTool("language_references"),
    reads("search", (i) => `Find references of ${at(i)}`),
  ),
  fromWorkspaceTool(
    catalogTool("language_hover"),
    reads("read", (i) => `Hover at ${at(i)}`),
  ),
  fromWorkspaceTool(
    catalogTool("language_document_symbols"),
    reads("read", (i) => `Outline ${str(i.path)}`),
  ),
  fromWorkspaceTool(
    catalogTool("language_workspace_symbols"),
    reads("search", (i) => `Find symbol "${str(i.query)}"`),
  ),
  fromWorkspaceTool(
    catalogTool("diagnostics_get"),
    reads("read", (i) => (str(i.path) ? `Diagnostics of ${str(i.path)}` : "Diagnostics")),
  ),
  // deeper navigation
  fromWorkspaceTool(
    catalogTool("language_implementations"),
    reads("search", (i) => `Find implementations of ${at(i)}`),
  ),
  fromWorkspaceTool(
    catalogTool("language_type_definition"),
    reads("search", (i) => `Go to type definition at ${at(i)}`),
  ),
  fromWorkspaceTool(
    catalogTool("language_signature_help"),
    reads("read", (i) => `Signature help at ${at(i)}`),
  ),
  fromWorkspaceTool(
    catalogTool("language_call_hierarchy"),
    reads("search", (i) => `Call hierarchy of ${at(i)}`),
  ),
  fromWorkspaceTool(
    catalogTool("language_type_hierarchy"),
    reads("search", (i) => `Type hierarchy of ${at(i)}`),
  ),
  // refactor: edits through the workbench
  fromWorkspaceTool(
    catalogTool("refactor_rename"),
    refactors((i) =>
      i.apply ? `Rename ${at(i)} to ${str(i.newName)}` : `Preview renaming ${at(i)} to ${str(i.newName)}`,
    ),
  ),
  fromWorkspaceTool(catalogTool("refactor_move"), {
    kind: "move",
    title: (i) => `${i.apply ? "Move" : "Preview moving"} ${str(i.from)} to ${str(i.to)}, updating imports`,
    locations: (i, ctx) => (str(i.from) ? [{ path: absPath(ctx.cwd, str(i.from)) }] : []),
    // a preview (no `apply`) changes nothing
    access: (i) => ({ category: i.apply ? "edit" : "read", ruleKey: "refactor" }),
  }),
  fromWorkspaceTool(
    catalogTool("refactor_code_actions"),
    reads("read", (i) => `Code actions for ${str(i.path)}`),
  ),
  fromWorkspaceTool(
    catalogTool("refactor_apply_code_action"),
    refactors((i) => `Apply code action ${str(i.id)}`),
  ),
  fromWorkspaceTool(
    catalogTool("refactor_source_action"),
    refactors((i) => `${str(i.kind) || "Organize imports"} in ${str(i.path)}`),
  ),
  fromWorkspaceTool(
    catalogTool("refactor_format"),
    refactors((i) => `Format ${str(i.path)}`),
  ),
];
