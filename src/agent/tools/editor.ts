import type { ToolCallLocation } from "@agentclientprotocol/sdk/unstable";
import type { WorkspaceTool } from "../../tools/catalog.ts";
import { type AcpPresentation, type AcpTool, absPath, type CatalogInput, presentCatalog } from "./types.ts";

/** The catalog's editor tools the agent has: the language services, diagnostics and refactors. */
type EditorToolName = Extract<WorkspaceTool["name"], `language_${string}` | `refactor_${string}` | "diagnostics_get">;

/** What the presentations below read of an input: a file and, for most, a position on a symbol. */
interface At {
  path?: string | undefined;
  position?: { line: number; column: number } | undefined;
  [field: string]: unknown;
}

/** "path:line:column" of a `{path, position}` input (1-based, as the tools take them). */
function at(i: At): string {
  return i.position ? `${i.path ?? ""}:${i.position.line}:${i.position.column}` : (i.path ?? "");
}

function fileLocation(i: At, cwd: string): ToolCallLocation[] {
  if (!i.path) return [];
  const line = i.position?.line;
  return [{ path: absPath(cwd, i.path), ...(line ? { line } : {}) }];
}

const reads = <I extends At>(kind: AcpPresentation<I>["kind"], title: (i: I) => string): AcpPresentation<I> => ({
  kind,
  title,
  locations: (i, ctx) => fileLocation(i, ctx.cwd),
  access: () => ({ category: "read", ruleKey: "language" }),
});

/** A refactor tool: it changes files through the workbench (an edit, asked for as edits are). */
const refactors = <I extends At & { apply?: boolean | undefined }>(title: (i: I) => string): AcpPresentation<I> => ({
  kind: "edit",
  title,
  locations: (i, ctx) => fileLocation(i, ctx.cwd),
  // a rename preview (no `apply`) changes nothing
  access: (i) => ({ category: "newName" in i && !i.apply ? "read" : "edit", ruleKey: "refactor" }),
});

/**
 * How the client shows each editor tool, typed against the tool's own input: an editor tool of the
 * catalog without a row here does not compile. The order is the order the model is offered them.
 */
const PRESENTATION: { [N in EditorToolName]: AcpPresentation<CatalogInput<N>> } = {
  language_definition: reads("search", (i) => `Go to definition at ${at(i)}`),
  language_references: reads("search", (i) => `Find references of ${at(i)}`),
  language_hover: reads("read", (i) => `Hover at ${at(i)}`),
  language_document_symbols: reads("read", (i) => `Outline ${i.path}`),
  language_workspace_symbols: reads("search", (i) => `Find symbol "${i.query}"`),
  diagnostics_get: reads("read", (i) => (i.path ? `Diagnostics of ${i.path}` : "Diagnostics")),
  // deeper navigation
  language_implementations: reads("search", (i) => `Find implementations of ${at(i)}`),
  language_type_definition: reads("search", (i) => `Go to type definition at ${at(i)}`),
  language_signature_help: reads("read", (i) => `Signature help at ${at(i)}`),
  language_call_hierarchy: reads("search", (i) => `Call hierarchy of ${at(i)}`),
  language_type_hierarchy: reads("search", (i) => `Type hierarchy of ${at(i)}`),
  // refactor: edits through the workbench
  refactor_rename: refactors((i) =>
    i.apply ? `Rename ${at(i)} to ${i.newName}` : `Preview renaming ${at(i)} to ${i.newName}`,
  ),
  refactor_move: {
    kind: "move",
    title: (i) => `${i.apply ? "Move" : "Preview moving"} ${i.from} to ${i.to}, updating imports`,
    locations: (i, ctx) => (i.from ? [{ path: absPath(ctx.cwd, i.from) }] : []),
    // a preview (no `apply`) changes nothing
    access: (i) => ({ category: i.apply ? "edit" : "read", ruleKey: "refactor" }),
  },
  refactor_code_actions: reads("read", (i) => `Code actions for ${i.path}`),
  refactor_apply_code_action: refactors((i) => `Apply code action ${i.id}`),
  refactor_source_action: refactors((i) => `${i.kind || "Organize imports"} in ${i.path}`),
  refactor_format: refactors((i) => `Format ${i.path}`),
};

/**
 * The editor's language tools for the agent, the same definitions as the MCP tools of the catalog.
 * Each is marked `needsBridge`: offer it to the model only while the editor bridge is connected.
 */
export const EDITOR_TOOLS: readonly AcpTool[] = presentCatalog(PRESENTATION);
